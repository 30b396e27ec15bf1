//! Two runs side by side (design.md §5, "Two runs"): per (agent, topic),
//! both runs' answers over aligned time, where they first part, when each
//! reached the truth and how long each was wrong; and the evidence matched
//! across the runs by what it is (source and whole text), not by id.
//!
//! A fork and its parent are the special case of two runs on one clock
//! (`Align::Absolute`): `asof diff` ([`pair`]) and [`compare`] read a pair's
//! windows with [`divergence`] and its truth with `answers::truth`, the same
//! two functions.

use super::answers::{Steps, Truth, truth, value_at};
use crate::model::{Dataset, EventBody, Name};
use crate::time::{Micros, OPEN};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// The clock two runs are set side by side on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Each run's time since its first event.
    Start,
    /// Recorded time as recorded (a fork and its parent).
    Absolute,
    /// The n-th assertion of each run on the pair.
    Step,
}

impl Align {
    /// The alignment as `--align` names it.
    pub fn name(self) -> &'static str {
        match self {
            Align::Start => "start",
            Align::Absolute => "absolute",
            Align::Step => "step",
        }
    }
}

/// A recorded interval (aligned) where the two answers differ; an absent
/// answer is a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Window {
    /// Where it starts (aligned).
    pub from: Micros,
    /// `OPEN` when the answers never agree again.
    pub to: Micros,
    /// Run A's answer over it.
    pub a: Option<String>,
    /// Run B's answer over it.
    pub b: Option<String>,
}

/// Intervals where the two answers differ (an absent answer counts); a
/// change of either value inside one starts the next.
pub fn divergence(a: &Steps, b: &Steps) -> Vec<Window> {
    let mut points: Vec<Micros> = a.iter().chain(b).map(|s| s.0).collect();
    points.sort_unstable();
    points.dedup();
    let mut windows: Vec<Window> = Vec::new();
    let mut open: Option<Window> = None;
    for t in points {
        let (x, y) = (value_at(a, t), value_at(b, t));
        if let Some(w) = &mut open
            && (x == y || w.a.as_deref() != x || w.b.as_deref() != y)
        {
            w.to = t;
            windows.extend(open.take());
        }
        if open.is_none() && x != y {
            open = Some(Window {
                from: t,
                to: OPEN,
                a: x.map(str::to_owned),
                b: y.map(str::to_owned),
            });
        }
    }
    windows.extend(open);
    windows
}

/// One pair compared on one clock: where the answers differ, and each
/// side's convergence on its truth (when known) over its window.
pub fn pair(
    a: &Steps,
    b: &Steps,
    truths: (Option<&str>, Option<&str>),
    windows: ((Micros, Micros), (Micros, Micros)),
) -> (Vec<Window>, Option<Truth>, Option<Truth>) {
    (
        divergence(a, b),
        truths.0.map(|t| truth(a, t, windows.0)),
        truths.1.map(|t| truth(b, t, windows.1)),
    )
}

/// An evidence item as a compare matches it.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    /// Its id in its run.
    pub id: &'a str,
    /// Its source (a tool, a system).
    pub source: &'a str,
    /// The whole text the agent read (its summary when nothing more is kept).
    pub text: &'a str,
    /// When its run recorded it.
    pub recorded_at: Micros,
}

/// What a compare reads of one run.
#[derive(Debug, Clone)]
pub struct Run<'a> {
    /// The working answer of each (agent, topic) over recorded time.
    pub answers: BTreeMap<(String, String), Steps>,
    /// Each (agent, topic)'s assertions' recorded instants, in log order.
    pub assertions: HashMap<(String, String), Vec<Micros>>,
    /// The first and last event's recorded instants.
    pub span: (Micros, Micros),
    /// Evidence in log (recorded) order.
    pub evidence: Vec<Item<'a>>,
    /// The run's agents, in header order.
    pub agents: Vec<String>,
    /// The run's topics, in header order.
    pub topics: Vec<String>,
    /// Each topic's resolution, where known.
    pub resolutions: HashMap<String, String>,
}

impl<'a> Run<'a> {
    /// The run of `log`, whose versions give `answers` ([`super::answers::answers_of`]).
    pub fn of(log: &'a Dataset, answers: BTreeMap<(String, String), Steps>) -> Run<'a> {
        let mut assertions: HashMap<(String, String), Vec<Micros>> = HashMap::new();
        let mut evidence = Vec::new();
        let (mut first, mut last) = (Micros::MAX, Micros::MIN);
        for e in &log.events {
            let at = e.recorded_at();
            (first, last) = (first.min(at), last.max(at));
            match &e.body {
                EventBody::Evidence(x) => evidence.push(Item {
                    id: &x.id,
                    source: &x.source,
                    text: x.content.as_deref().unwrap_or(&x.summary),
                    recorded_at: x.recorded_at,
                }),
                EventBody::Believe(x) => assertions
                    .entry((x.agent.clone(), x.topic.clone()))
                    .or_default()
                    .push(x.recorded_at),
                _ => {}
            }
        }
        evidence.sort_by_key(|i| i.recorded_at);
        for instants in assertions.values_mut() {
            instants.sort_unstable();
        }
        Run {
            answers,
            assertions,
            span: if first <= last { (first, last) } else { (0, 0) },
            evidence,
            agents: log.header.agents.iter().map(|a| a.id.clone()).collect(),
            topics: log.header.topics.iter().map(|t| t.id.clone()).collect(),
            resolutions: log
                .header
                .resolutions()
                .into_iter()
                .map(|(t, c)| (t.to_owned(), c.to_owned()))
                .collect(),
        }
    }

    /// Each evidence item's source, by id (what the outputs name beside an id).
    pub fn sources(&self) -> HashMap<&'a str, &'a str> {
        self.evidence.iter().map(|e| (e.id, e.source)).collect()
    }

    /// A pair's answers on `align`'s clock: absolute instants; microseconds
    /// since the run's first event; or the answer just after each of the
    /// pair's assertions, at its index.
    fn aligned(&self, pair: &(String, String), align: Align) -> Steps {
        let Some(steps) = self.answers.get(pair) else {
            return Steps::new();
        };
        match align {
            Align::Absolute => steps.clone(),
            Align::Start => steps
                .iter()
                .map(|(t, c)| (t - self.span.0, c.clone()))
                .collect(),
            Align::Step => {
                let mut out = Steps::new();
                for (k, &t) in self.assertions.get(pair).into_iter().flatten().enumerate() {
                    let now = value_at(steps, t).map(Name::from);
                    if out.last().map_or(&None, |s| &s.1) != &now {
                        out.push((k as Micros, now));
                    }
                }
                out
            }
        }
    }

    /// The recorded instant `at` (on `align`'s clock, for `pair`) falls at
    /// in this run: what it had recorded by then is what it had seen.
    fn instant(&self, pair: &(String, String), align: Align, at: Micros) -> Micros {
        match align {
            Align::Absolute => at,
            Align::Start => self.span.0.saturating_add(at),
            Align::Step => usize::try_from(at)
                .ok()
                .and_then(|k| self.assertions.get(pair)?.get(k).copied())
                .unwrap_or(self.span.1),
        }
    }
}

/// Which agent and topic of B stand for one of A.
#[derive(Debug, Clone, Default)]
pub struct Maps {
    /// A's topic → B's.
    pub topics: BTreeMap<String, String>,
    /// A's agent → B's.
    pub agents: BTreeMap<String, String>,
}

/// One run's side of a compared pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// The answers on the compare's clock.
    pub answers: Steps,
    /// How it went against the pair's truth, when known.
    pub truth: Option<Truth>,
    /// From the run's first event to its convergence.
    pub time_to_truth_ms: Option<i64>,
}

/// Where a pair's answers first differ, and the evidence each run had
/// recorded by then that the other had not (ids of each run).
#[derive(Debug, Clone, PartialEq)]
pub struct First {
    /// When (aligned).
    pub at: Micros,
    /// Run A's answer then.
    pub a: Option<String>,
    /// Run B's answer then.
    pub b: Option<String>,
    /// Evidence A had recorded by then that B had not.
    pub seen_only_a: Vec<String>,
    /// Evidence B had recorded by then that A had not.
    pub seen_only_b: Vec<String>,
}

/// One (topic, agent) compared across the two runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// A's topic and agent, and the B topic and agent standing for them.
    pub topic_a: String,
    /// B's topic standing for A's.
    pub topic_b: String,
    /// A's agent.
    pub agent_a: String,
    /// B's agent standing for A's.
    pub agent_b: String,
    /// The topic's true claim, when known.
    pub truth: Option<String>,
    /// Run A's side: its answers and how long they were wrong.
    pub a: Side,
    /// Run B's side.
    pub b: Side,
    /// Where the two answers differ.
    pub windows: Vec<Window>,
    /// Where they first differ, and the evidence that may explain it.
    pub first: Option<First>,
}

impl Pair {
    /// The pair's topic as both runs name it: `root-cause`, or `cause / root-cause`
    /// when B names A's topic otherwise.
    pub fn topic_label(&self) -> String {
        both_names(&self.topic_a, &self.topic_b)
    }

    /// The pair's agent as both runs name it (see [`Pair::topic_label`]).
    pub fn agent_label(&self) -> String {
        both_names(&self.agent_a, &self.agent_b)
    }
}

/// `a`, or `a / b` when the runs name one thing two ways.
fn both_names(a: &str, b: &str) -> String {
    if a == b {
        a.to_owned()
    } else {
        format!("{a} / {b}")
    }
}

/// Evidence matched across the runs by source and whole text: the n-th item
/// of A with a given (source, text) is the n-th of B with it, so two calls
/// that returned the same bytes stay two items.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matched {
    /// Pairs of ids, A's then B's, of items matched.
    pub both: Vec<(String, String)>,
    /// A's items with no match in B.
    pub only_a: Vec<String>,
    /// B's items with no match in A.
    pub only_b: Vec<String>,
}

/// Two runs compared (`asof compare`).
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// How the runs' clocks were aligned.
    pub align: Align,
    /// The clock's first and last reading over both runs: the union of the
    /// spans (absolute), 0 to the longer run's length (start), 0 to the most
    /// assertions a pair has (step).
    pub span: (Micros, Micros),
    /// Each (topic, agent) pair, in A's header order.
    pub pairs: Vec<Pair>,
    /// The evidence matched across the runs.
    pub evidence: Matched,
}

/// Matches `a`'s evidence with `b`'s (see [`Matched`]); also each A item's
/// match in B by index, and each B item's in A.
fn match_evidence(a: &Run, b: &Run) -> (Vec<Option<usize>>, Vec<Option<usize>>) {
    let mut waiting: HashMap<(&str, &str), VecDeque<usize>> = HashMap::new();
    for (j, e) in b.evidence.iter().enumerate() {
        waiting.entry((e.source, e.text)).or_default().push_back(j);
    }
    let mut of_b: Vec<Option<usize>> = vec![None; b.evidence.len()];
    let of_a: Vec<Option<usize>> = a
        .evidence
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let j = waiting.get_mut(&(e.source, e.text))?.pop_front()?;
            of_b[j] = Some(i);
            Some(j)
        })
        .collect();
    (of_a, of_b)
}

/// Compares run `a` with run `b` on `align`'s clock; `truth` names a
/// topic's (A's id) true claim, before either run's own resolution.
pub fn compare(
    a: &Run,
    b: &Run,
    align: Align,
    maps: &Maps,
    truth: &BTreeMap<String, String>,
) -> Compared {
    // One agent each and no map: they are the two runs' agent.
    let only = (a.agents.len() == 1 && b.agents.len() == 1 && maps.agents.is_empty())
        .then(|| (a.agents[0].clone(), b.agents[0].clone()));
    let agent_b = |x: &str| match (&only, maps.agents.get(x)) {
        (_, Some(y)) => y.clone(),
        (Some((oa, ob)), None) if oa == x => ob.clone(),
        _ => x.to_owned(),
    };
    let topic_b = |t: &str| maps.topics.get(t).cloned().unwrap_or_else(|| t.to_owned());
    let rank = |list: &[String], x: &str| list.iter().position(|y| y == x).unwrap_or(usize::MAX);
    // A's pairs in A's header order, then B's with no A pair standing for them.
    let mut pairs: Vec<((String, String), (String, String))> = a
        .answers
        .keys()
        .map(|(ag, t)| ((ag.clone(), t.clone()), (agent_b(ag), topic_b(t))))
        .collect();
    pairs.sort_by_key(|((ag, t), _)| (rank(&a.topics, t), rank(&a.agents, ag)));
    let taken: std::collections::HashSet<(String, String)> =
        pairs.iter().map(|(_, p)| p.clone()).collect();
    let back_agent = |y: &str| {
        maps.agents
            .iter()
            .find(|(_, v)| *v == y)
            .map(|(k, _)| k.clone())
            .or_else(|| {
                only.as_ref()
                    .filter(|(_, ob)| ob == y)
                    .map(|(oa, _)| oa.clone())
            })
            .unwrap_or_else(|| y.to_owned())
    };
    let back_topic = |y: &str| {
        maps.topics
            .iter()
            .find(|(_, v)| *v == y)
            .map(|(k, _)| k.clone())
            .unwrap_or_else(|| y.to_owned())
    };
    let mut only_b: Vec<((String, String), (String, String))> = b
        .answers
        .keys()
        .filter(|p| !taken.contains(*p))
        .map(|(ag, t)| ((back_agent(ag), back_topic(t)), (ag.clone(), t.clone())))
        .collect();
    only_b.sort_by_key(|(_, (ag, t))| (rank(&b.topics, t), rank(&b.agents, ag)));
    pairs.extend(only_b);

    let (of_a, of_b) = match_evidence(a, b);
    // The window each run's truth is measured over (recorded instants).
    let (dur_a, dur_b) = (a.span.1 - a.span.0, b.span.1 - b.span.0);
    let window = |run: &Run| match align {
        Align::Absolute => (a.span.0.min(b.span.0), a.span.1.max(b.span.1)),
        Align::Start => (run.span.0, run.span.0 + dur_a.max(dur_b)),
        Align::Step => run.span,
    };
    let compared: Vec<Pair> = pairs
        .into_iter()
        .map(|(pa, pb)| {
            let (steps_a, steps_b) = (a.aligned(&pa, align), b.aligned(&pb, align));
            // The truth: named, else either run's resolution of the topic.
            let known = truth
                .get(&pa.1)
                .or_else(|| a.resolutions.get(&pa.1))
                .or_else(|| b.resolutions.get(&pb.1));
            // Truth is read on the recorded clock, whatever the alignment.
            let empty = Steps::new();
            let measured = |run: &Run, pair: &(String, String)| {
                known.map(|t| {
                    super::answers::truth(run.answers.get(pair).unwrap_or(&empty), t, window(run))
                })
            };
            let (ta, tb) = (measured(a, &pa), measured(b, &pb));
            let windows = divergence(&steps_a, &steps_b);
            let first = windows.first().map(|w| {
                let (ha, hb) = (a.instant(&pa, align, w.from), b.instant(&pb, align, w.from));
                let seen_a = |i: usize| a.evidence[i].recorded_at <= ha;
                let seen_b = |j: usize| b.evidence[j].recorded_at <= hb;
                First {
                    at: w.from,
                    a: w.a.clone(),
                    b: w.b.clone(),
                    seen_only_a: (0..a.evidence.len())
                        .filter(|&i| seen_a(i) && !of_a[i].is_some_and(seen_b))
                        .map(|i| a.evidence[i].id.to_owned())
                        .collect(),
                    seen_only_b: (0..b.evidence.len())
                        .filter(|&j| seen_b(j) && !of_b[j].is_some_and(seen_a))
                        .map(|j| b.evidence[j].id.to_owned())
                        .collect(),
                }
            });
            let side = |run: &Run, steps: Steps, t: Option<Truth>| Side {
                answers: steps,
                time_to_truth_ms: t
                    .and_then(|t| t.converged_at)
                    .map(|c| (c - run.span.0) / 1000),
                truth: t,
            };
            Pair {
                truth: known.cloned(),
                a: side(a, steps_a, ta),
                b: side(b, steps_b, tb),
                topic_a: pa.1,
                topic_b: pb.1,
                agent_a: pa.0,
                agent_b: pb.0,
                windows,
                first,
            }
        })
        .collect();
    let mut evidence = Matched::default();
    for (i, m) in of_a.iter().enumerate() {
        match m {
            Some(j) => evidence
                .both
                .push((a.evidence[i].id.to_owned(), b.evidence[*j].id.to_owned())),
            None => evidence.only_a.push(a.evidence[i].id.to_owned()),
        }
    }
    evidence.only_b = (0..b.evidence.len())
        .filter(|&j| of_b[j].is_none())
        .map(|j| b.evidence[j].id.to_owned())
        .collect();
    let span = match align {
        Align::Absolute => (a.span.0.min(b.span.0), a.span.1.max(b.span.1)),
        Align::Start => (0, dur_a.max(dur_b)),
        Align::Step => {
            let most = a
                .assertions
                .values()
                .chain(b.assertions.values())
                .map(Vec::len)
                .max()
                .unwrap_or(0);
            (0, most.max(1) as Micros)
        }
    };
    Compared {
        align,
        span,
        pairs: compared,
        evidence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_is_named_once_when_both_runs_name_it_alike() {
        let side = || Side {
            answers: Vec::new(),
            truth: None,
            time_to_truth_ms: None,
        };
        let pair = Pair {
            topic_a: "root-cause".into(),
            topic_b: "cause".into(),
            agent_a: "triage".into(),
            agent_b: "triage".into(),
            truth: None,
            a: side(),
            b: side(),
            windows: Vec::new(),
            first: None,
        };
        assert_eq!(pair.topic_label(), "root-cause / cause");
        assert_eq!(pair.agent_label(), "triage");
    }

    fn steps(v: &[(i64, Option<&str>)]) -> Steps {
        v.iter().map(|&(t, c)| (t, c.map(Name::from))).collect()
    }

    /// A run of one agent on one topic, answering `answers`, asserting at
    /// `asserted`, over `span`.
    fn run<'a>(
        answers: Steps,
        asserted: Vec<Micros>,
        span: (Micros, Micros),
        evidence: Vec<Item<'a>>,
    ) -> Run<'a> {
        let pair = ("x".to_owned(), "t".to_owned());
        Run {
            answers: [(pair.clone(), answers)].into(),
            assertions: [(pair, asserted)].into(),
            span,
            evidence,
            agents: vec!["x".into()],
            topics: vec!["t".into()],
            resolutions: [("t".to_owned(), "right".to_owned())].into(),
        }
    }

    fn item(
        id: &'static str,
        source: &'static str,
        text: &'static str,
        at: Micros,
    ) -> Item<'static> {
        Item {
            id,
            source,
            text,
            recorded_at: at,
        }
    }

    /// Step alignment samples the answer just after each assertion, and an
    /// assertion that does not change it adds no step; start alignment
    /// shifts by the run's first event.
    #[test]
    fn each_clock_puts_the_answers_where_it_says() {
        let r = run(
            steps(&[(110, Some("a")), (150, None), (170, Some("b"))]),
            vec![110, 130, 170, 190],
            (100, 200),
            Vec::new(),
        );
        let pair = ("x".to_owned(), "t".to_owned());
        assert_eq!(
            r.aligned(&pair, Align::Absolute),
            steps(&[(110, Some("a")), (150, None), (170, Some("b"))])
        );
        assert_eq!(
            r.aligned(&pair, Align::Start),
            steps(&[(10, Some("a")), (50, None), (70, Some("b"))])
        );
        assert_eq!(
            r.aligned(&pair, Align::Step),
            steps(&[(0, Some("a")), (2, Some("b"))])
        );
        // The k-th assertion's instant; past the last, the run's end.
        assert_eq!(r.instant(&pair, Align::Step, 1), 130);
        assert_eq!(r.instant(&pair, Align::Step, 9), 200);
        assert_eq!(r.instant(&pair, Align::Start, 15), 115);
    }

    /// Divergence on the start clock, truth on the recorded clock over the
    /// longer run's length, evidence by (source, text) in order.
    #[test]
    fn two_runs_on_their_own_clocks() {
        const MS: Micros = 1000;
        let a = run(
            steps(&[(110 * MS, Some("wrong")), (160 * MS, Some("right"))]),
            vec![110 * MS, 160 * MS],
            (100 * MS, 200 * MS),
            vec![
                item("E1", "s", "same", 105 * MS),
                item("E2", "s", "same", 106 * MS),
                item("E3", "p", "probe", 108 * MS),
            ],
        );
        let b = run(
            steps(&[(1_020 * MS, Some("right"))]),
            vec![1_020 * MS],
            (1_000 * MS, 1_050 * MS),
            vec![
                item("X1", "s", "same", 1_001 * MS),
                item("X2", "q", "other", 1_002 * MS),
            ],
        );
        let c = compare(&a, &b, Align::Start, &Maps::default(), &BTreeMap::new());
        let p = &c.pairs[0];
        // At +10 ms A had read E1–E3 and B X1 and X2; E1 is X1, read by both.
        assert_eq!(
            p.first,
            Some(First {
                at: 10 * MS,
                a: Some("wrong".into()),
                b: None,
                seen_only_a: vec!["E2".into(), "E3".into()],
                seen_only_b: vec!["X2".into()],
            })
        );
        assert_eq!(p.truth.as_deref(), Some("right"));
        assert_eq!(p.a.time_to_truth_ms, Some(60));
        assert_eq!(p.b.time_to_truth_ms, Some(20));
        // A was wrong from +10 to +60; the window is the longer run (100 ms).
        assert_eq!(p.a.truth.map(|t| t.time_wrong_ms), Some(50));
        assert_eq!(p.b.truth.map(|t| t.time_wrong_ms), Some(0));
        // The second "same" of A has no second in B: two calls, two items.
        assert_eq!(c.evidence.both, vec![("E1".into(), "X1".into())]);
        assert_eq!(c.evidence.only_a, vec!["E2".to_owned(), "E3".to_owned()]);
        assert_eq!(c.evidence.only_b, vec!["X2".to_owned()]);
    }
}
