//! What-if forks (design.md §5): the parent's log minus some evidence, replayed under a
//! fixed policy into a separate store, then compared with the parent.
//!
//! A fork is a replay, not a causal model: it answers "what would the replay
//! engine have derived from the log without this evidence", not "what would the
//! agent have done".

pub mod copy;
pub mod diff;
pub mod influence;
pub mod label;
pub use label::WhatIf;
pub mod whatif;

use asof_core::engine::{self, Replay};
use asof_core::model::{Dataset, Event, EventBody, permille};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Recorded in every fork's lineage.
pub const POLICY: &str = "asof-fork/1: skip removed evidence; drop assertions and retractions left without cited evidence; scale confidence by remaining reliability";

/// An assertion whose confidence the policy scaled by its remaining evidence's reliability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaled {
    /// The assertion's id.
    pub assertion: String,
    /// Its confidence in the parent.
    pub from: f64,
    /// Its confidence in the fork.
    pub to: f64,
}

/// What the policy did to the log.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PolicyReport {
    /// The evidence removed.
    pub removed: Vec<String>,
    /// Assertions dropped: no cited evidence left.
    pub dropped: Vec<String>,
    /// Assertions whose confidence was scaled.
    pub scaled: Vec<Scaled>,
    /// Retractions dropped: no cited evidence left.
    pub dropped_retractions: Vec<String>,
    /// Retractions kept by the policy that found nothing to retract in the fork.
    pub noop_retractions: Vec<String>,
    /// Verifications of removed evidence, dropped with it (design.md §4).
    #[serde(default)]
    pub dropped_verifications: Vec<String>,
    /// Why evidence was removed, when `--without-rejected` chose it.
    #[serde(default)]
    pub rejected: Vec<Rejected>,
    /// The review whose rejections chose the evidence
    /// (`--without-rejected-by REVIEW`): its name and SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
}

/// Evidence `--without-rejected` removed: rejected by `by` at `since` (a
/// review's finding: `verification` is its id, `since` when it was made).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejected {
    /// The evidence removed.
    pub evidence: String,
    /// The finding (or verification) that rejected it.
    pub verification: String,
    /// When the rejection was made.
    pub since: asof_core::time::Micros,
    /// Who made it.
    pub by: String,
    /// Why, when said.
    pub note: Option<String>,
}

/// Why a fork cannot be made.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ForkError {
    /// Evidence ids the log does not have.
    #[error("no evidence with id {}; see `asof evidence` for the ids", .0.join(", "))]
    UnknownEvidence(Vec<String>),
    /// No evidence id was named.
    #[error("name at least one evidence id to remove")]
    NothingToRemove,
}

/// A fork's log and what replay derived from it.
#[derive(Debug, Clone)]
pub struct Fork {
    /// The log without the removed evidence, after the policy.
    pub dataset: Dataset,
    /// Its replay.
    pub replay: Replay,
    /// What the policy did.
    pub report: PolicyReport,
}

/// Applies the policy of design.md §5 to `parent` without `removed`, and replays.
/// Events keep their parent `seq`, so ties replay in the same order.
pub fn fork(parent: &Dataset, removed: &[String]) -> Result<Fork, ForkError> {
    let (dataset, mut report) = apply_policy(parent, removed)?;
    let replay = engine::replay(&dataset.header, &dataset.events);
    let by_seq: HashMap<u64, &str> = dataset.events.iter().map(|e| (e.seq, e.id())).collect();
    report.noop_retractions = replay
        .unmatched_retractions()
        .filter_map(|seq| by_seq.get(&seq).map(|id| (*id).to_owned()))
        .collect();
    Ok(Fork {
        dataset,
        replay,
        report,
    })
}

/// The log the fork replays, and what the policy changed.
pub fn apply_policy(
    parent: &Dataset,
    removed: &[String],
) -> Result<(Dataset, PolicyReport), ForkError> {
    let reliability = reliabilities(parent);
    let unknown: Vec<String> = removed
        .iter()
        .filter(|id| !reliability.contains_key(id.as_str()))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(ForkError::UnknownEvidence(unknown));
    }
    let gone: HashSet<&str> = removed.iter().map(String::as_str).collect();
    let mut report = PolicyReport {
        removed: removed.to_vec(),
        ..PolicyReport::default()
    };
    let events = transform(&parent.events, &reliability, &gone, &mut report);
    Ok((
        Dataset {
            header: parent.header.clone(),
            events,
        },
        report,
    ))
}

/// Evidence id → reliability.
pub fn reliabilities(log: &Dataset) -> HashMap<&str, f64> {
    log.events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Evidence(ev) => Some((ev.id.as_str(), ev.reliability)),
            _ => None,
        })
        .collect()
}

/// The policy over any run of events (a whole log, or one (agent, topic)'s events).
pub fn transform(
    events: &[Event],
    reliability: &HashMap<&str, f64>,
    gone: &HashSet<&str>,
    report: &mut PolicyReport,
) -> Vec<Event> {
    let remaining = |cited: &[String]| -> Vec<String> {
        cited
            .iter()
            .filter(|id| !gone.contains(id.as_str()))
            .cloned()
            .collect()
    };
    let mut out = Vec::with_capacity(events.len());
    for event in events {
        let mut event = event.clone();
        match &mut event.body {
            EventBody::Evidence(ev) if gone.contains(ev.id.as_str()) => continue,
            EventBody::Evidence(_) => {}
            EventBody::Believe(a) => {
                let cited: Vec<String> = std::mem::take(&mut a.supported_by);
                let kept = remaining(&cited);
                if !cited.is_empty() && kept.is_empty() {
                    report.dropped.push(a.id.clone());
                    continue;
                }
                if kept.len() < cited.len() {
                    let sum = |ids: &[String]| {
                        ids.iter()
                            .map(|id| reliability.get(id.as_str()).copied().unwrap_or(1.0))
                            .sum::<f64>()
                    };
                    let (before, after) = (sum(&cited), sum(&kept));
                    // All-zero reliabilities: every cited item weighs the same.
                    let ratio = if before > 0.0 {
                        after / before
                    } else {
                        kept.len() as f64 / cited.len() as f64
                    };
                    let to = permille(a.confidence * ratio) as f64 / 1000.0;
                    report.scaled.push(Scaled {
                        assertion: a.id.clone(),
                        from: a.confidence,
                        to,
                    });
                    a.confidence = to;
                }
                a.supported_by = kept;
            }
            EventBody::Retract(r) => {
                let cited = std::mem::take(&mut r.because);
                let kept = remaining(&cited);
                if !cited.is_empty() && kept.is_empty() {
                    report.dropped_retractions.push(r.id.clone());
                    continue;
                }
                r.because = kept;
            }
            // A judgement of evidence the fork no longer has goes with it.
            EventBody::Verify(v) if gone.contains(v.evidence.as_str()) => {
                report.dropped_verifications.push(v.id.clone());
                continue;
            }
            EventBody::Verify(_) => {}
        }
        out.push(event);
    }
    out
}

/// The `meta` rows recording a fork's lineage (design.md §5): parent, its SHA-256,
/// removed evidence, policy, creation time, what the policy did, and the chain of
/// forks back to the first parent.
pub fn lineage(
    parent: &crate::store::Store,
    parent_sha256: &str,
    report: &PolicyReport,
) -> Result<Vec<(&'static str, String)>, crate::store::StoreError> {
    use serde_json::{Value, json};
    let mut chain: Vec<Value> = parent
        .meta("fork_chain")?
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    chain.push(json!({
        "parent": parent.label(),
        "parent_sha256": parent_sha256,
        "removed": report.removed,
    }));
    let removed = report.removed.join(",");
    let review = report.review.clone();
    // Serialising a struct of strings and numbers cannot fail.
    let report = serde_json::to_string(report).unwrap_or_default();
    let mut rows = vec![
        ("fork_parent", parent.label().to_owned()),
        ("fork_parent_sha256", parent_sha256.to_owned()),
        ("fork_removed", removed),
        ("fork_policy", POLICY.to_owned()),
        (
            "fork_created_at",
            asof_core::time::format(asof_core::time::now()),
        ),
        ("fork_report", report),
        ("fork_chain", Value::Array(chain).to_string()),
    ];
    if let Some(review) = review {
        rows.push(("fork_review", review));
    }
    Ok(rows)
}

/// SHA-256 of some bytes, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    asof_core::text::hex(&Sha256::digest(bytes))
}

/// SHA-256 of everything `reader` yields, read a MiB at a time (a store may be
/// larger than memory wants to hold twice).
pub fn sha256_of(mut reader: impl std::io::Read) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(asof_core::text::hex(&hasher.finalize()))
}

#[cfg(test)]
mod tests;
