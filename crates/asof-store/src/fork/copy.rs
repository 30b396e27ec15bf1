//! A fork of a store file that re-derives only what the removed evidence reaches.
//!
//! Removing evidence changes only the (agent, topic) pairs whose events cite it,
//! and scopes never interact (design.md §3). So instead of replaying and writing the
//! whole log again, the fork reads what the removed evidence reaches, applies the
//! policy to those pairs' events and replays them, and the store writes the fork
//! as a copy of the parent patched with that replay
//! (`store/fork_file.rs`, where the SQL of both steps lives).
//!
//! ```text
//!   parent.db ──copy + SHA-256──▶ .asof-new-….tmp ──patch pairs──▶ sync ──link──▶ fork.db
//!        │                                                   ▲
//!        └── events of the cited pairs ──policy──▶ replay ───┘──▶ diff of those pairs
//! ```

use super::diff::{self, Diff};
use super::{Fork, ForkError, PolicyReport, transform};
use crate::store::fork_file::{Patch, Reach};
use crate::store::{Store, StoreError};
use asof_core::engine;
use asof_core::model::Event;
use asof_core::time::Micros;
use std::collections::{HashMap, HashSet};
use std::path::Path;

pub use crate::store::fork_file::Pair;

/// Why a fork file was not made.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// The evidence named is not there, or none was named.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// The parent could not be read or the fork written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What making a fork file did.
#[derive(Debug, Clone)]
pub struct Made {
    /// What the policy did.
    pub report: PolicyReport,
    /// How the fork's answers differ from the parent's.
    pub diff: Diff,
    /// The parent's SHA-256, as the fork's lineage records it.
    pub parent_sha256: String,
    /// The (agent, topic) pairs whose answers can differ: the pairs replayed
    /// (every other pair is the parent's), or for a whole replay the pairs
    /// whose answers differ or have a resolution.
    pub pairs: Vec<Pair>,
}

/// Forks the store at `parent_path` (open as `parent`) without `removed` into a
/// new store file at `out`; `meta` adds lineage rows (see [`super::lineage`]).
pub fn fork_file(
    parent: &Store,
    parent_path: &Path,
    removed: &[String],
    out: &Path,
    force: bool,
    meta: impl FnOnce(&str, &PolicyReport) -> Result<Vec<(&'static str, String)>, StoreError>,
) -> Result<Made, CopyError> {
    if removed.is_empty() {
        return Err(ForkError::NothingToRemove.into());
    }
    // One read transaction: the parent cannot change while it is read and copied.
    parent.reading(|| -> Result<Made, CopyError> {
        let plan = plan(parent, removed)?;
        let mut report = plan.fork.report.clone();
        report.noop_retractions = noop_retractions(parent, &plan)?;
        let patch = Patch {
            removed_seqs: &plan.reach.removed_seqs,
            pairs: &plan.reach.pairs,
            original: &plan.reach.original,
            events: &plan.fork.dataset.events,
            replay: &plan.fork.replay,
        };
        let sha = parent.write_fork(
            parent_path,
            out,
            force,
            &patch,
            || std::fs::File::open(parent_path).and_then(super::sha256_of),
            |sha| meta(sha, &report),
        )?;
        let diff = diff::compare_pairs(parent, &plan.reach.pairs, &plan.fork.replay.versions)?;
        Ok(Made {
            report,
            diff,
            parent_sha256: sha,
            pairs: plan.reach.pairs.into_iter().collect(),
        })
    })
}

/// The part of the log a fork replays, and what the policy did to it.
struct Plan {
    reach: Reach,
    fork: Fork,
}

/// Finds the removed evidence, the pairs citing it and their events, and applies
/// the policy to those events and replays them.
fn plan(parent: &Store, removed: &[String]) -> Result<Plan, CopyError> {
    let reach = match parent.reach_of(removed)? {
        Ok(reach) => reach,
        Err(unknown) => return Err(ForkError::UnknownEvidence(unknown).into()),
    };
    let reliability: HashMap<&str, f64> = reach
        .reliability
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    let gone: HashSet<&str> = removed.iter().map(String::as_str).collect();
    let mut report = PolicyReport {
        removed: removed.to_vec(),
        dropped_verifications: reach.dropped_verifications.clone(),
        ..PolicyReport::default()
    };
    let events = transform(&reach.original, &reliability, &gone, &mut report);
    let replay = engine::replay(parent.header(), &events);
    let dataset = asof_core::model::Dataset {
        header: parent.header().clone(),
        events,
    };
    Ok(Plan {
        reach,
        fork: Fork {
            dataset,
            replay,
            report,
        },
    })
}

/// Retractions that find nothing in the fork: those of the replayed pairs, and
/// the parent's own (a fork of a fork) elsewhere, in replay order.
fn noop_retractions(parent: &Store, plan: &Plan) -> Result<Vec<String>, CopyError> {
    let replayed: HashSet<u64> = plan.reach.original.iter().map(|e| e.seq).collect();
    let mut found: Vec<(Micros, u64, String)> = Vec::new();
    let by_seq: HashMap<u64, &Event> = plan
        .fork
        .dataset
        .events
        .iter()
        .map(|e| (e.seq, e))
        .collect();
    for seq in plan.fork.replay.unmatched_retractions() {
        if let Some(e) = by_seq.get(&seq) {
            found.push((e.recorded_at(), seq, e.id().to_owned()));
        }
    }
    for row in parent.unmatched_retractions()? {
        if !replayed.contains(&row.1) {
            found.push(row);
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, _, id)| id).collect())
}
