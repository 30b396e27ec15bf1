//! What-if forks inside the TUI: the work a worker thread does (never the UI
//! thread), and what it hands back for the compare view.

use crate::engine::{self, Replay};
use crate::fork::diff::{Diff, Steps, answers_of, compare_answers};
use crate::fork::{self, PolicyReport};
use crate::model::Dataset;
use crate::query::timeline::Timeline;
use crate::store::Store;

/// One (agent, topic)'s answers in parent and fork, for the compare view's lanes.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    pub agent: String,
    pub topic: String,
    pub parent: Steps,
    pub fork: Steps,
}

/// A finished fork, ready to show.
#[derive(Debug, Clone)]
pub struct ForkResult {
    pub removed: String,
    pub timeline: Timeline,
    pub report: PolicyReport,
    pub diff: Diff,
    pub lanes: Vec<Lane>,
    /// The parent log's first and last recorded instants.
    pub span: (i64, i64),
}

/// Forks `log` (whose replay is `parent`) without one evidence item, in memory.
/// Runs on a worker thread.
pub fn run_fork(
    log: &Dataset,
    parent: &Replay,
    label: &str,
    evidence: &str,
) -> Result<ForkResult, String> {
    let forked = fork::fork(log, &[evidence.to_owned()]).map_err(|e| e.to_string())?;
    let span = log.span().unwrap_or((0, 0));
    let a = answers_of(parent.versions.iter());
    let b = answers_of(forked.replay.versions.iter());
    let diff = compare_answers(&log.header, span, &a, &b);
    let mut lanes = Vec::new();
    let shown = diff
        .divergence
        .iter()
        .map(|(pair, _)| pair)
        .chain(diff.truth.iter().map(|(pair, _, _)| pair));
    for pair in shown {
        if lanes
            .iter()
            .any(|l: &Lane| l.agent == pair.0 && l.topic == pair.1)
        {
            continue;
        }
        lanes.push(Lane {
            agent: pair.0.clone(),
            topic: pair.1.clone(),
            parent: a.get(pair).cloned().unwrap_or_default(),
            fork: b.get(pair).cloned().unwrap_or_default(),
        });
    }
    let fork_label = format!("{label} without {evidence} (what-if fork)");
    let store = Store::in_memory(&fork_label, &forked.dataset, &forked.replay)
        .map_err(|e| e.to_string())?;
    let timeline = Timeline::load(&store).map_err(|e| e.to_string())?;
    Ok(ForkResult {
        removed: evidence.to_owned(),
        timeline,
        report: forked.report,
        diff,
        lanes,
        span,
    })
}

/// Forks the store file at `parent_path` without one evidence item the way
/// `asof fork` does — a copy that replays only the pairs citing it — into a
/// temporary file, and reads that into a timeline. Needs neither the parent's log
/// nor a whole replay in memory (a million-event store: seconds, not a minute).
/// The compare view's lanes are the replayed pairs, the only ones that can differ.
/// Runs on a worker thread.
pub fn run_fork_of_store(
    parent_path: &std::path::Path,
    label: &str,
    evidence: &str,
) -> Result<ForkResult, String> {
    let parent = Store::open(parent_path).map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let path = dir.path().join("fork.db");
    let removed = [evidence.to_owned()];
    let made = fork::copy::fork_file(&parent, parent_path, &removed, &path, false, |sha, r| {
        fork::lineage(&parent, sha, r)
    })
    .map_err(|e| match e {
        fork::copy::CopyError::Fork(e) => e.to_string(),
        fork::copy::CopyError::Store(e) => e.to_string(),
    })?;
    let fork_store = Store::open(&path).map_err(|e| e.to_string())?;
    let steps = |store: &Store, (agent, topic): &(String, String)| -> Result<Steps, String> {
        let versions =
            crate::query::versions_of(store, topic, Some(agent)).map_err(|e| e.to_string())?;
        Ok(crate::fork::diff::steps_of(
            &versions.iter().map(|b| &b.version).collect::<Vec<_>>(),
        ))
    };
    let mut lanes = Vec::new();
    for pair in &made.pairs {
        lanes.push(Lane {
            agent: pair.0.clone(),
            topic: pair.1.clone(),
            parent: steps(&parent, pair)?,
            fork: steps(&fork_store, pair)?,
        });
    }
    lanes.sort_by_key(|l| (parent.topic_rank(&l.topic), parent.agent_rank(&l.agent)));
    let span = crate::query::recorded_span(&parent)
        .map_err(|e| e.to_string())?
        .unwrap_or((0, 0));
    let mut timeline = Timeline::load(&fork_store).map_err(|e| e.to_string())?;
    timeline.label = format!("{label} without {evidence} (what-if fork)");
    Ok(ForkResult {
        removed: evidence.to_owned(),
        timeline,
        report: made.report,
        diff: made.diff,
        lanes,
        span,
    })
}

/// Reads the parent's log (on a worker thread, when first needed).
pub type LoadLog = Box<dyn Fn() -> Result<Dataset, String> + Send + Sync>;

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
    pub fn new(load: LoadLog) -> Parent {
        Parent {
            load,
            log: std::sync::OnceLock::new(),
            replay: std::sync::OnceLock::new(),
        }
    }

    /// The log and its replay, or why the log could not be read.
    pub fn get(&self) -> Result<(&Dataset, &Replay), String> {
        let log = self
            .log
            .get_or_init(&self.load)
            .as_ref()
            .map_err(Clone::clone)?;
        let replay = self
            .replay
            .get_or_init(|| engine::replay(&log.header, &log.events));
        Ok((log, replay))
    }
}

impl Lane {
    /// The claims either side answers with, in order of first appearance: the
    /// compare view's legend for this lane.
    pub fn claims(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (_, claim) in self.parent.iter().chain(&self.fork) {
            if let Some(c) = claim.as_deref()
                && !out.contains(&c)
            {
                out.push(c);
            }
        }
        out
    }
}

/// How many lines the compare view has: the report and the axis; then per lane
/// its title, the two answer lanes, the difference marks, the claims' legend
/// and the time to truth when the topic has a resolution.
pub fn line_count(fork: &ForkResult) -> usize {
    let truth = |lane: &Lane| {
        fork.diff
            .truth
            .iter()
            .any(|(pair, _, _)| pair.0 == lane.agent && pair.1 == lane.topic)
    };
    2 + usize::from(fork.lanes.is_empty())
        + fork
            .lanes
            .iter()
            .map(|l| 5 + usize::from(truth(l)))
            .sum::<usize>()
}
