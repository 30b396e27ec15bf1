//! Comparing a parent and a fork (design.md §5): divergence windows of `answer` per
//! (agent, topic), and per resolved topic when each converged on the truth —
//! two runs compared on one clock, through the compare of two runs
//! (`engine::compare::pair`), over the parent's span.

use crate::store::{Store, StoreError};
use asof_core::engine::answers::{Steps, Truth, answers_of};
use asof_core::engine::compare;
use asof_core::engine::compare::Window;
use asof_core::model::{Header, Version};
use asof_core::time::{Micros, OPEN};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A whole comparison, as `asof diff` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    /// Per (agent, topic): where the parent's and the fork's answers differ.
    pub divergence: Vec<((String, String), Vec<Window>)>,
    /// Per (agent, topic) with a resolution: how the parent converged on it, then the fork.
    pub truth: Vec<((String, String), Truth, Truth)>,
}

/// Compares a parent store with a fork's versions over the parent's log span,
/// from the versions alone (no replay, no in-memory timelines).
pub fn compare(parent: &Store, fork_versions: &[Version]) -> Result<Diff, StoreError> {
    let span = crate::query::recorded_span(parent)?.unwrap_or((0, 0));
    let before = answers_of(parent.versions()?.iter());
    let after = answers_of(fork_versions.iter());
    Ok(compare_answers(parent.header(), span, &before, &after))
}

/// The comparison [`compare()`] makes when only `pairs` can differ — a fork that
/// copied its parent and replayed those pairs, whose versions are `fork_versions`:
/// their answers from both sides, every other pair's truth from the parent's
/// derived `truths` table (over the parent's span, as [`compare()`] uses).
pub fn compare_pairs(
    parent: &Store,
    pairs: &BTreeSet<(String, String)>,
    fork_versions: &[Version],
) -> Result<Diff, StoreError> {
    let span = crate::query::recorded_span(parent)?.unwrap_or((0, 0));
    let mut before = BTreeMap::new();
    for (agent, topic) in pairs {
        let versions = crate::query::versions_of(parent, topic, Some(agent))?;
        before.extend(answers_of(versions.iter().map(|b| &b.version)));
    }
    let after = answers_of(fork_versions.iter());
    let mut diff = compare_answers(parent.header(), span, &before, &after);
    diff.truth.extend(
        parent
            .truths()?
            .into_iter()
            .filter(|(pair, _)| !pairs.contains(pair))
            .map(|(pair, t)| (pair, t, t)),
    );
    diff.truth
        .sort_by_key(|((agent, topic), _, _)| (parent.topic_rank(topic), parent.agent_rank(agent)));
    Ok(diff)
}

/// Compares a parent store (whose SHA-256 is `parent_sha`) with a fork store. A
/// fork copied from this very parent lists the pairs it replayed (`fork_pairs`),
/// the only ones that can differ: they alone are read ([`compare_pairs`]);
/// otherwise every version of both ([`compare()`]).
pub fn compare_stores(parent: &Store, parent_sha: &str, fork: &Store) -> Result<Diff, StoreError> {
    let same_parent = fork.meta("fork_parent_sha256")?.as_deref() == Some(parent_sha);
    let replayed: Option<BTreeSet<(String, String)>> = fork
        .meta("fork_pairs")?
        .filter(|_| same_parent)
        .and_then(|p| serde_json::from_str(&p).ok());
    let Some(pairs) = replayed else {
        return compare(parent, &fork.versions()?);
    };
    let mut versions = Vec::new();
    for (agent, topic) in &pairs {
        let pair = crate::query::versions_of(fork, topic, Some(agent))?;
        versions.extend(pair.into_iter().map(|b| b.version));
    }
    compare_pairs(parent, &pairs, &versions)
}

/// The comparison from both sides' answer steps (see [`answers_of`]).
pub fn compare_answers(
    header: &Header,
    span: (Micros, Micros),
    a: &BTreeMap<(String, String), Steps>,
    b: &BTreeMap<(String, String), Steps>,
) -> Diff {
    let empty = Steps::new();
    let mut pairs: BTreeSet<&(String, String)> = a.keys().collect();
    pairs.extend(b.keys());
    // Report in the header's order: topics, then agents.
    let (topics, agents) = (header.topic_ranks(), header.agent_ranks());
    let topic_rank = |t: &str| topics.get(t).copied().unwrap_or(usize::MAX);
    let agent_rank = |x: &str| agents.get(x).copied().unwrap_or(usize::MAX);
    let resolutions = header.resolutions();
    let mut pairs: Vec<&(String, String)> = pairs.into_iter().collect();
    pairs.sort_by_key(|(agent, topic)| (topic_rank(topic), agent_rank(agent)));
    let mut diff = Diff {
        divergence: Vec::new(),
        truth: Vec::new(),
    };
    for pair in pairs {
        let (p, f) = (a.get(pair).unwrap_or(&empty), b.get(pair).unwrap_or(&empty));
        let resolution = resolutions.get(pair.1.as_str()).copied();
        let (windows, tp, tf) = compare::pair(p, f, (resolution, resolution), (span, span));
        if !windows.is_empty() {
            diff.divergence.push((pair.clone(), windows));
        }
        if let (Some(tp), Some(tf)) = (tp, tf) {
            diff.truth.push((pair.clone(), tp, tf));
        }
    }
    diff
}

/// `asof diff`'s JSON: the lineage, what the policy did, the divergence
/// windows and the time to the truth of each pair.
pub fn json(
    parent: &str,
    fork: &str,
    report: &crate::fork::PolicyReport,
    d: &Diff,
    recorded_sha: Option<String>,
    verified: bool,
) -> serde_json::Value {
    use serde_json::{Value, json};
    let instant = |t: Micros| asof_core::time::format_opt(t).map_or(Value::Null, Value::String);
    let truth = |t: &Truth| json!({"converged_at": t.converged_at.map_or(Value::Null, instant), "time_wrong_ms": t.time_wrong_ms});
    json!({
        "parent": parent,
        "fork": fork,
        "parent_sha256": recorded_sha,
        "lineage_verified": verified,
        "policy": crate::fork::POLICY,
        "removed": report.removed,
        "dropped": report.dropped,
        "scaled": report.scaled.iter().map(|s| json!({"assertion": s.assertion, "from": s.from, "to": s.to})).collect::<Vec<_>>(),
        "dropped_retractions": report.dropped_retractions,
        "noop_retractions": report.noop_retractions,
        "dropped_verifications": report.dropped_verifications,
        "review": report.review,
        "rejected": report.rejected.iter().map(|r| json!({
            "evidence": r.evidence,
            "verification": r.verification,
            "since": instant(r.since),
            "by": r.by,
            "note": r.note,
        })).collect::<Vec<_>>(),
        "divergence": d.divergence.iter().map(|((agent, topic), ws)| json!({
            "agent": agent,
            "topic": topic,
            "windows": ws.iter().map(|w| json!({
                "from": instant(w.from),
                "to": if w.to == OPEN { Value::Null } else { instant(w.to) },
                "parent": w.a,
                "fork": w.b,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "truth": d.truth.iter().map(|((agent, topic), p, f)| json!({
            "agent": agent, "topic": topic, "parent": truth(p), "fork": truth(f),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use asof_core::engine::answers::truth;
    use asof_core::engine::compare::divergence;

    fn steps(v: &[(i64, Option<&str>)]) -> Steps {
        v.iter().map(|&(t, c)| (t, c.map(Into::into))).collect()
    }

    #[test]
    fn windows_where_answers_differ() {
        let p = steps(&[(10, Some("a")), (20, Some("b")), (40, Some("c"))]);
        let f = steps(&[(10, Some("a")), (30, Some("c"))]);
        let w = divergence(&p, &f);
        assert_eq!(
            w,
            vec![
                Window {
                    from: 20,
                    to: 30,
                    a: Some("b".into()),
                    b: Some("a".into())
                },
                Window {
                    from: 30,
                    to: 40,
                    a: Some("b".into()),
                    b: Some("c".into())
                },
            ]
        );
        let none = steps(&[(5, Some("x"))]);
        assert_eq!(
            divergence(&none, &Steps::new()),
            vec![Window {
                from: 5,
                to: OPEN,
                a: Some("x".into()),
                b: None
            }]
        );
    }

    #[test]
    fn convergence_and_time_wrong() {
        const MS: i64 = 1000;
        let s = steps(&[
            (10 * MS, Some("wrong")),
            (20 * MS, None),
            (30 * MS, Some("right")),
            (50 * MS, Some("wrong")),
            (60 * MS, Some("right")),
        ]);
        let t = truth(&s, "right", (10 * MS, 100 * MS));
        assert_eq!(t.converged_at, Some(60 * MS));
        assert_eq!(
            t.time_wrong_ms,
            (20 - 10) + (60 - 50),
            "absent answers are not wrong"
        );
        let t = truth(&s, "right", (10 * MS, 55 * MS));
        assert_eq!(t.converged_at, None, "wrong at the last event");
        assert_eq!(t.time_wrong_ms, 10 + 5);
        let s = steps(&[(10 * MS, Some("right")), (30 * MS, Some("right"))]);
        assert_eq!(truth(&s, "right", (0, 40 * MS)).converged_at, Some(10 * MS));
    }
}
