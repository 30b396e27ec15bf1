//! `answer(agent, topic, ·)` over the whole recorded axis as a step function, and
//! when it converged on a topic's resolution (design.md §3 `answer`, §4 `converged_at`).
//! Pure functions of versions: the store derives its `truths` table with them,
//! and diffs, influence and the TUI compare view read answers through them.

use crate::model::{Header, Name, Version};
use crate::time::{Micros, OPEN};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// `answer(agent, topic, ·)` as a step function: from each instant on (until the
/// next), the claim — `None` when nothing is held. Starts as `None`.
pub type Steps = Vec<(Micros, Option<Name>)>;

/// The working answer over recorded time for every (agent, topic) with versions.
pub fn answers_of<'a>(
    versions: impl Iterator<Item = &'a Version>,
) -> BTreeMap<(String, String), Steps> {
    let mut by_pair: BTreeMap<(&str, &str), Vec<&Version>> = BTreeMap::new();
    for v in versions {
        by_pair.entry((&v.agent, &v.topic)).or_default().push(v);
    }
    by_pair
        .into_iter()
        .map(|((agent, topic), list)| ((agent.to_owned(), topic.to_owned()), steps_of(&list)))
        .collect()
}

/// What the working answer reads of a version.
pub trait Stint {
    /// When it started being held.
    fn recorded_at(&self) -> Micros;
    /// When it stopped (`OPEN` while held).
    fn superseded_at(&self) -> Micros;
    /// Where its valid time starts.
    fn valid_from(&self) -> Micros;
    /// Its id (breaks ties).
    fn id(&self) -> u64;
    /// What it holds.
    fn claim(&self) -> &Name;
}

impl Stint for Version {
    fn recorded_at(&self) -> Micros {
        self.recorded_at
    }
    fn superseded_at(&self) -> Micros {
        self.superseded_at
    }
    fn valid_from(&self) -> Micros {
        self.valid.from
    }
    fn id(&self) -> u64 {
        self.id
    }
    fn claim(&self) -> &Name {
        &self.claim
    }
}

/// One pair's answer steps: sweep the versions' start and end instants; the answer
/// is the held version with the greatest (valid_from, recorded_at, id).
pub fn steps_of<V: Stint>(list: &[&V]) -> Steps {
    let mut changes: Vec<(Micros, bool, usize)> = Vec::with_capacity(list.len() * 2);
    for (i, v) in list.iter().enumerate() {
        changes.push((v.recorded_at(), true, i));
        if v.superseded_at() != OPEN {
            changes.push((v.superseded_at(), false, i));
        }
    }
    changes.sort_by_key(|&(t, start, i)| (t, start, i));
    let key = |i: usize| (list[i].valid_from(), list[i].recorded_at(), list[i].id());
    let mut held: BTreeSet<((Micros, Micros, u64), usize)> = BTreeSet::new();
    let mut steps: Steps = Vec::new();
    let mut k = 0;
    while k < changes.len() {
        let t = changes[k].0;
        while k < changes.len() && changes[k].0 == t {
            let (_, start, i) = changes[k];
            if start {
                held.insert((key(i), i));
            } else {
                held.remove(&(key(i), i));
            }
            k += 1;
        }
        let now = held.last().map(|&(_, i)| list[i].claim().clone());
        if steps.last().map_or(&None, |s| &s.1) != &now {
            steps.push((t, now));
        }
    }
    steps
}

/// The working answer of `steps` at recorded time `t`, if there is one.
pub fn value_at(steps: &Steps, t: Micros) -> Option<&str> {
    let i = steps.partition_point(|s| s.0 <= t);
    i.checked_sub(1).and_then(|i| steps[i].1.as_deref())
}

/// How a pair's working answer converged on the topic's resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Truth {
    /// Earliest instant from which the answer is the resolution through the last
    /// event of the parent's log; `None` if it is not the resolution there.
    pub converged_at: Option<Micros>,
    /// Recorded time in [first, last event] with an answer other than the resolution.
    pub time_wrong_ms: i64,
}

/// Convergence on `resolution` within the parent's log span `[first, last]`.
pub fn truth(steps: &Steps, resolution: &str, (first, last): (Micros, Micros)) -> Truth {
    let right = |v: Option<&str>| v == Some(resolution);
    let converged_at = if right(value_at(steps, last)) {
        let upto = steps.partition_point(|s| s.0 <= last);
        let mut start = steps[upto - 1].0;
        for s in steps[..upto].iter().rev().skip(1) {
            if right(s.1.as_deref()) {
                start = s.0;
            } else {
                break;
            }
        }
        Some(start)
    } else {
        None
    };
    Truth {
        converged_at,
        time_wrong_ms: wrong_between(steps, resolution, first, last) / 1000,
    }
}

/// Recorded time (µs) in `[lo, hi)` with an answer other than `resolution`
/// (none held is not wrong); the last step holds on to `hi`.
pub fn wrong_between(steps: &Steps, resolution: &str, lo: Micros, hi: Micros) -> i64 {
    let from = steps.partition_point(|s| s.0 <= lo).saturating_sub(1);
    let mut wrong = 0i64;
    for (i, s) in steps.iter().enumerate().skip(from) {
        if s.0 >= hi {
            break;
        }
        let end = steps.get(i + 1).map_or(hi, |n| n.0).min(hi);
        let begin = s.0.max(lo);
        if end > begin && s.1.is_some() && s.1.as_deref() != Some(resolution) {
            wrong += end - begin;
        }
    }
    wrong
}

/// Per (agent, topic) with versions whose topic has a resolution: its convergence
/// over `span`, in no particular order.
pub fn truths<'a>(
    header: &Header,
    versions: impl Iterator<Item = &'a Version>,
    span: (Micros, Micros),
) -> Vec<((String, String), Truth)> {
    let mut by_pair: HashMap<(&str, &str), Vec<&Version>> = HashMap::new();
    for v in versions {
        by_pair.entry((&v.agent, &v.topic)).or_default().push(v);
    }
    let resolutions = header.resolutions();
    by_pair
        .into_iter()
        .filter_map(|((agent, topic), list)| {
            let resolution = *resolutions.get(topic)?;
            let t = truth(&steps_of(&list), resolution, span);
            Some(((agent.to_owned(), topic.to_owned()), t))
        })
        .collect()
}
