//! `asof export --format svg --topic X`: one topic's valid × recorded plane as a
//! standalone SVG for a postmortem.
//!
//! ```text
//!  recorded ↑ ┌────────────────────────────┐  legend
//!            │   ▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒→    │  ■ claim A
//!            │ ▓▓▓▓▓▓▓▓▓▓╱  •             │  ■ claim B
//!            │        ╱  •                │  • evidence
//!            └────────────────────────────┘  ╱ valid = recorded
//!                                     valid →
//! ```
//!
//! One rectangle per version (x: its valid interval, y: the recorded interval it
//! was held; open ends run to the edge and are marked with an arrow), coloured by
//! claim; evidence as points at (observed, recorded); the diagonal valid =
//! recorded. Every shape carries its times as `data-*` attributes, and the root
//! carries the axes' ranges, so the picture can be checked against the data.
//! Written by hand: six element kinds and one escaping rule do not need a crate.

use super::{ExportError, Provenance};
use asof_core::axis;
use asof_core::model::{EventBody, Origin, RetractTarget, Version};
use asof_core::time::{self, Micros, OPEN};
use asof_store::query::{self, EvidenceItem};
use asof_store::store::Store;
use std::fmt::Write;

const WIDTH: f64 = 1060.0;
const HEIGHT: f64 = 680.0;
const LEFT: f64 = 156.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 70.0;

/// Fill colours per claim, in order of first appearance (colour-blind-safe set).
const PALETTE: [&str; 8] = [
    "#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB", "#000000",
];

/// The plane of `topic` for `agent` (default: the first agent in the header that
/// holds beliefs about it), as the HTML report embeds it — once per agent
/// ([`agents_of`]); the report says where it came from.
pub fn plane(store: &Store, topic: &str, agent: Option<&str>) -> Result<String, ExportError> {
    drawn(store, topic, agent, &[], "", Place::Inline)
}

/// Where a plane's `<svg>` element goes.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// A file of its own: with the XML declaration.
    File,
    /// Inside an HTML page.
    Inline,
    /// Inside a stack of planes, this far down.
    Stacked(f64),
}

/// The agents holding beliefs about `topic`, in the header's order.
pub fn agents_of(store: &Store, topic: &str) -> Result<Vec<String>, ExportError> {
    let all = query::versions_of(store, topic, None)?;
    Ok(store
        .header()
        .agents
        .iter()
        .filter(|a| all.iter().any(|b| *b.version.agent == *a.id))
        .map(|a| a.id.clone())
        .collect())
}

/// [`plane`] as a file of its own (`asof export --format svg`): without
/// `--agent`, one plane per agent holding beliefs about the topic, stacked;
/// a what-if's title begins `What-if:`, and lines under the planes carry the
/// what-if banner and lineage and the provenance (design.md §8).
pub fn standalone(
    store: &Store,
    topic: &str,
    agent: Option<&str>,
    prov: &Provenance,
) -> Result<String, ExportError> {
    let foot = foot_lines(prov);
    let agents = match agent {
        Some(a) => vec![a.to_owned()],
        None => agents_of(store, topic)?,
    };
    if agents.len() <= 1 {
        return drawn(
            store,
            topic,
            agents.first().map(String::as_str),
            &foot,
            prov.title_prefix(),
            Place::File,
        );
    }
    // One plane per agent, each a nested <svg> with its own axes and data-*.
    let height = HEIGHT * agents.len() as f64 + 18.0 * foot.len() as f64;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12" data-topic="{}" data-agents="{}">
<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="white"/>"##,
        escape(topic),
        escape(&agents.join(" "))
    );
    for (i, a) in agents.iter().enumerate() {
        let placed = drawn(
            store,
            topic,
            Some(a),
            &[],
            prov.title_prefix(),
            Place::Stacked(HEIGHT * i as f64),
        )?;
        let _ = writeln!(s, "{placed}");
    }
    foot_svg(
        &mut s,
        &foot,
        prov.what_if.is_some(),
        HEIGHT * agents.len() as f64,
    );
    let _ = writeln!(s, "</svg>");
    Ok(s)
}

/// The lines a standalone plane carries under it.
fn foot_lines(prov: &Provenance) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(w) = &prov.what_if {
        lines.push(w.banner());
        lines.push(w.lineage());
    }
    lines.push(prov.line());
    lines
}

/// `lines` under a plane whose drawing ends at `bottom`; the first is the
/// what-if banner when `what_if`.
fn foot_svg(s: &mut String, lines: &[String], what_if: bool, bottom: f64) {
    for (i, line) in lines.iter().enumerate() {
        let banner = what_if && i == 0;
        let _ = writeln!(
            s,
            r##"<text class="{}" x="12" y="{:.0}" fill="{}"{}>{}</text>"##,
            if banner { "what-if" } else { "provenance" },
            bottom - 4.0 + 18.0 * i as f64,
            if banner { "#b00020" } else { "#555" },
            if banner { r#" font-weight="bold""# } else { "" },
            escape(line)
        );
    }
}

/// One agent's plane, `foot` lines under it, its title after `prefix`: what
/// is drawn, the axes fitted to it, then each layer (versions, the diagonal,
/// evidence, legend) in turn.
fn drawn(
    store: &Store,
    topic: &str,
    agent: Option<&str>,
    foot: &[String],
    prefix: &str,
    place: Place,
) -> Result<String, ExportError> {
    let Picked {
        topic: t,
        agent,
        all,
        evidence,
    } = pick(store, topic, agent)?;
    let versions: Vec<&Version> = all
        .iter()
        .map(|b| &b.version)
        .filter(|v| *v.agent == *agent)
        .collect();
    let frame = Frame::fitted(&versions, &evidence);
    let Frame { x0, x1, y0, y1 } = frame;
    let (plot_w, plot_h) = (frame.plot_w(), frame.plot_h());
    let (x, y) = (|t: Micros| frame.x(t), |t: Micros| frame.y(t));
    let mut claims: Vec<&str> = Vec::new();
    for v in &versions {
        if !claims.contains(&&*v.claim) {
            claims.push(&v.claim);
        }
    }
    let colour = |claim: &str| {
        let i = claims.iter().position(|c| *c == claim).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    };

    let height = HEIGHT + 18.0 * foot.len() as f64;
    let (opening, at) = match place {
        Place::File => (
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
            String::new(),
        ),
        Place::Inline => ("", String::new()),
        Place::Stacked(y) => ("", format!("y=\"{y}\" ")),
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"{opening}<svg {at}xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12" data-topic="{}" data-agent="{}" data-valid-min="{x0}" data-valid-max="{x1}" data-recorded-min="{y0}" data-recorded-max="{y1}" data-plot="{LEFT} {TOP} {plot_w} {plot_h}">
<defs><marker id="open" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker></defs>
<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="white"/>"##,
        escape(topic),
        escape(&agent)
    );
    let _ = writeln!(
        s,
        r##"<text x="{LEFT}" y="24" font-size="16" font-weight="bold">{}{} — {}</text>
<text x="{LEFT}" y="44" fill="#555">agent {} · x: valid time · y: recorded time (later is higher) · {}</text>"##,
        prefix,
        escape(topic),
        escape(&t.question),
        escape(&agent),
        escape(&store.header().incident.title)
    );
    let _ = writeln!(
        s,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>"##
    );
    axes(&mut s, (x0, x1), (y0, y1), &x, &y);

    draw_versions(&mut s, &frame, &versions, &colour);
    draw_diagonal(&mut s, &frame);
    let off_axis = draw_evidence(&mut s, &frame, &evidence);
    draw_legend(&mut s, &claims, &colour, off_axis, t.cardinality);
    // Under the plane: what it is and where it came from.
    let what_if = prefix.starts_with("What-if");
    foot_svg(&mut s, foot, what_if, HEIGHT);
    let _ = writeln!(s, "</svg>");
    Ok(s)
}

/// What one agent's plane shows: the topic, the agent (the first holding
/// beliefs about it when none is named), every version of the topic, and
/// the evidence this agent's events on the topic cite.
struct Picked {
    topic: asof_core::model::Topic,
    agent: String,
    all: Vec<query::Belief>,
    evidence: Vec<EvidenceItem>,
}

fn pick(store: &Store, topic: &str, agent: Option<&str>) -> Result<Picked, ExportError> {
    let header = store.header();
    let Some(t) = header.topic(topic).cloned() else {
        let known = asof_core::model::known_ids(header.topics.iter().map(|t| t.id.as_str()), topic);
        return Err(ExportError::UnknownTopic(topic.into(), known));
    };
    let all = query::versions_of(store, topic, None)?;
    let agent = match agent {
        Some(a) => a.to_owned(),
        None => header
            .agents
            .iter()
            .find(|a| all.iter().any(|b| *b.version.agent == *a.id))
            .or(header.agents.first())
            .map(|a| a.id.clone())
            .unwrap_or_default(),
    };
    let versions: Vec<&Version> = all
        .iter()
        .map(|b| &b.version)
        .filter(|v| *v.agent == *agent)
        .collect();
    if versions.is_empty() && all.iter().any(|b| *b.version.agent != *agent) {
        return Err(ExportError::UnknownAgent(agent, topic.into()));
    }
    // Evidence cited by this agent's events on this topic.
    let cited: std::collections::HashSet<String> = store
        .log()?
        .events
        .iter()
        .filter(|e| match &e.body {
            EventBody::Believe(a) => a.topic == topic && a.agent == agent,
            EventBody::Retract(r) => match &r.target {
                RetractTarget::Topic { topic: t, .. } => t == topic && r.agent == agent,
                RetractTarget::Assertion(a) => versions.iter().any(|v| *v.assertion == **a),
            },
            EventBody::Evidence(_) | EventBody::Verify(_) => false,
        })
        .flat_map(|e| e.cites().to_vec())
        .collect();
    let evidence: Vec<EvidenceItem> = query::evidence(store)?
        .into_iter()
        .filter(|e| cited.contains(&e.evidence.id))
        .collect();

    Ok(Picked {
        topic: t,
        agent,
        all,
        evidence,
    })
}

/// The plot's axes: valid time `[x0, x1]` across, recorded time `[y0, y1]` up.
#[derive(Debug, Clone, Copy)]
struct Frame {
    x0: Micros,
    x1: Micros,
    y0: Micros,
    y1: Micros,
}

impl Frame {
    fn fitted(versions: &[&Version], evidence: &[EvidenceItem]) -> Frame {
        // Axis ranges, fitted to the versions (design.md §8): the valid axis spans
        // their valid intervals and the recorded span they were held over (so
        // the diagonal is on it); evidence observed far outside is marked at the
        // edge instead of squeezing the incident into a sliver. Padded by 3%.
        let finite = |t: Micros| (t != OPEN).then_some(t);
        let ys: Vec<Micros> = versions
            .iter()
            .flat_map(|v| [Some(v.recorded_at), finite(v.superseded_at)])
            .chain(evidence.iter().map(|e| Some(e.evidence.recorded_at)))
            .flatten()
            .collect();
        let xs: Vec<Micros> = if versions.is_empty() {
            evidence
                .iter()
                .flat_map(|e| [Some(e.evidence.observed_at), e.evidence.observed_until])
                .flatten()
                .collect()
        } else {
            versions
                .iter()
                .flat_map(|v| [Some(v.valid.from), finite(v.valid.to)])
                .flatten()
                .chain(ys.iter().copied())
                .collect()
        };
        let range = |it: &mut dyn Iterator<Item = Micros>| {
            let (lo, hi) = it.fold((i64::MAX, i64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)));
            if lo > hi {
                (0, 1)
            } else {
                let pad = ((hi - lo) / 33).max(1_000);
                (lo - pad, hi + pad)
            }
        };
        let (x0, x1) = range(&mut xs.into_iter());
        let (y0, y1) = range(&mut ys.into_iter());
        Frame { x0, x1, y0, y1 }
    }

    fn plot_w(&self) -> f64 {
        WIDTH - LEFT - RIGHT
    }

    fn plot_h(&self) -> f64 {
        HEIGHT - TOP - BOTTOM
    }

    fn x(&self, t: Micros) -> f64 {
        LEFT + (t.clamp(self.x0, self.x1) - self.x0) as f64 / (self.x1 - self.x0) as f64
            * self.plot_w()
    }

    fn y(&self, t: Micros) -> f64 {
        TOP + (self.y1 - t.clamp(self.y0, self.y1)) as f64 / (self.y1 - self.y0) as f64
            * self.plot_h()
    }
}

/// One rectangle per version (x: its valid interval, y: the recorded
/// interval it was held), open ends marked with an arrow.
fn draw_versions(
    s: &mut String,
    frame: &Frame,
    versions: &[&Version],
    colour: &dyn Fn(&str) -> &'static str,
) {
    let (x, y) = (|t: Micros| frame.x(t), |t: Micros| frame.y(t));
    let (x1, y1) = (frame.x1, frame.y1);
    let _ = writeln!(s, r#"<g class="versions">"#);
    for v in versions {
        let (left, right) = (x(v.valid.from), x(v.valid.to.min(x1)));
        let (top, bottom) = (y(v.superseded_at.min(y1)), y(v.recorded_at));
        let dash = if v.origin == Origin::Split {
            r#" stroke-dasharray="4 3""#
        } else {
            ""
        };
        let when = |t: Micros| time::format_opt(t).unwrap_or_else(|| "open".into());
        let _ = writeln!(
            s,
            r#"<rect class="version" x="{left:.2}" y="{top:.2}" width="{:.2}" height="{:.2}" fill="{}" fill-opacity="0.55" stroke="{}"{dash} data-claim="{}" data-valid-from="{}" data-valid-to="{}" data-recorded-at="{}" data-superseded-at="{}" data-assertion="{}"><title>{} ({:.2}) valid [{}, {}) held [{}, {}) — {}</title></rect>"#,
            (right - left).max(0.0),
            (bottom - top).max(0.0),
            colour(&v.claim),
            colour(&v.claim),
            escape(&v.claim),
            when(v.valid.from),
            when(v.valid.to),
            when(v.recorded_at),
            when(v.superseded_at),
            escape(&v.assertion),
            escape(&v.claim),
            v.confidence,
            when(v.valid.from),
            when(v.valid.to),
            when(v.recorded_at),
            when(v.superseded_at),
            escape(&v.assertion),
        );
        if v.valid.to == OPEN {
            let mid = (top + bottom) / 2.0;
            let _ = writeln!(
                s,
                r##"<line class="open-valid" x1="{:.2}" y1="{mid:.2}" x2="{:.2}" y2="{mid:.2}" stroke="#333" marker-end="url(#open)"/>"##,
                right - 14.0,
                right - 2.0
            );
        }
        if v.superseded_at == OPEN {
            let mid = (left + right) / 2.0;
            let _ = writeln!(
                s,
                r##"<line class="open-recorded" x1="{mid:.2}" y1="{:.2}" x2="{mid:.2}" y2="{:.2}" stroke="#333" marker-end="url(#open)"/>"##,
                top + 14.0,
                top + 2.0
            );
        }
    }
    let _ = writeln!(s, "</g>");
}

/// The diagonal valid = recorded, where both axes cover it.
fn draw_diagonal(s: &mut String, frame: &Frame) {
    let Frame { x0, x1, y0, y1 } = *frame;
    let (x, y) = (|t: Micros| frame.x(t), |t: Micros| frame.y(t));
    let (lo, hi) = (x0.max(y0), x1.min(y1));
    if lo < hi {
        let _ = writeln!(
            s,
            r##"<line class="diagonal" x1="{:.2}" y1="{:.2}" x2="{:.2}" y2="{:.2}" stroke="#777" stroke-dasharray="6 4"/>"##,
            x(lo),
            y(lo),
            x(hi),
            y(hi)
        );
    }
}

/// Evidence: a point at (observed, recorded); one observed off the valid
/// axis is a triangle at the edge, pointing where it lies. Returns whether
/// any was off the axis (the legend then names the marker).
fn draw_evidence(s: &mut String, frame: &Frame, evidence: &[EvidenceItem]) -> bool {
    let Frame { x0, x1, .. } = *frame;
    let plot_w = frame.plot_w();
    let (x, y) = (|t: Micros| frame.x(t), |t: Micros| frame.y(t));
    let _ = writeln!(s, r#"<g class="evidence">"#);
    let mut off_axis = false;
    for item in evidence {
        let e = &item.evidence;
        let title = format!(
            "{} {} ({}): {} — observed {}, recorded {}",
            escape(&e.id),
            escape(&e.kind),
            escape(&e.locator),
            escape(&e.summary_shown()),
            time::format(e.observed_at),
            time::format(e.recorded_at),
        );
        let data = format!(
            r#"data-id="{}" data-observed-at="{}" data-recorded-at="{}""#,
            escape(&e.id),
            time::format(e.observed_at),
            time::format(e.recorded_at),
        );
        let cy = y(e.recorded_at);
        if (x0..=x1).contains(&e.observed_at) {
            let _ = writeln!(
                s,
                r##"<circle class="evidence" cx="{:.2}" cy="{cy:.2}" r="4" fill="#111" stroke="white" {data}><title>{title}</title></circle>"##,
                x(e.observed_at),
            );
            continue;
        }
        off_axis = true;
        let (edge, side, dx) = if e.observed_at < x0 {
            (LEFT, "left", -1.0)
        } else {
            (LEFT + plot_w, "right", 1.0)
        };
        let _ = writeln!(
            s,
            r##"<path class="evidence off-axis" d="M{:.2},{:.2} L{:.2},{:.2} L{:.2},{:.2} z" fill="#111" data-side="{side}" {data}><title>{title} (observed off the axis, to the {side})</title></path>"##,
            edge + dx * 9.0,
            cy,
            edge + dx * 1.0,
            cy - 5.0,
            edge + dx * 1.0,
            cy + 5.0,
        );
    }
    let _ = writeln!(s, "</g>");

    off_axis
}

/// The legend: each claim's colour, then every mark the plane uses.
fn draw_legend(
    s: &mut String,
    claims: &[&str],
    colour: &dyn Fn(&str) -> &'static str,
    off_axis: bool,
    cardinality: asof_core::model::Cardinality,
) {
    let lx = WIDTH - RIGHT + 20.0;
    let _ = writeln!(s, r#"<g class="legend">"#);
    let mut ly = TOP + 10.0;
    for c in claims {
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="{ly}" width="14" height="14" fill="{}" fill-opacity="0.55" stroke="{}"/><text x="{}" y="{}">{}</text>"#,
            colour(c),
            colour(c),
            lx + 20.0,
            ly + 11.0,
            escape(&truncate(c, 26))
        );
        ly += 22.0;
    }
    let _ = writeln!(
        s,
        r##"<circle cx="{}" cy="{}" r="4" fill="#111"/><text x="{}" y="{}">evidence (observed, recorded)</text>
<line x1="{lx}" y1="{}" x2="{}" y2="{}" stroke="#777" stroke-dasharray="6 4"/><text x="{}" y="{}">valid = recorded</text>
<rect x="{lx}" y="{}" width="14" height="14" fill="none" stroke="#333" stroke-dasharray="4 3"/><text x="{}" y="{}">split piece</text>
<line x1="{lx}" y1="{}" x2="{}" y2="{}" stroke="#333" marker-end="url(#open)"/><text x="{}" y="{}">open end</text>"##,
        lx + 7.0,
        ly + 7.0,
        lx + 20.0,
        ly + 11.0,
        ly + 29.0,
        lx + 14.0,
        ly + 29.0,
        lx + 20.0,
        ly + 33.0,
        ly + 44.0,
        lx + 20.0,
        ly + 55.0,
        ly + 73.0,
        lx + 14.0,
        ly + 73.0,
        lx + 20.0,
        ly + 77.0,
    );
    let mut extra = ly + 99.0;
    if off_axis {
        let _ = writeln!(
            s,
            r##"<path d="M{lx},{:.0} L{:.0},{:.0} L{:.0},{:.0} z" fill="#111"/><text x="{}" y="{:.0}">evidence observed off the axis</text>"##,
            extra - 4.0,
            lx + 8.0,
            extra - 9.0,
            lx + 8.0,
            extra + 1.0,
            lx + 20.0,
            extra
        );
        extra += 22.0;
    }
    if cardinality == asof_core::model::Cardinality::Many {
        let _ = writeln!(
            s,
            r##"<text x="{lx}" y="{extra:.0}" fill="#555">darker where claims overlap</text><text x="{lx}" y="{:.0}" fill="#555">(held at once: a many-valued topic)</text>"##,
            extra + 16.0
        );
    }
    let _ = writeln!(s, "</g>");
}

/// Tick marks and time labels on both axes: round instants at a step people
/// read, labels dated when an axis spans more than a day and distinct at the
/// step's resolution (an 8-minute run ticks in seconds, not `09:39` thrice).
fn axes(
    s: &mut String,
    (x0, x1): (Micros, Micros),
    (y0, y1): (Micros, Micros),
    x: &dyn Fn(Micros) -> f64,
    y: &dyn Fn(Micros) -> f64,
) {
    let _ = writeln!(s, r##"<g class="axes" fill="#333">"##);
    let bottom = HEIGHT - BOTTOM;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    // A "cell" of the horizontal axis is one character, about 7 px.
    let xdated = axis::dated(x1 - x0);
    let (xstep, xticks) = axis::ticks(x0, x1, (plot_w / 7.0) as i64, xdated);
    for (_, t) in xticks {
        let px = x(t);
        let _ = writeln!(
            s,
            r##"<line class="tick" x1="{px:.2}" y1="{bottom}" x2="{px:.2}" y2="{}" stroke="#333"/><text class="tick" x="{px:.2}" y="{}" text-anchor="middle" data-at="{}">{}</text>"##,
            bottom + 5.0,
            bottom + 20.0,
            time::format(t),
            axis::tick_label(t, xstep, xdated)
        );
    }
    // Rows of about 16 px, a label at most every third.
    let ydated = axis::dated(y1 - y0);
    let (ystep, yticks) = axis::row_ticks(y0, y1, (plot_h / 16.0) as i64);
    for (_, t) in yticks {
        let py = y(t);
        let _ = writeln!(
            s,
            r##"<line class="tick" x1="{}" y1="{py:.2}" x2="{LEFT}" y2="{py:.2}" stroke="#333"/><text class="tick" x="{}" y="{:.2}" text-anchor="end" data-at="{}">{}</text>"##,
            LEFT - 5.0,
            LEFT - 8.0,
            py + 4.0,
            time::format(t),
            axis::tick_label(t, ystep, ydated)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">valid time (UTC) →</text>
<text x="20" y="{}" transform="rotate(-90 20 {})" text-anchor="middle">recorded time (UTC) →</text>
</g>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 20.0,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
    );
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        text.chars().take(max - 1).collect::<String>() + "…"
    }
}

/// Text safe inside XML content and double-quoted attributes.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 allows no other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_control_characters() {
        assert_eq!(
            escape("a<b & \"c\" 'd'\u{1}"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;\u{FFFD}"
        );
    }
}
