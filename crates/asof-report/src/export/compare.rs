//! `asof compare A B` written out: its JSON (SPEC §16's shape, with each
//! pair's divergence windows and convergence instants added), and a table or
//! Markdown a reviewer reads top to bottom — per pair where the runs parted
//! and what each had seen that the other had not, then the evidence.

use super::svg::escape;
use super::table::Table;
use asof_core::engine::compare::{Align, Compared, Pair, Run};
use asof_core::time::{self, Micros, OPEN};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write;

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

/// An instant on the compare's clock as JSON: RFC 3339 (absolute), seconds
/// since the run's first event (start), or the assertion's index (step).
struct At(Align, Micros);

impl Serialize for At {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Align::Absolute => time::format_opt(self.1).serialize(s),
            Align::Start => s.serialize_f64(self.1 as f64 / 1e6),
            Align::Step => s.serialize_i64(self.1),
        }
    }
}

#[derive(Serialize)]
struct Out<'c> {
    a: &'c str,
    b: &'c str,
    align: &'static str,
    pairs: Vec<OutPair<'c>>,
    evidence: OutEvidence<'c>,
}

#[derive(Serialize)]
struct OutPair<'c> {
    topic: &'c str,
    #[serde(skip_serializing_if = "Option::is_none")]
    topic_b: Option<&'c str>,
    agent_a: &'c str,
    agent_b: &'c str,
    truth: Option<&'c str>,
    first_divergence: Option<OutFirst<'c>>,
    windows: Vec<OutWindow<'c>>,
    a: OutSide<'c>,
    b: OutSide<'c>,
}

#[derive(Serialize)]
struct OutFirst<'c> {
    at: At,
    a: Option<&'c str>,
    b: Option<&'c str>,
    seen_only_a: &'c [String],
    seen_only_b: &'c [String],
}

#[derive(Serialize)]
struct OutWindow<'c> {
    from: At,
    to: Option<At>,
    a: Option<&'c str>,
    b: Option<&'c str>,
}

#[derive(Serialize)]
struct OutAnswer<'c> {
    at: At,
    claim: Option<&'c str>,
}

#[derive(Serialize)]
struct OutSide<'c> {
    answers: Vec<OutAnswer<'c>>,
    time_to_truth: Option<f64>,
    time_wrong: Option<f64>,
    converged_at: Option<String>,
}

#[derive(Serialize)]
struct OutEvidence<'c> {
    both: Vec<[&'c str; 2]>,
    only_a: &'c [String],
    only_b: &'c [String],
}

/// One run's side of a pair, as JSON.
fn side(align: Align, s: &asof_core::engine::compare::Side) -> OutSide<'_> {
    OutSide {
        answers: s
            .answers
            .iter()
            .map(|(t, claim)| OutAnswer {
                at: At(align, *t),
                claim: claim.as_deref(),
            })
            .collect(),
        time_to_truth: s.time_to_truth_ms.map(|ms| ms as f64 / 1e3),
        time_wrong: s.truth.map(|t| t.time_wrong_ms as f64 / 1e3),
        converged_at: s
            .truth
            .and_then(|t| t.converged_at)
            .and_then(time::format_opt),
    }
}

/// The JSON `asof compare --format json` prints (pretty), written from the
/// comparison as it is (nothing copied into a tree first: a compare of two
/// 100k-event runs writes ~19 MB).
pub fn json(a_label: &str, b_label: &str, c: &Compared) -> serde_json::Result<String> {
    let align = c.align;
    let out = Out {
        a: a_label,
        b: b_label,
        align: align.name(),
        pairs: c
            .pairs
            .iter()
            .map(|p| OutPair {
                topic: &p.topic_a,
                topic_b: (p.topic_b != p.topic_a).then_some(p.topic_b.as_str()),
                agent_a: &p.agent_a,
                agent_b: &p.agent_b,
                truth: p.truth.as_deref(),
                first_divergence: p.first.as_ref().map(|f| OutFirst {
                    at: At(align, f.at),
                    a: f.a.as_deref(),
                    b: f.b.as_deref(),
                    seen_only_a: &f.seen_only_a,
                    seen_only_b: &f.seen_only_b,
                }),
                windows: p
                    .windows
                    .iter()
                    .map(|w| OutWindow {
                        from: At(align, w.from),
                        to: (w.to != OPEN).then_some(At(align, w.to)),
                        a: w.a.as_deref(),
                        b: w.b.as_deref(),
                    })
                    .collect(),
                a: side(align, &p.a),
                b: side(align, &p.b),
            })
            .collect(),
        evidence: OutEvidence {
            both: c
                .evidence
                .both
                .iter()
                .map(|(x, y)| [x.as_str(), y.as_str()])
                .collect(),
            only_a: &c.evidence.only_a,
            only_b: &c.evidence.only_b,
        },
    };
    serde_json::to_string_pretty(&out)
}

/// What the alignment means, in a few words.
pub fn clock(align: Align) -> &'static str {
    match align {
        Align::Start => "each run's time since its first event",
        Align::Absolute => "recorded time as recorded",
        Align::Step => "the n-th assertion of each run on the pair",
    }
}

/// The table (or Markdown) `asof compare` prints.
pub fn text(
    a_label: &str,
    b_label: &str,
    c: &Compared,
    (a, b): (&Run, &Run),
    provenance: &[String],
    md: bool,
) -> String {
    let align = c.align;
    let mut out = String::new();
    // Where each run came from, first: a report is read apart from the
    // command that made it.
    for line in provenance {
        let _ = writeln!(out, "{}{line}", if md { "> " } else { "" });
    }
    if md && !provenance.is_empty() {
        let _ = writeln!(out);
    }
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
    let (src_a, src_b) = (a.sources(), b.sources());
    let named = |ids: &[String], src: &HashMap<&str, &str>| {
        if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.iter()
                .map(|id| match src.get(id.as_str()) {
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
        let (topic, agents) = (p.topic_label(), p.agent_label());
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

/// The eight colours a pair's claims are drawn in (in order of first appearance).
const PALETTE: [&str; 8] = [
    "#1f5fae", "#c0392b", "#2e8b57", "#8e44ad", "#d68910", "#17a2b8", "#6d4c41", "#7f8c8d",
];

/// One pair's two lanes as an SVG: A above B across the clock, each claim
/// its colour, no answer blank, the first divergence a dashed line.
fn lanes_svg(p: &Pair, span: (Micros, Micros), claims: &[&str]) -> String {
    const W: f64 = 900.0;
    const LEFT: f64 = 24.0;
    let (first, last) = span;
    let x = |t: Micros| LEFT + (t - first) as f64 / (last - first).max(1) as f64 * (W - LEFT);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} 46" width="{W}" height="46" role="img" aria-label="answers of A and B">"#
    );
    for (row, (name, steps)) in [("A", &p.a.answers), ("B", &p.b.answers)]
        .into_iter()
        .enumerate()
    {
        let y = 4.0 + row as f64 * 20.0;
        let _ = write!(
            svg,
            r#"<text x="2" y="{}" font-size="12">{name}</text>"#,
            y + 12.0
        );
        for (i, (t, claim)) in steps.iter().enumerate() {
            let Some(claim) = claim else { continue };
            let end = steps.get(i + 1).map_or(last, |n| n.0);
            let colour = claims
                .iter()
                .position(|c| c == claim)
                .map_or("#999", |k| PALETTE[k % PALETTE.len()]);
            let _ = write!(
                svg,
                r#"<rect x="{:.1}" y="{y}" width="{:.1}" height="16" fill="{colour}"><title>{}: {}</title></rect>"#,
                x(*t),
                (x(end) - x(*t)).max(1.0),
                name,
                escape(claim)
            );
        }
    }
    if let Some(f) = &p.first {
        let _ = write!(
            svg,
            r##"<line x1="{0:.1}" y1="0" x2="{0:.1}" y2="46" stroke="#1d1d1f" stroke-width="1.5" stroke-dasharray="4 2"/>"##,
            x(f.at)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// `asof compare --format html`: one self-contained file (inline CSS and
/// SVG, nothing fetched) — the report's two-run form: per pair the two
/// runs' lanes with the first divergence marked, what each had seen then,
/// the truth, then the evidence matched.
pub fn html(
    a_label: &str,
    b_label: &str,
    c: &Compared,
    a: &Run,
    b: &Run,
    provenance: &[String],
) -> String {
    let align = c.align;
    let (src_a, src_b) = (a.sources(), b.sources());
    let named = |ids: &[String], src: &HashMap<&str, &str>| -> String {
        if ids.is_empty() {
            return "none".to_owned();
        }
        ids.iter()
            .map(|id| match src.get(id.as_str()) {
                Some(s) => format!("<code>{}</code> ({})", escape(id), escape(s)),
                None => format!("<code>{}</code>", escape(id)),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut h = String::new();
    let _ = write!(
        h,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Two runs: {a} and {b} — asof compare</title>
<style>{css}</style></head><body>
<header><h1>Two runs compared</h1>
<p class="sub">A <code>{a}</code> · B <code>{b}</code> · aligned by {align} ({clock}) · asof {version}</p>
{provenance}</header>
"#,
        a = escape(a_label),
        b = escape(b_label),
        css = super::html::CSS,
        align = align.name(),
        clock = clock(align),
        version = env!("CARGO_PKG_VERSION"),
        provenance = provenance
            .iter()
            .map(|l| format!(r#"<p class="sub provenance">{}</p>"#, escape(l)))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let _ = writeln!(
        h,
        "<section><h2>Where the runs parted</h2><table><thead><tr><th>topic</th><th>agent A / B</th><th>parted at</th><th>A said</th><th>B said</th></tr></thead><tbody>"
    );
    let claim = |c: &Option<String>| c.as_deref().map_or_else(|| "(none)".to_owned(), escape);
    for p in &c.pairs {
        let (at, x, y) = match &p.first {
            Some(f) => (escape(&at_text(align, f.at)), claim(&f.a), claim(&f.b)),
            None => (
                "never".into(),
                "(the same throughout)".into(),
                String::new(),
            ),
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{} / {}</td><td>{at}</td><td>{x}</td><td>{y}</td></tr>",
            escape(&p.topic_a),
            escape(&p.agent_a),
            escape(&p.agent_b)
        );
    }
    let _ = writeln!(h, "</tbody></table></section>");
    for p in &c.pairs {
        let mut claims: Vec<&str> = Vec::new();
        for (_, c) in p.a.answers.iter().chain(&p.b.answers) {
            if let Some(c) = c.as_deref()
                && !claims.contains(&c)
            {
                claims.push(c);
            }
        }
        let _ = writeln!(
            h,
            "<section><h2>{} · {}{}</h2><figure>{}<figcaption>{} to {} · {}</figcaption></figure>",
            escape(&p.agent_a),
            escape(&p.topic_a),
            p.truth
                .as_ref()
                .map(|t| format!(" · truth: {}", escape(t)))
                .unwrap_or_default(),
            lanes_svg(p, c.span, &claims),
            escape(&at_text(align, c.span.0)),
            escape(&at_text(align, c.span.1)),
            claims
                .iter()
                .enumerate()
                .map(|(k, c)| format!(
                    r#"<span style="color:{}">■</span> {}"#,
                    PALETTE[k % PALETTE.len()],
                    escape(c)
                ))
                .collect::<Vec<_>>()
                .join(" · ")
        );
        if let Some(f) = &p.first {
            let _ = writeln!(
                h,
                "<p>Parted at {}: A {} · B {}</p><ul><li>A had seen, B had not (A's ids): {}</li><li>B had seen, A had not (B's ids): {}</li></ul>",
                escape(&at_text(align, f.at)),
                claim(&f.a),
                claim(&f.b),
                named(&f.seen_only_a, &src_a),
                named(&f.seen_only_b, &src_b)
            );
        }
        if p.truth.is_some() {
            let outcome = |s: &asof_core::engine::compare::Side| {
                format!(
                    "{}, wrong for {}",
                    s.time_to_truth_ms.map_or_else(
                        || "never reached the truth".to_owned(),
                        |ms| format!("the truth after {}", time::format_duration(ms * 1000))
                    ),
                    s.truth.map_or_else(
                        || "—".into(),
                        |t| time::format_duration(t.time_wrong_ms * 1000)
                    )
                )
            };
            let _ = writeln!(h, "<p>A: {} · B: {}</p>", outcome(&p.a), outcome(&p.b));
        }
        let _ = writeln!(h, "</section>");
    }
    let _ = writeln!(
        h,
        "<section><h2>Evidence, matched by source and whole text</h2><ul><li>seen by both: {}</li><li>only A (A's ids): {}</li><li>only B (B's ids): {}</li></ul></section>",
        c.evidence.both.len(),
        named(&c.evidence.only_a, &src_a),
        named(&c.evidence.only_b, &src_b)
    );
    let _ = writeln!(h, "</body></html>");
    h
}
