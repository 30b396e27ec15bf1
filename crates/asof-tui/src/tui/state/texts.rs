//! The popups' text, built when a popup opens (never while drawing): a topic's
//! history, an evidence item, a version, the events at the cursor, and help.

use super::popup::{LineStyle, TextView, ViewLine};
use crate::tui::keymap;
use crate::tui::theme::claim_glyph;
use asof_core::engine::EffectKind;
use asof_core::time::{self, Micros, format_short};
use asof_store::query::timeline::{Mark, MarkKind, Timeline};
use asof_store::query::{EvidenceItem, LATE};

/// What the INFLUENCE column means, for help and the evidence details.
/// It speaks of any source: no durations from the demo.
pub const INFLUENCE: [&str; 4] = [
    "INFLUENCE: what removing the item would change (a replay, not causal)",
    "  shift -D    without it the resolution comes D sooner: it misled",
    "  shift D     without it the resolution comes D later: it helped",
    "  diverge D   the answer would differ for D in all; none: nothing changes",
];

/// Help lines are wrapped to this width, so help reads whole at 80 columns.
const HELP_WIDTH: usize = 74;

/// `head` then `body` wrapped to [`HELP_WIDTH`], continuations under the body.
fn help_lines(style: LineStyle, head: &str, body: &str) -> Vec<ViewLine> {
    let indent = asof_core::text::width(head);
    let pad = " ".repeat(indent);
    asof_core::text::wrap(body, HELP_WIDTH.saturating_sub(indent).max(20))
        .into_iter()
        .enumerate()
        .map(|(i, l)| ViewLine::new(style, format!("{}{l}", if i == 0 { head } else { &pad })))
        .collect()
}

/// One sentence for an event, as the header and popups show it.
pub fn describe_mark(m: &Mark) -> String {
    let agent = m.agent.as_deref().unwrap_or("?");
    let topic = m.topic.as_deref().unwrap_or("?");
    let cites = if m.cites.is_empty() {
        String::new()
    } else {
        format!(" on {}", m.cites.join(","))
    };
    match m.kind {
        MarkKind::Evidence => format!("{} evidence recorded", m.id),
        MarkKind::Assertion => {
            let zero = if m.effect == EffectKind::ZeroWidth {
                " (zero-width: replaced at the same instant)"
            } else {
                ""
            };
            format!(
                "{} {agent} believes “{}” ({topic}){cites}{zero}",
                m.id,
                m.claim.as_deref().unwrap_or("")
            )
        }
        MarkKind::Reconfirmation => format!(
            "{} {agent} reconfirms “{}” ({topic}){cites}",
            m.id,
            m.claim.as_deref().unwrap_or("")
        ),
        MarkKind::Retraction => {
            let what = m
                .claim
                .as_deref()
                .map(|c| format!(" “{c}”"))
                .unwrap_or_default();
            format!("{} {agent} retracts{what} ({topic}){cites}", m.id)
        }
        MarkKind::Verification => {
            let by = m
                .agent
                .as_deref()
                .filter(|b| !b.is_empty())
                .unwrap_or("someone");
            format!(
                "{} {by} marks {} {}",
                m.id,
                m.cites.join(","),
                m.claim.as_deref().unwrap_or("?")
            )
        }
    }
}

/// The header's words for the latest event at or before `cursor`.
pub fn latest(timeline: &Timeline, cursor: Micros) -> String {
    match &timeline.latest_marks(cursor)[..] {
        [] => "before the first event".to_owned(),
        marks => {
            let m = &marks[marks.len() - 1];
            let more = if marks.len() > 1 {
                format!(" (+{} more at this instant)", marks.len() - 1)
            } else {
                String::new()
            };
            format!("{} {}{more}", format_short(m.recorded_at), describe_mark(m))
        }
    }
}

/// Every version of a topic (one agent's, or all), oldest first, with the
/// events that changed none; each version on one line, claim included.
pub fn history(timeline: &Timeline, cursor: Micros, topic: usize, agent: Option<&str>) -> TextView {
    let t = &timeline.header.topics[topic];
    let who = agent.map_or("all agents".to_owned(), str::to_owned);
    let mut lines = vec![
        ViewLine::new(LineStyle::Heading, format!("{} — {}", t.id, t.question)),
        ViewLine::new(
            LineStyle::Note,
            format!(
                "{who}; every version, oldest first; bold: held at the cursor ({}), dim: not yet recorded",
                format_short(cursor)
            ),
        ),
    ];
    if let Some(truth) = &t.resolution {
        lines.push(ViewLine::new(
            LineStyle::Note,
            format!("resolution: {truth}"),
        ));
    }
    let versions = timeline.topic_versions(topic, agent);
    let agent_w = versions
        .iter()
        .map(|b| asof_core::text::width(&b.version.agent))
        .max()
        .unwrap_or(5)
        .max(5);
    lines.push(ViewLine::new(
        LineStyle::Note,
        format!(
            "{:<25}  {:<agent_w$}  {:<24}  {:<4}  claim  [how it ended; assertion; evidence]",
            "recorded → until", "agent", "valid", "conf"
        ),
    ));
    lines.push(ViewLine::new(LineStyle::Normal, String::new()));
    for b in versions {
        let v = &b.version;
        let style = if v.recorded_at > cursor {
            LineStyle::Future
        } else if v.held_at(cursor) {
            LineStyle::Held
        } else {
            LineStyle::Closed
        };
        let how = match &v.closed {
            Some(c) => c.to_string(),
            None => "held".into(),
        };
        let clip = v
            .clipped_by
            .as_ref()
            .map(|c| format!(", clipped by {c}"))
            .unwrap_or_default();
        lines.push(ViewLine::new(
            style,
            format!(
                "{} → {:<11}  {:<agent_w$}  {:<24}  {:.2}  {}  [{how}; {}; {}{clip}]",
                format_short(v.recorded_at),
                format_short(v.superseded_at),
                v.agent,
                time::format_interval_short(v.valid),
                v.confidence,
                v.claim,
                v.assertion,
                if b.supported_by.is_empty() {
                    "no evidence".into()
                } else {
                    b.supported_by.join(",")
                },
            ),
        ));
    }
    let notes = timeline.topic_marks(topic, agent, |m| m.effect.changed_nothing());
    if !notes.is_empty() {
        lines.push(ViewLine::new(LineStyle::Normal, String::new()));
        lines.push(ViewLine::new(
            LineStyle::Heading,
            "Events that changed no version",
        ));
        for m in notes {
            let style = if m.recorded_at > cursor {
                LineStyle::Future
            } else {
                LineStyle::Note
            };
            lines.push(ViewLine::new(
                style,
                format!("{}  {}", format_short(m.recorded_at), describe_mark(&m)),
            ));
        }
    }
    TextView::new(format!(" History: {} ({who}) ", t.id), lines)
}

/// What one INFLUENCE value means, in words, for this item and this source.
fn influence_meaning(value: &str) -> String {
    let rest = |p: &str| value.split(" · ").next().and_then(|v| v.strip_prefix(p));
    if let Some(d) = rest("shift -") {
        format!("  without it the resolution comes {d} sooner: it misled")
    } else if let Some(d) = rest("shift ") {
        format!("  without it the resolution comes {d} later: it helped")
    } else if let Some(d) = rest("diverge ") {
        format!("  without it the answer would differ for {d} in all")
    } else {
        "  without it nothing changes".to_owned()
    }
}

/// One evidence item: what it says, where it lives, its times, its influence,
/// and what cites it.
pub fn evidence(
    timeline: &Timeline,
    cursor: Micros,
    item: &EvidenceItem,
    influence: Option<(&str, bool)>,
) -> TextView {
    let e = &item.evidence;
    let mut lines = vec![ViewLine::new(
        LineStyle::Heading,
        format!("{} — {} from {}", e.id, e.kind, e.source),
    )];
    // The summary's own lines (tool output keeps its newlines here).
    lines.extend(
        e.summary_shown()
            .lines()
            .map(|l| ViewLine::new(LineStyle::Normal, l.to_owned())),
    );
    let size = asof_core::text::size;
    if let Some(content) = &e.content {
        lines.push(ViewLine::new(
            LineStyle::Note,
            format!(
                "(the summary; what it held, whole — {} — is below “Cited by”)",
                size(content)
            ),
        ));
    }
    lines.extend([
        ViewLine::new(LineStyle::Normal, String::new()),
        ViewLine::new(LineStyle::Normal, format!("locator      {}", e.locator)),
        ViewLine::new(
            LineStyle::Normal,
            format!("observed     {}", time::format(e.observed_at)),
        ),
    ]);
    if let Some(until) = e.observed_until {
        lines.push(ViewLine::new(
            LineStyle::Normal,
            format!("until        {}", time::format(until)),
        ));
    }
    lines.push(ViewLine::new(
        LineStyle::Normal,
        format!("recorded     {}", time::format(e.recorded_at)),
    ));
    let late = e.lag() >= LATE;
    lines.push(ViewLine::new(
        if late {
            LineStyle::Closed
        } else {
            LineStyle::Normal
        },
        format!(
            "lag          {}{}{}",
            time::format_duration(e.lag()),
            match e.observed_until {
                Some(_) => format!(
                    " from the end of the observed interval ({} from its start)",
                    time::format_duration(e.lag_from_start())
                ),
                None => String::new(),
            },
            if late { "  (late-arriving)" } else { "" }
        ),
    ));
    lines.push(ViewLine::new(
        LineStyle::Normal,
        format!("reliability  {:.2}", e.reliability),
    ));
    if let Some((value, of_parent)) = influence {
        let whose = if of_parent {
            " (of the parent store)"
        } else {
            ""
        };
        lines.push(ViewLine::new(
            LineStyle::Normal,
            format!("influence    {value}{whose}"),
        ));
        lines.push(ViewLine::new(LineStyle::Note, influence_meaning(value)));
        lines.extend(INFLUENCE.iter().map(|l| ViewLine::new(LineStyle::Note, *l)));
    }
    lines.push(ViewLine::new(LineStyle::Normal, String::new()));
    // Who verified it, when and why, by the cursor (a reviewer's verdict,
    // never the agent's: design.md §4).
    let verdicts = timeline.ledger.verdicts(&e.id, cursor);
    lines.push(ViewLine::new(
        LineStyle::Heading,
        format!("Verified, as of {}", format_short(cursor)),
    ));
    if verdicts.is_empty() {
        lines.push(ViewLine::new(
            LineStyle::Note,
            "candidate: nobody had verified it by then",
        ));
    }
    for v in verdicts {
        lines.push(ViewLine::new(
            LineStyle::Normal,
            format!("{}  {}{}", format_short(v.since), v.said(), v.note_said()),
        ));
    }
    lines.push(ViewLine::new(LineStyle::Normal, String::new()));
    // What cited it by the cursor, apart from what cited it only later: a
    // citation recorded after the cursor was not known then.
    let known = item.cited_by_at(cursor);
    lines.push(ViewLine::new(
        LineStyle::Heading,
        format!("Cited by, as of {}", format_short(cursor)),
    ));
    if known.is_empty() {
        lines.push(ViewLine::new(
            LineStyle::Note,
            "nothing: no assertion or retraction recorded by then cites it",
        ));
    }
    let cite_line = |id: &String, style: LineStyle| {
        timeline.mark_by_id(id).map(|m| {
            ViewLine::new(
                style,
                format!("{}  {}", format_short(m.recorded_at), describe_mark(&m)),
            )
        })
    };
    lines.extend(
        known
            .iter()
            .filter_map(|id| cite_line(id, LineStyle::Normal)),
    );
    let later = &item.cited_by[known.len()..];
    if !later.is_empty() {
        lines.push(ViewLine::new(
            LineStyle::Heading,
            "Cited later (after the cursor: not known then)",
        ));
        lines.extend(
            later
                .iter()
                .filter_map(|id| cite_line(id, LineStyle::Future)),
        );
    }
    evaluations(timeline, &e.id, &mut lines);
    findings(timeline.review.about_evidence(&e.id), &mut lines);
    if let Some(content) = &e.content {
        lines.push(ViewLine::new(LineStyle::Normal, String::new()));
        lines.push(ViewLine::new(
            LineStyle::Heading,
            format!("What it held, whole ({})", size(content)),
        ));
        lines.extend(
            content
                .lines()
                .map(|l| ViewLine::new(LineStyle::Normal, l.to_owned())),
        );
    }
    TextView::new(format!(" Evidence {} ", e.id), lines)
}

/// One version as of the cursor `at`: its claim, times, how it ended by
/// then (its later fate apart, marked as not known then), what supports it.
pub fn version(timeline: &Timeline, id: u64, at: Micros) -> TextView {
    let Some(b) = timeline.belief_by_id(id) else {
        return TextView::new(" Version ", Vec::new());
    };
    let v = &b.version;
    let line = |label: &str, value: String| {
        ViewLine::new(LineStyle::Normal, format!("{label:<13}{value}"))
    };
    let mut lines = vec![
        ViewLine::new(
            LineStyle::Heading,
            format!("{} — {} believes “{}”", v.topic, v.agent, v.claim),
        ),
        line("confidence", format!("{:.2}", v.confidence)),
        line(
            "valid",
            format!(
                "{} → {}",
                time::format(v.valid.from),
                time::format(v.valid.to)
            ),
        ),
    ];
    // Closed after the cursor: at the cursor it was still held, and what
    // closed it was not known yet.
    let closed_later = v.superseded_at > at && v.superseded_at != asof_core::time::OPEN;
    lines.push(line(
        "held",
        if closed_later {
            format!(
                "{} → still held at the cursor ({})",
                time::format(v.recorded_at),
                time::format(at)
            )
        } else {
            format!(
                "{} → {}",
                time::format(v.recorded_at),
                time::format(v.superseded_at)
            )
        },
    ));
    lines.push(line(
        "assertion",
        format!("{} ({})", v.assertion, v.origin.as_str()),
    ));
    match &v.closed {
        Some(c) if closed_later => lines.push(ViewLine::new(
            LineStyle::Future,
            format!(
                "{:<13}{c} at {} (after the cursor: not known then)",
                "later",
                time::format(v.superseded_at)
            ),
        )),
        Some(c) => lines.push(line("closed", c.to_string())),
        None => {}
    }
    let assumed = timeline.ledger.assumed(&v.assertion);
    if !assumed.is_empty() {
        let fields: Vec<&str> = assumed.iter().map(|a| a.as_str()).collect();
        lines.push(line(
            "assumed",
            format!(
                "{} (filled in by the importer by default, not read from its input)",
                fields.join(", ")
            ),
        ));
    }
    if let Some(by) = &v.clipped_by {
        let asked = time::format(v.requested_valid_to);
        lines.push(line(
            "clipped",
            format!("by {by} (asked for valid until {asked})"),
        ));
    }
    lines.push(ViewLine::new(LineStyle::Normal, String::new()));
    lines.push(ViewLine::new(LineStyle::Heading, "Supported by"));
    if b.supported_by.is_empty() {
        lines.push(ViewLine::new(LineStyle::Note, "no evidence cited"));
    }
    for id in b.supported_by.iter() {
        if let Some((_, e)) = timeline.evidence_by_id(id) {
            let e = &e.evidence;
            lines.push(ViewLine::new(
                LineStyle::Normal,
                format!(
                    "{}  {} · {} · {}",
                    e.id,
                    e.kind,
                    asof_core::text::one_line(&e.summary_shown()),
                    e.locator
                ),
            ));
        }
    }
    evaluations(timeline, &v.assertion, &mut lines);
    findings(timeline.review.about_assertion(&v.assertion), &mut lines);
    TextView::new(format!(" Version {} ", v.assertion), lines)
}

/// The evaluations the trace made of item or assertion `id`, under their
/// heading (kept as the trace gave them: they are not verifications).
fn evaluations(timeline: &Timeline, id: &str, lines: &mut Vec<ViewLine>) {
    let Some(list) = timeline.evaluations.get(id) else {
        return;
    };
    lines.push(ViewLine::new(LineStyle::Normal, String::new()));
    lines.push(ViewLine::new(
        LineStyle::Heading,
        "Evaluations in the trace (not verifications)",
    ));
    lines.extend(
        list.iter()
            .map(|l| ViewLine::new(LineStyle::Normal, l.clone())),
    );
}

/// A reviewer's findings about an item or assertion, under their heading:
/// each made later, about an instant of the log, never part of it.
fn findings<'a>(
    found: impl Iterator<Item = &'a asof_core::review::Finding>,
    lines: &mut Vec<ViewLine>,
) {
    let mut found = found.peekable();
    if found.peek().is_none() {
        return;
    }
    lines.push(ViewLine::new(LineStyle::Normal, String::new()));
    lines.push(ViewLine::new(
        LineStyle::Heading,
        "⚑ Review findings (made later, about the log: not what the agent knew)",
    ));
    for f in found {
        let note = f
            .note
            .as_deref()
            .map_or(String::new(), |n| format!(" — {n}"));
        lines.push(ViewLine::new(
            LineStyle::Normal,
            format!(
                "{} {} by {}, made {} about {}{note}",
                f.id,
                f.verdict,
                f.reviewer,
                time::format(f.made_at),
                time::format_short(f.about)
            ),
        ));
    }
}

/// The events at the cursor's latest recorded instant.
/// A trace's model calls in order, as `asof calls` lists them: when each
/// started, the evidence first in front of the model at it, what its output
/// said and the tool calls it made. Calls after the cursor are dim. `None`
/// when the store was not read from a trace.
pub fn calls(timeline: &Timeline, cursor: Micros) -> Option<TextView> {
    let calls = timeline.calls()?;
    let mut lines = vec![
        ViewLine::new(
            LineStyle::Heading,
            format!("{} model call(s) in order", calls.len()),
        ),
        ViewLine::new(
            LineStyle::Note,
            "read new: the evidence first in front of the model at that call (what it had read before call N is the read new of the calls before it); dim: after the cursor",
        ),
        ViewLine::new(LineStyle::Normal, String::new()),
    ];
    let list = |ids: &[String]| {
        if ids.is_empty() {
            "-".to_owned()
        } else {
            ids.join(",")
        }
    };
    for c in calls.iter() {
        let called: Vec<String> = c
            .tool_calls
            .iter()
            .map(|t| match &t.evidence {
                Some(e) => format!("{}→{e}", t.name),
                None => t.name.clone(),
            })
            .collect();
        lines.push(ViewLine::new(
            if c.started > cursor {
                LineStyle::Future
            } else {
                LineStyle::Normal
            },
            format!(
                "{:>3}  {}  {}  read new {}  said {}  called {}",
                c.n,
                format_short(c.started),
                c.model.as_deref().unwrap_or("-"),
                list(&c.read_new),
                list(&c.said),
                if called.is_empty() {
                    "-".to_owned()
                } else {
                    called.join(", ")
                }
            ),
        ));
    }
    Some(TextView::new(" Model calls ", lines))
}

/// The events popup: the marks at the latest event at or before `cursor`, headed by `latest` (the
/// header's description of it).
pub fn events(timeline: &Timeline, cursor: Micros, latest: &str) -> TextView {
    let marks = timeline.latest_marks(cursor);
    let mut lines = vec![ViewLine::new(
        LineStyle::Heading,
        format!("Events at {latest}"),
    )];
    if marks.is_empty() {
        lines.push(ViewLine::new(
            LineStyle::Note,
            "no event at or before the cursor",
        ));
    }
    for m in marks {
        lines.push(ViewLine::new(
            LineStyle::Normal,
            format!("{}  {}", format_short(m.recorded_at), describe_mark(&m)),
        ));
    }
    TextView::new(" Events ", lines)
}

/// Every key from the keymap, what the glyphs mean, what INFLUENCE means.
pub fn help() -> TextView {
    let mut lines = Vec::new();
    for (context, rows) in keymap::help() {
        lines.push(ViewLine::new(LineStyle::Heading, context.title()));
        for (keys, what) in rows {
            lines.extend(help_lines(
                LineStyle::Normal,
                &format!("  {keys:<16}"),
                what,
            ));
        }
    }
    let glyphs = [
        ("timeline", "• ● ◉ evidence (1, 2-4, 5+)  ▴ ▲ assertion  ↻ reconfirmation  ✕ retraction".to_owned()),
        (
            "beliefs",
            format!(
                "{} {} {} … one glyph per claim  ✗ closed just now  ↻ reconfirmed  + new  ✓ the topic's resolution",
                claim_glyph(0),
                claim_glyph(1),
                claim_glyph(2)
            ),
        ),
        ("evidence", "!lag = late-arriving (an hour or more); dim = recorded after the cursor; CITED BY = citations recorded by the cursor".to_owned()),
        (
            "plane",
            "one rectangle per version, filled with its claim's glyph; ━ superseded ✕ retracted → ↑ open ends; ╱ valid = recorded; ✦ evidence".to_owned(),
        ),
        (
            "compare",
            "per agent and topic, the parent's and the fork's answer over recorded time; ^ where they differ; · no answer".to_owned(),
        ),
    ];
    lines.push(ViewLine::new(LineStyle::Heading, "Mouse"));
    lines.extend(help_lines(
        LineStyle::Normal,
        "  ",
        "click the timeline to seek, a row to select, the plane to put the crosshair there; the wheel steps or scrolls",
    ));
    lines.push(ViewLine::new(LineStyle::Heading, "Glyphs"));
    for (name, what) in &glyphs {
        lines.extend(help_lines(
            LineStyle::Normal,
            &format!("  {name:<10}"),
            what,
        ));
    }
    lines.push(ViewLine::new(LineStyle::Heading, "Columns"));
    for l in INFLUENCE {
        lines.push(ViewLine::new(LineStyle::Normal, format!("  {l}")));
    }
    TextView::new(" Help ", lines)
}
