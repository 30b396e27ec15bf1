//! `asof compare A B` written out: its JSON (SPEC §16's shape, with each
//! pair's divergence windows and convergence instants added), and a table or
//! Markdown a reviewer reads top to bottom — per pair where the runs parted
//! and what each had seen that the other had not, then the evidence.

use super::table::Table;
use crate::engine::compare::{Align, Compared, Pair, Run};
use crate::time::{self, Micros, OPEN};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt::Write;

/// An instant on the compare's clock, as JSON: RFC 3339 (absolute), seconds
/// since the run's first event (start), or the assertion's index (step).
fn at_json(align: Align, t: Micros) -> Value {
    match align {
        Align::Absolute => time::format_opt(t).map_or(Value::Null, Value::String),
        Align::Start => json!(t as f64 / 1e6),
        Align::Step => json!(t),
    }
}

/// An instant on the compare's clock, as text.
pub fn at_text(align: Align, t: Micros) -> String {
    match align {
        Align::Absolute => time::format(t),
        Align::Start => format!("+{}", seconds(t)),
        Align::Step => format!("assertion #{}", t + 1),
    }
}

/// Seconds, with as few digits as say them exactly (to the microsecond).
fn seconds(micros: i64) -> String {
    let s = format!("{:.6}", micros as f64 / 1e6);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} s")
}

/// The JSON `asof compare --format json` prints.
pub fn json(a_label: &str, b_label: &str, c: &Compared) -> Value {
    let align = c.align;
    let side = |s: &crate::engine::compare::Side| {
        json!({
            "answers": s.answers.iter().map(|(t, claim)| json!({"at": at_json(align, *t), "claim": claim})).collect::<Vec<_>>(),
            "time_to_truth": s.time_to_truth_ms.map(|ms| ms as f64 / 1e3),
            "time_wrong": s.truth.map(|t| t.time_wrong_ms as f64 / 1e3),
            "converged_at": s.truth.and_then(|t| t.converged_at).and_then(time::format_opt),
        })
    };
    let pair = |p: &Pair| {
        let mut v = json!({
            "topic": p.topic_a,
            "agent_a": p.agent_a,
            "agent_b": p.agent_b,
            "truth": p.truth,
            "first_divergence": p.first.as_ref().map(|f| json!({
                "at": at_json(align, f.at),
                "a": f.a,
                "b": f.b,
                "seen_only_a": f.seen_only_a,
                "seen_only_b": f.seen_only_b,
            })),
            "windows": p.windows.iter().map(|w| json!({
                "from": at_json(align, w.from),
                "to": if w.to == OPEN { Value::Null } else { at_json(align, w.to) },
                "a": w.a,
                "b": w.b,
            })).collect::<Vec<_>>(),
            "a": side(&p.a),
            "b": side(&p.b),
        });
        if p.topic_b != p.topic_a {
            v["topic_b"] = json!(p.topic_b);
        }
        v
    };
    json!({
        "a": a_label,
        "b": b_label,
        "align": align.name(),
        "pairs": c.pairs.iter().map(pair).collect::<Vec<_>>(),
        "evidence": {
            "both": c.evidence.both.iter().map(|(x, y)| json!([x, y])).collect::<Vec<_>>(),
            "only_a": c.evidence.only_a,
            "only_b": c.evidence.only_b,
        },
    })
}

/// What the alignment means, in a few words.
fn clock(align: Align) -> &'static str {
    match align {
        Align::Start => "each run's time since its first event",
        Align::Absolute => "recorded time as recorded",
        Align::Step => "the n-th assertion of each run on the pair",
    }
}

/// The table (or Markdown) `asof compare` prints.
pub fn text(a_label: &str, b_label: &str, c: &Compared, a: &Run, b: &Run, md: bool) -> String {
    let align = c.align;
    let mut out = String::new();
    let heading = |out: &mut String, s: &str| {
        if md {
            let _ = write!(out, "\n## {s}\n\n");
        } else {
            let _ = write!(out, "\n{s}:\n");
        }
    };
    let _ = writeln!(
        out,
        "{}A {a_label} and B {b_label}, aligned by {} ({})",
        if md { "# " } else { "" },
        align.name(),
        clock(align)
    );
    let source = |run: &Run| -> HashMap<String, String> {
        run.evidence
            .iter()
            .map(|e| (e.id.to_owned(), e.source.to_owned()))
            .collect()
    };
    let (src_a, src_b) = (source(a), source(b));
    let named = |ids: &[String], src: &HashMap<String, String>| {
        if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.iter()
                .map(|id| match src.get(id) {
                    Some(s) => format!("{id} ({s})"),
                    None => id.clone(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let claim = |c: &Option<String>| c.clone().unwrap_or_else(|| "(none)".into());
    heading(&mut out, "Where the runs parted");
    let mut parted = Table::new(vec![
        "TOPIC",
        "AGENT A / B",
        "PARTED AT",
        "A SAID",
        "B SAID",
    ]);
    for p in &c.pairs {
        let topic = if p.topic_b == p.topic_a {
            p.topic_a.clone()
        } else {
            format!("{} / {}", p.topic_a, p.topic_b)
        };
        let agents = if p.agent_a == p.agent_b {
            p.agent_a.clone()
        } else {
            format!("{} / {}", p.agent_a, p.agent_b)
        };
        match &p.first {
            Some(f) => parted.row(vec![
                topic,
                agents,
                at_text(align, f.at),
                claim(&f.a),
                claim(&f.b),
            ]),
            None => parted.row(vec![
                topic,
                agents,
                "never".into(),
                "(the same throughout)".into(),
                String::new(),
            ]),
        }
    }
    out.push_str(&if md { parted.markdown() } else { parted.text() });
    for p in &c.pairs {
        let Some(f) = &p.first else { continue };
        heading(
            &mut out,
            &format!(
                "{} ({}): seen by one run only when they parted at {}",
                p.topic_a,
                p.agent_a,
                at_text(align, f.at)
            ),
        );
        let bullet = if md { "- " } else { "  " };
        let _ = writeln!(
            out,
            "{bullet}A had seen, B had not (A's ids): {}",
            named(&f.seen_only_a, &src_a)
        );
        let _ = writeln!(
            out,
            "{bullet}B had seen, A had not (B's ids): {}",
            named(&f.seen_only_b, &src_b)
        );
    }
    heading(&mut out, "Answers, and the truth");
    let bullet = if md { "- " } else { "  " };
    for (k, p) in c.pairs.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}{} ({}{}){}",
            match (md, k) {
                (true, 0) => "### ",
                (true, _) => "\n### ",
                (false, _) => "\n",
            },
            p.topic_a,
            p.agent_a,
            if p.agent_b == p.agent_a {
                String::new()
            } else {
                format!(" / {}", p.agent_b)
            },
            match &p.truth {
                Some(t) => format!(" · truth: {t}"),
                None => " · truth unknown".to_owned(),
            }
        );
        for (run, side) in [("A", &p.a), ("B", &p.b)] {
            let outcome = match (&p.truth, side.time_to_truth_ms, side.truth) {
                (None, ..) => String::new(),
                (Some(_), reached, Some(t)) => format!(
                    " {}, wrong for {}",
                    reached.map_or_else(
                        || "never reached the truth".to_owned(),
                        |ms| format!("the truth after {}", time::format_duration(ms * 1000))
                    ),
                    time::format_duration(t.time_wrong_ms * 1000)
                ),
                (Some(_), ..) => String::new(),
            };
            if run == "B" && p.b.answers == p.a.answers {
                let _ = writeln!(out, "{bullet}B:{outcome}; the same answers as A");
                continue;
            }
            let _ = writeln!(out, "{bullet}{run}:{outcome}");
            // Markdown nests the answers under their run.
            let item = if md { "  - " } else { "    " };
            if side.answers.is_empty() {
                let _ = writeln!(out, "{item}(no answer)");
            }
            let at: Vec<String> = side
                .answers
                .iter()
                .map(|(t, _)| at_text(align, *t))
                .collect();
            let wide = at.iter().map(|a| a.chars().count()).max().unwrap_or(0);
            for (at, (_, c)) in at.iter().zip(&side.answers) {
                let _ = writeln!(
                    out,
                    "{item}{at:>wide$}  {}",
                    c.as_deref().unwrap_or("(none)")
                );
            }
        }
    }
    heading(&mut out, "Evidence, matched by source and whole text");
    let bullet = if md { "- " } else { "  " };
    let _ = writeln!(out, "{bullet}seen by both: {}", c.evidence.both.len());
    let _ = writeln!(out, "{bullet}only A: {}", named(&c.evidence.only_a, &src_a));
    let _ = writeln!(out, "{bullet}only B: {}", named(&c.evidence.only_b, &src_b));
    out
}
