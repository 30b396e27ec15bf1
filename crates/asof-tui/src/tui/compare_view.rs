//! What the compare view draws, for a what-if fork against its parent or for
//! two runs of one incident (`asof tui A --compare B`): per (agent, topic)
//! two lanes of answers on one clock, the columns where they differ, the
//! claims' legend and lines under it. The view (ui/compare.rs) and its
//! scrolling (the popup's size) read the same [`View`].

use crate::tui::fork_worker::{self as whatif, ForkResult};
use asof_core::engine::answers::Steps;
use asof_core::engine::compare::{Align, Compared, Run};
use asof_core::time::Micros;
use asof_report::export::compare::at_text;

/// The compare view's clock: what its axis counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Recorded instants.
    Recorded,
    /// Microseconds since each run's first event.
    SinceStart,
    /// Assertions, counted from 0.
    Step,
}

/// One (agent, topic): its two lanes and the lines under its legend.
#[derive(Debug, Clone)]
pub struct Lane<'a> {
    /// The lane's title (`triage · root-cause`).
    pub title: String,
    /// The topic whose claims' glyphs the lanes use (A's id).
    pub topic: &'a str,
    /// The upper lane's answers (the parent, or run A).
    pub a: &'a Steps,
    /// The lower lane's answers (the fork, or run B).
    pub b: &'a Steps,
    /// (head, text) lines under the legend.
    pub notes: Vec<(&'static str, String)>,
}

/// The whole view.
#[derive(Debug, Clone)]
pub struct View<'a> {
    /// What is compared, for the title.
    pub what: What<'a>,
    /// The first line: what the policy did, or which runs on which clock.
    pub top: String,
    /// The two lanes' labels, each [`LABEL`] wide.
    pub names: (&'static str, &'static str),
    /// What the axis counts.
    pub clock: Clock,
    /// The axis's first and last reading.
    pub span: (Micros, Micros),
    /// One per (agent, topic) that differs.
    pub lanes: Vec<Lane<'a>>,
    /// What the view says when no lane differs.
    pub empty: &'static str,
    /// Lines after the lanes.
    pub tail: Vec<String>,
    /// The keys, on the border.
    pub keys: &'static str,
}

/// What a compare view compares.
#[derive(Debug, Clone, Copy)]
pub enum What<'a> {
    /// A what-if fork without these evidence ids (comma-separated).
    Fork(&'a str),
    /// Two runs (their labels) on this clock.
    Runs(&'a str, &'a str, Align),
}

/// The width of a lane's label (`  parent `).
pub const LABEL: usize = 9;

impl<'a> View<'a> {
    /// A what-if fork against its parent, on the parent's recorded span.
    pub fn of_fork(fork: &'a ForkResult) -> View<'a> {
        View {
            what: What::Fork(&fork.removed),
            top: whatif::report_line(fork),
            names: ("  parent ", "  fork   "),
            clock: Clock::Recorded,
            span: fork.span,
            lanes: fork
                .lanes
                .iter()
                .map(|lane| Lane {
                    title: format!("{} · {}", lane.agent, lane.topic),
                    topic: &lane.topic,
                    a: &lane.parent,
                    b: &lane.fork,
                    notes: whatif::truth_line(fork, lane)
                        .map(|t| (whatif::TRUTH_HEAD, t))
                        .into_iter()
                        .collect(),
                })
                .collect(),
            empty: "No answer changes: the fork believes what the parent believed.",
            tail: Vec::new(),
            keys: " c: show the fork in the panels · ↑/↓ PgUp/PgDn scroll · ←/→ sideways · Esc closes ",
        }
    }

    /// Two runs, every pair on the compare's clock.
    pub fn of_runs(runs: &'a TwoRuns) -> View<'a> {
        View {
            what: What::Runs(&runs.a, &runs.b, runs.align),
            top: format!(
                "A {} · B {} · aligned by {} ({})",
                runs.a,
                runs.b,
                runs.align.name(),
                asof_report::export::compare::clock(runs.align)
            ),
            names: ("  A      ", "  B      "),
            clock: match runs.align {
                Align::Absolute => Clock::Recorded,
                Align::Start => Clock::SinceStart,
                Align::Step => Clock::Step,
            },
            span: runs.span,
            lanes: runs
                .lanes
                .iter()
                .map(|lane| Lane {
                    title: lane.title.clone(),
                    topic: &lane.topic,
                    a: &lane.a,
                    b: &lane.b,
                    notes: lane.notes.clone(),
                })
                .collect(),
            empty: "The two runs never part: every answer is the same.",
            tail: runs.evidence.clone(),
            keys: " ↑/↓ PgUp/PgDn scroll · ←/→ sideways · Esc closes ",
        }
    }

    /// " What-if without E15 — a replay, not a causal model ", or " A … and B
    /// …, aligned by start ", cut visibly to `width`.
    pub fn title(&self, width: usize) -> String {
        let room = width.saturating_sub(4);
        let text = match self.what {
            What::Fork(removed) => {
                let ids: Vec<&str> = removed.split(',').collect();
                let head = "What-if without ";
                let removed =
                    asof_core::text::id_list(&ids, room.saturating_sub(head.len()).min(40));
                format!("{head}{removed} — a replay, not a causal model")
            }
            What::Runs(_, _, align) => {
                format!(
                    "Two runs, aligned by {} — A and B as recorded",
                    align.name()
                )
            }
        };
        format!(" {} ", asof_core::text::cut(&text, room))
    }

    /// How many lines the view has, and its widest line whose width does not
    /// depend on the screen (lanes and marks are as wide as the popup).
    pub fn size(&self) -> (usize, usize) {
        let w = asof_core::text::width;
        let mut lines = 2 + usize::from(self.lanes.is_empty()) + self.tail.len();
        let mut widest = w(&self.top);
        for line in &self.tail {
            widest = widest.max(w(line));
        }
        for lane in &self.lanes {
            lines += 5 + lane.notes.len();
            widest = widest.max(w(&lane.title));
            let legend: usize = claims(lane)
                .iter()
                .map(|c| 2 + w(&whatif::legend_item(c)))
                .sum();
            widest = widest.max(w(whatif::LEGEND_HEAD) + legend + w(whatif::LEGEND_TAIL));
            for (head, text) in &lane.notes {
                widest = widest.max(w(head) + w(text));
            }
        }
        (lines, widest)
    }
}

/// The claims either lane answers with, in order of first appearance: the
/// lane's legend.
pub fn claims<'s>(lane: &Lane<'s>) -> Vec<&'s str> {
    let mut out: Vec<&str> = Vec::new();
    for (_, claim) in lane.a.iter().chain(lane.b) {
        if let Some(c) = claim.as_deref()
            && !out.contains(&c)
        {
            out.push(c);
        }
    }
    out
}

/// One pair of two runs, as the view draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLane {
    /// The lane's title (`triage · root-cause`).
    pub title: String,
    /// The topic whose claims' glyphs the lanes use (A's id).
    pub topic: String,
    /// Run A's answers.
    pub a: Steps,
    /// Run B's answers.
    pub b: Steps,
    /// (head, text) lines under the legend.
    pub notes: Vec<(&'static str, String)>,
}

/// Two runs compared (`asof compare`'s result), ready to show.
#[derive(Debug, Clone, PartialEq)]
pub struct TwoRuns {
    /// Run A's label.
    pub a: String,
    /// Run B's label.
    pub b: String,
    /// How the runs' clocks were aligned.
    pub align: Align,
    /// The clock's first and last instant over both runs.
    pub span: (Micros, Micros),
    /// One per pair that differs.
    pub lanes: Vec<RunLane>,
    /// The evidence matched across the runs, in lines.
    pub evidence: Vec<String>,
}

/// The most ids a line of the view lists; the rest are counted.
const SHOWN: usize = 12;

/// The head of the line that says where the runs parted.
pub const PARTED_HEAD: &str = "  parted at: ";
/// The head of the line listing what A had seen and B had not.
pub const SEEN_A_HEAD: &str = "  A had seen, B had not (A's ids): ";
/// The head of the line listing what B had seen and A had not.
pub const SEEN_B_HEAD: &str = "  B had seen, A had not (B's ids): ";
/// The head of the line that says when each run was right.
pub const RIGHT_HEAD: &str = "  the truth: ";

impl TwoRuns {
    /// `compared` (of `a` and `b`, labelled `a_label` and `b_label`) for the view.
    pub fn of(a_label: &str, b_label: &str, compared: &Compared, a: &Run, b: &Run) -> TwoRuns {
        let align = compared.align;
        let (src_a, src_b) = (a.sources(), b.sources());
        let named = |ids: &[String], src: &std::collections::HashMap<&str, &str>| -> String {
            if ids.is_empty() {
                return "none".to_owned();
            }
            let mut list = ids
                .iter()
                .take(SHOWN)
                .map(|id| match src.get(id.as_str()) {
                    Some(s) => format!("{id} ({s})"),
                    None => id.clone(),
                })
                .collect::<Vec<_>>()
                .join(", ");
            if ids.len() > SHOWN {
                list.push_str(&format!(
                    " … and {} more (asof compare --format json lists them all)",
                    ids.len() - SHOWN
                ));
            }
            list
        };
        let lanes: Vec<RunLane> = compared
            .pairs
            .iter()
            .map(|p| {
                let mut notes = Vec::new();
                if let Some(f) = &p.first {
                    let claim = |c: &Option<String>| c.clone().unwrap_or_else(|| "(none)".into());
                    notes.push((
                        PARTED_HEAD,
                        format!(
                            "{}: A {} · B {}",
                            at_text(align, f.at),
                            claim(&f.a),
                            claim(&f.b)
                        ),
                    ));
                    notes.push((SEEN_A_HEAD, named(&f.seen_only_a, &src_a)));
                    notes.push((SEEN_B_HEAD, named(&f.seen_only_b, &src_b)));
                }
                if let Some(truth) = &p.truth {
                    let reached = |ms: Option<i64>| {
                        ms.map_or("never".to_owned(), |ms| {
                            format!("after {}", asof_core::time::format_duration(ms * 1000))
                        })
                    };
                    let wrong = |t: Option<asof_core::engine::answers::Truth>| {
                        t.map_or("—".to_owned(), |t| {
                            asof_core::time::format_duration(t.time_wrong_ms * 1000)
                        })
                    };
                    notes.push((
                        RIGHT_HEAD,
                        format!(
                            "{truth}: A {} · B {} · time wrong: A {} · B {}",
                            reached(p.a.time_to_truth_ms),
                            reached(p.b.time_to_truth_ms),
                            wrong(p.a.truth),
                            wrong(p.b.truth)
                        ),
                    ));
                }
                RunLane {
                    title: format!("{} · {}", p.agent_label(), p.topic_label()),
                    topic: p.topic_a.clone(),
                    a: p.a.answers.clone(),
                    b: p.b.answers.clone(),
                    notes,
                }
            })
            .collect();
        let evidence = vec![
            format!(
                "evidence, matched by source and whole text: {} seen by both",
                compared.evidence.both.len()
            ),
            format!(
                "  only A (A's ids): {}",
                named(&compared.evidence.only_a, &src_a)
            ),
            format!(
                "  only B (B's ids): {}",
                named(&compared.evidence.only_b, &src_b)
            ),
        ];
        TwoRuns {
            a: a_label.to_owned(),
            b: b_label.to_owned(),
            align,
            span: compared.span,
            lanes,
            evidence,
        }
    }
}
