//! What-if forks inside the TUI: the work a worker thread does (never the UI
//! thread), and what it hands back for the compare view.

use asof_core::engine::answers::Steps;
use asof_core::engine::{self, Replay};
use asof_core::model::Dataset;
use asof_store::fork::diff::Diff;
use asof_store::fork::whatif::{Source, WhatIfError};
use asof_store::fork::{self, PolicyReport};
use asof_store::query::timeline::Timeline;
use asof_store::store::{Store, StoreError};

/// One (agent, topic)'s answers in parent and fork, for the compare view's lanes.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// The agent.
    pub agent: String,
    /// The topic.
    pub topic: String,
    /// The parent's working answers.
    pub parent: Steps,
    /// The fork's.
    pub fork: Steps,
}

/// A finished fork, ready to show.
#[derive(Debug, Clone)]
pub struct ForkResult {
    /// The evidence it went without (comma-separated).
    pub removed: String,
    /// The fork, opened for scrubbing.
    pub timeline: Timeline,
    /// What the policy did.
    pub report: PolicyReport,
    /// How its answers differ from the parent's.
    pub diff: Diff,
    /// One per (agent, topic) that differs.
    pub lanes: Vec<Lane>,
    /// The parent log's first and last recorded instants.
    pub span: (i64, i64),
    /// The fork's store file (in a temporary directory the timeline keeps).
    pub path: std::path::PathBuf,
}

/// What a what-if asked in the TUI goes without: one evidence item (`w`),
/// or everything a review rejected (`W`), with the findings that chose them
/// and the review's name for the fork's lineage.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ForkRequest {
    /// The evidence to go without.
    pub evidence: Vec<String>,
    /// The review's findings that chose them (for `W`).
    pub rejected: Vec<asof_store::fork::Rejected>,
    /// The review whose rejections chose the evidence (name and SHA-256).
    pub review: Option<String>,
}

impl ForkRequest {
    /// Without one evidence item.
    pub fn without(id: &str) -> ForkRequest {
        ForkRequest {
            evidence: vec![id.to_owned()],
            ..ForkRequest::default()
        }
    }

    /// The ids, as a fork's name says them: `E15` or `E15,E21`.
    pub fn removed(&self) -> String {
        self.evidence.join(",")
    }
}

/// Forks the log held in memory (a dataset, the demo, a trace; `replay` is its
/// replay) without one evidence item. Runs on a worker thread.
/// `label` names the source as the user did and `sha256` is its bytes'
/// SHA-256: the fork's lineage records exactly what `asof fork` would.
pub fn run_fork(
    log: &Dataset,
    replay: &Replay,
    label: &str,
    sha256: &str,
    evidence: &str,
) -> Result<ForkResult, WhatIfError> {
    run_fork_for(log, replay, label, sha256, &ForkRequest::without(evidence))
}

/// [`run_fork`] for any [`ForkRequest`].
pub fn run_fork_for(
    log: &Dataset,
    replay: &Replay,
    label: &str,
    sha256: &str,
    request: &ForkRequest,
) -> Result<ForkResult, WhatIfError> {
    let parent = Store::in_memory(label, log, replay)?;
    let source = Source::Log {
        store: &parent,
        log,
        sha256: sha256.to_owned(),
    };
    fork_then_read(&parent, source, label, request)
}

/// Forks the store file at `parent_path` without one evidence item the way
/// `asof fork` does — a copy that replays only the pairs citing it — and reads
/// the fork back. Needs neither the parent's log nor a whole replay in memory
/// (a million-event store: seconds, not a minute). Runs on a worker thread.
pub fn run_fork_of_store(
    parent_path: &std::path::Path,
    label: &str,
    evidence: &str,
) -> Result<ForkResult, WhatIfError> {
    run_fork_of_store_for(parent_path, label, &ForkRequest::without(evidence))
}

/// [`run_fork_of_store`] for any [`ForkRequest`].
pub fn run_fork_of_store_for(
    parent_path: &std::path::Path,
    label: &str,
    request: &ForkRequest,
) -> Result<ForkResult, WhatIfError> {
    let parent = Store::open(parent_path)?;
    let source = Source::File {
        store: &parent,
        path: parent_path,
    };
    fork_then_read(&parent, source, label, request)
}

/// The shared what-if (`fork::whatif::fork`) into a temporary store, read back
/// into a timeline, with one compare-view lane per pair whose answers can differ.
fn fork_then_read(
    parent: &Store,
    source: Source<'_>,
    label: &str,
    request: &ForkRequest,
) -> Result<ForkResult, WhatIfError> {
    let evidence = request.removed();
    let dir = tempfile::tempdir().map_err(|source| StoreError::Io {
        path: std::env::temp_dir(),
        source,
    })?;
    let path = dir.path().join("fork.db");
    let made = fork::whatif::fork_with(
        source,
        &request.evidence,
        request.rejected.clone(),
        request.review.clone(),
        &path,
        false,
    )?;
    let fork_store = Store::open(&path)?;
    let steps = |store: &Store, (agent, topic): &(String, String)| -> Result<Steps, StoreError> {
        let versions = asof_store::query::versions_of(store, topic, Some(agent))?;
        Ok(asof_core::engine::answers::steps_of(
            &versions.iter().map(|b| &b.version).collect::<Vec<_>>(),
        ))
    };
    let mut lanes = Vec::new();
    for pair in &made.pairs {
        lanes.push(Lane {
            agent: pair.0.clone(),
            topic: pair.1.clone(),
            parent: steps(parent, pair)?,
            fork: steps(&fork_store, pair)?,
        });
    }
    lanes.sort_by_key(|l| (parent.topic_rank(&l.topic), parent.agent_rank(&l.agent)));
    let span = asof_store::query::recorded_span(parent)?.unwrap_or((0, 0));
    // The fork's store stays in its temporary directory while its timeline
    // reads rows from it.
    let mut timeline = Timeline::load_in(fork_store, dir)?;
    timeline.label = match &request.review {
        Some(review) => format!(
            "{label} without {evidence}, what review {} rejected (what-if fork)",
            asof_store::fork::label::review_name(review)
        ),
        None => format!("{label} without {evidence} (what-if fork)"),
    };
    Ok(ForkResult {
        removed: evidence,
        timeline,
        report: made.report,
        diff: made.diff,
        lanes,
        span,
        path,
    })
}

/// Copies the fork's store at `fork` to a new store at `to` (`s` in the TUI),
/// atomically: `to` must not exist, and nothing is left there on failure.
pub fn save_fork(fork: &std::path::Path, to: &std::path::Path) -> Result<(), StoreError> {
    asof_store::store::copy_store(fork, to)
}

/// Reads the parent's log (on a worker thread, when first needed).
pub type LoadLog = Box<dyn Fn() -> Result<Dataset, StoreError> + Send + Sync>;

/// The parent's log and replay, read and computed once per session by whichever
/// worker needs them first, and shared by the influence ranking and every fork.
/// Nothing is read at start-up: a million-event log costs memory and seconds
/// that a reviewer who only scrubs never needs.
pub struct Parent {
    load: LoadLog,
    log: std::sync::OnceLock<Result<Dataset, String>>,
    replay: std::sync::OnceLock<Replay>,
}

impl Parent {
    /// The parent reading its log with `load` when first asked.
    pub fn new(load: LoadLog) -> Parent {
        Parent {
            load,
            log: std::sync::OnceLock::new(),
            replay: std::sync::OnceLock::new(),
        }
    }

    /// The log and its replay, or why the log could not be read.
    pub fn get(&self) -> Result<(&Dataset, &Replay), WhatIfError> {
        let log = self
            .log
            .get_or_init(|| (self.load)().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| {
                WhatIfError::Store(StoreError::Damaged {
                    path: "the parent's log".into(),
                    reason: e.clone(),
                })
            })?;
        let replay = self
            .replay
            .get_or_init(|| engine::replay(&log.header, &log.events));
        Ok((log, replay))
    }
}

/// The compare view's words, built here so that the view and the scrolling
/// read the same text: the first line, what follows the difference marks,
/// the legend's ends and each lane's time to truth.
pub const DIFFERS: &str = "  ^ differs";
/// What the legend starts with.
pub const LEGEND_HEAD: &str = "  claims: ";
/// What the legend ends with.
pub const LEGEND_TAIL: &str = "· no answer";
/// The head of each lane's time to the truth.
pub const TRUTH_HEAD: &str = "  right from: ";

/// One legend item after its glyph.
pub fn legend_item(claim: &str) -> String {
    format!("{claim}   ")
}

/// "removed E15 · dropped B19, B20 · scaled none · …": what the policy did.
pub fn report_line(fork: &ForkResult) -> String {
    let list = |ids: &[String]| {
        if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.join(", ")
        }
    };
    let r = &fork.report;
    let scaled: Vec<String> = r
        .scaled
        .iter()
        .map(|s| format!("{} {:.2}→{:.2}", s.assertion, s.from, s.to))
        .collect();
    format!(
        "removed {} · dropped {} · scaled {} · dropped retractions {} · no-op retractions {}",
        fork.removed,
        list(&r.dropped),
        list(&scaled),
        list(&r.dropped_retractions),
        list(&r.noop_retractions)
    )
}

/// "parent 03-05 09:15 · fork 03-03 10:30 (1d 22h sooner) · time wrong: …",
/// when the lane's topic has a resolution.
pub fn truth_line(fork: &ForkResult, lane: &Lane) -> Option<String> {
    let (_, p, f) = fork
        .diff
        .truth
        .iter()
        .find(|(pair, _, _)| pair.0 == lane.agent && pair.1 == lane.topic)?;
    let converged = |t: Option<i64>| t.map_or("never".to_owned(), asof_core::time::format_short);
    let shift = match (p.converged_at, f.converged_at) {
        (Some(a), Some(b)) if b < a => {
            format!(" ({} sooner)", asof_core::time::format_duration(a - b))
        }
        (Some(a), Some(b)) if b > a => {
            format!(" ({} later)", asof_core::time::format_duration(b - a))
        }
        _ => String::new(),
    };
    Some(format!(
        "parent {} · fork {}{shift} · time wrong: {} → {}",
        converged(p.converged_at),
        converged(f.converged_at),
        asof_core::time::format_duration(p.time_wrong_ms * 1000),
        asof_core::time::format_duration(f.time_wrong_ms * 1000),
    ))
}
