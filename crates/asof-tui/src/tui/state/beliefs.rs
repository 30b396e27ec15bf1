//! The beliefs panel's state: per topic, the versions held at the cursor and
//! those the latest event closed, as rows; which match the filter; which is
//! selected; the cells of the rows on screen. Recomputed when the cursor moves.

use super::list::FilteredList;
use asof_core::engine::quality::{self, AnswerStatus, Quality, Support};
use asof_core::model::{Assumed, permille};
use asof_core::time::{self, Micros, format_short};
use asof_store::query::timeline::{MarkKind, Timeline};
use std::collections::HashMap;

/// What a row of the beliefs panel shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BeliefRowKind {
    /// A topic's heading; `conflict` when agents' answers differ at the cursor.
    Topic {
        /// Whether the agents' answers differ at the cursor.
        conflict: bool,
    },
    /// A version held at the cursor.
    Held,
    /// A version closed by the latest event at or before the cursor.
    ClosedNow,
    /// The topic has no version held at the cursor.
    Empty,
}

/// One line of the beliefs panel, formatted when the cursor moves.
#[derive(Debug, Clone, PartialEq)]
pub struct BeliefRow {
    /// What the row shows.
    pub kind: BeliefRowKind,
    /// Its topic's header position.
    pub topic: usize,
    /// Its claim's glyph and colour within the topic.
    pub claim_index: usize,
    /// Index into `Timeline::beliefs`, for held and just-closed rows.
    pub belief: Option<usize>,
    /// Its note: what closed or reconfirmed it, or what is wrong with its support.
    pub note: Note,
    /// A conflicted heading's claims, per agent (the note says them whole).
    pub conflict: Vec<(String, Vec<String>)>,
    /// The version's id, for held and just-closed rows.
    pub version: Option<u64>,
    /// The topic has more than one row under it: its valid intervals tell
    /// "held at once" from "contradicts", so they are always shown.
    pub several: bool,
    /// The claim is the topic's resolution.
    pub right: bool,
    /// Quality at the cursor (design.md §4), for held rows.
    pub quality: Option<Quality>,
    /// When the agent began holding the claim without a break: its origin
    /// assertion's recorded time (a split piece's row is recorded later).
    pub since: Option<asof_core::time::Micros>,
    /// Quality, the conflict flag of a heading and the notes that depend on
    /// them are worked out: only for rows that have been on screen, since a
    /// million-event store may hold tens of thousands of beliefs at once.
    pub rated: bool,
}

/// A row's note, built where its facts are (never read back from its words):
/// the whole text, the short form a narrow row shows ("✗ superseded by B19"
/// → "✗ by B19"; the detail line under the list says it whole), and whether
/// it warns (support lost, contested, agents in conflict).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Note {
    /// The whole note.
    pub text: String,
    /// Its short form, for a narrow row.
    pub short: String,
    /// Whether it warns.
    pub warns: bool,
}

impl Note {
    fn new(text: String, short: String, warns: bool) -> Note {
        Note { text, short, warns }
    }

    /// A fresh version at the latest event.
    fn new_version() -> Note {
        Note::new("+ new".into(), "+ new".into(), false)
    }

    /// "✗ superseded by B19" / "✗ retracted by R2".
    fn closed(c: &asof_core::model::Closure) -> Note {
        let glyph = match c.kind {
            asof_core::model::CloseKind::Retracted => "✕",
            _ => "✗",
        };
        Note::new(format!("✗ {c}"), format!("{glyph} by {}", c.event), false)
    }

    /// "clipped by B27": a later-starting version cut its open end.
    fn clipped(by: &str) -> Note {
        Note::new(format!("clipped by {by}"), format!("✂ by {by}"), false)
    }

    /// "↻ reconfirmed by B40 on E33".
    fn reconfirmed(by: &str, cites: &[asof_core::model::Name]) -> Note {
        Note::new(
            format!("↻ reconfirmed by {by} on {}", cites.join(",")),
            format!("↻ by {by}"),
            false,
        )
    }

    /// Whether the row has no note.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The note with a review's verdict after it: `… · ⚑ F2 wrong (review)`.
    fn with_review(&self, id: &str, verdict: &str) -> Note {
        let (text, short) = (
            format!("{REVIEW_GLYPH} {id} {verdict} (review)"),
            format!("{REVIEW_GLYPH} {verdict}"),
        );
        let join = |a: &str, b: String| {
            if a.is_empty() {
                b
            } else {
                format!("{a} · {b}")
            }
        };
        Note::new(join(&self.text, text), join(&self.short, short), self.warns)
    }
}

/// The glyph of a reviewer's finding, wherever one is shown beside the
/// agent's record (docs/review.md).
pub const REVIEW_GLYPH: &str = "⚑";

/// What a belief row needs of its version that never changes, worked out
/// once per timeline: read at every step for every held row, it must not
/// chase the version's shared strings (at a million events, tens of thousands
/// of scattered reads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BeliefLook {
    /// The claim's glyph and colour within its topic.
    pub claim_index: u32,
    /// The claim's display width.
    pub claim_width: u16,
    /// The agent's display width.
    pub agent_width: u16,
}

/// Every version's [`BeliefLook`], indexed by position (from the timeline's
/// keys alone: no row is read).
pub fn looks(timeline: &Timeline, claim_index: &[HashMap<String, usize>]) -> Vec<BeliefLook> {
    let width = |s: &str| asof_core::text::width(s).min(usize::from(u16::MAX)) as u16;
    let agent_widths: Vec<u16> = timeline
        .header
        .agents
        .iter()
        .map(|a| width(&a.id))
        .collect();
    let mut claim_widths: HashMap<u32, u16> = HashMap::new();
    (0..timeline.version_count())
        .map(|i| {
            let k = timeline.key(i);
            BeliefLook {
                claim_index: claim_index
                    .get(k.topic as usize)
                    .and_then(|m| m.get(timeline.claim_text(k.claim)))
                    .map_or(0, |&i| i as u32),
                claim_width: *claim_widths
                    .entry(k.claim)
                    .or_insert_with(|| width(timeline.claim_text(k.claim))),
                agent_width: agent_widths.get(k.agent as usize).copied().unwrap_or(0),
            }
        })
        .collect()
}

/// The text cells of one visible row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BeliefCells {
    /// `0.70`, or `0.70→0.21 ⌛` once decay and staleness show.
    pub confidence: String,
    /// The valid interval.
    pub valid: String,
    /// When the agent began holding the claim.
    pub since: String,
    /// The cited evidence ids, fitted whole (`E15,E21 +2`) when drawn.
    pub evidence: Vec<String>,
    /// Whether the importer assumed the agent (drawn with
    /// [`asof_core::model::ASSUMED_MARK`]; the confidence and valid cells
    /// carry theirs).
    pub agent_assumed: bool,
    /// Whether the importer assumed the citations (marked likewise).
    pub evidence_assumed: bool,
}

/// The beliefs panel: its rows at the cursor, the filter over them, and the
/// cells of those on screen.
#[derive(Debug, Clone, Default)]
pub struct BeliefsState {
    /// Every row, headings included, in reading order.
    pub rows: Vec<BeliefRow>,
    /// Which rows show (the filter) and which is selected.
    pub list: FilteredList,
    /// Cells of the rows on screen, from the list's offset on.
    pub cells: Vec<BeliefCells>,
    /// The cursor the rows were computed for.
    pub at: Micros,
    /// Display width of the longest claim among the rows.
    pub claim_width: usize,
    /// Display width of the longest agent among the rows.
    pub agent_width: usize,
    /// Some topic shows more than one row (its valid intervals must show).
    pub any_several: bool,
    /// Some row's claim is its topic's resolution (the ✓ column is needed).
    pub any_right: bool,
}

impl BeliefsState {
    /// The selected row.
    pub fn selected(&self) -> Option<&BeliefRow> {
        self.list.selected_item().map(|i| &self.rows[i])
    }

    /// Rebuilds the rows for the cursor, keeping the selection on the same
    /// belief (or agent, or topic); `rows` is how many fit on screen.
    pub fn compute(
        &mut self,
        timeline: &Timeline,
        looks: &[BeliefLook],
        t: Micros,
        rows_on_screen: usize,
    ) {
        let selected_key = self
            .selected()
            .map(|row| (row.topic, agent_of(timeline, row).to_owned(), row.version));
        let latest = timeline.latest_marks(t);
        let latest_at = latest.first().map(|m| m.recorded_at);
        let mut reconfirmed: HashMap<u64, Note> = HashMap::new();
        for m in latest.iter().filter(|m| m.kind == MarkKind::Reconfirmation) {
            for v in &m.covering {
                reconfirmed.insert(*v, Note::reconfirmed(&m.id, &m.cites));
            }
        }
        let held = timeline.held(t);
        let closed = latest_at
            .map(|at| timeline.closed_at(at))
            .unwrap_or_default();
        let topics = timeline.header.topics.len();
        let mut held_by_topic: Vec<Vec<usize>> = vec![Vec::new(); topics];
        for &i in &held {
            held_by_topic[timeline.topic_agent(i).0].push(i);
        }
        let mut closed_by_topic: Vec<Vec<usize>> = vec![Vec::new(); topics];
        for &i in &closed {
            closed_by_topic[timeline.topic_agent(i).0].push(i);
        }
        let mut rows = Vec::with_capacity(held.len() + closed.len() + topics);
        for (ti, topic) in timeline.header.topics.iter().enumerate() {
            let (topic_held, topic_closed) = (&held_by_topic[ti], &closed_by_topic[ti]);
            let several = topic_held.len() + topic_closed.len() > 1;
            let blank = BeliefRow {
                kind: BeliefRowKind::Empty,
                topic: ti,
                claim_index: 0,
                belief: None,
                note: Note::default(),
                conflict: Vec::new(),
                version: None,
                several,
                right: false,
                quality: None,
                since: None,
                rated: true,
            };
            rows.push(BeliefRow {
                kind: BeliefRowKind::Topic { conflict: false },
                rated: topic_held.is_empty(),
                ..blank.clone()
            });
            if topic_held.is_empty() && topic_closed.is_empty() {
                rows.push(blank);
                continue;
            }
            let mut mine: Vec<(usize, bool)> = topic_held
                .iter()
                .map(|&i| (i, true))
                .chain(topic_closed.iter().map(|&i| (i, false)))
                .collect();
            mine.sort_by_key(|&(i, is_held)| {
                let k = timeline.key(i);
                (timeline.topic_agent(i).1, k.valid_from, !is_held, k.id)
            });
            for (i, is_held) in mine {
                let k = *timeline.key(i);
                let mut note = Note::default();
                if let Some(r) = reconfirmed.get(&k.id) {
                    note = r.clone();
                } else if !is_held {
                    // A row closed at this instant: how, or what clipped it
                    // (read now; a held row's notes once it is on screen).
                    let v = &timeline.belief(i).version;
                    if let Some(c) = &v.closed {
                        note = Note::closed(c);
                    } else if let Some(by) = &v.clipped_by {
                        note = Note::clipped(by);
                    }
                } else if Some(k.recorded_at) == latest_at {
                    note = Note::new_version();
                }
                rows.push(BeliefRow {
                    kind: if is_held {
                        BeliefRowKind::Held
                    } else {
                        BeliefRowKind::ClosedNow
                    },
                    claim_index: looks.get(i).map_or(0, |l| l.claim_index as usize),
                    belief: Some(i),
                    note,
                    conflict: Vec::new(),
                    version: Some(k.id),
                    topic: ti,
                    several,
                    right: topic.resolution.as_deref() == Some(timeline.claim_text(k.claim)),
                    quality: None,
                    since: None,
                    rated: !is_held,
                });
            }
        }
        let look = |r: &BeliefRow| r.belief.and_then(|i| looks.get(i)).copied();
        self.claim_width = rows
            .iter()
            .filter_map(look)
            .map(|l| usize::from(l.claim_width))
            .max()
            .unwrap_or(0);
        self.agent_width = rows
            .iter()
            .filter_map(look)
            .map(|l| usize::from(l.agent_width))
            .max()
            .unwrap_or(0);
        self.any_several = rows.iter().any(|r| r.several);
        self.any_right = rows.iter().any(|r| r.right);
        self.rows = rows;
        self.at = t;
        let items = self.matching(timeline);
        self.list.set_items(items, rows_on_screen);
        if let Some((topic, agent, version)) = selected_key {
            let rows = &self.rows;
            let items = self.list.items();
            let found = items
                .iter()
                .position(|&i| version.is_some() && rows[i].version == version)
                .or_else(|| {
                    items.iter().position(|&i| {
                        rows[i].topic == topic && agent_of(timeline, &rows[i]) == agent
                    })
                })
                .or_else(|| items.iter().position(|&i| rows[i].topic == topic));
            if let Some(p) = found {
                self.list.select(p, rows_on_screen);
            }
        }
        self.list.keep_visible(rows_on_screen);
        self.format_visible(timeline, rows_on_screen);
    }

    /// The rows that match the filter; a topic heading stays when the topic or
    /// any of its rows match.
    fn matching(&self, timeline: &Timeline) -> Vec<usize> {
        let needle = self.list.filter.to_lowercase();
        let topics = &timeline.header.topics;
        let found = |text: &str| text.to_lowercase().contains(&needle);
        let matches = |r: &BeliefRow| {
            needle.is_empty()
                || found(&topics[r.topic].id)
                || found(agent_of(timeline, r))
                || found(claim_of(timeline, r))
                || matches!(r.kind, BeliefRowKind::Topic { .. }) && found(&topics[r.topic].question)
        };
        let mut topic_matches = vec![false; topics.len()];
        for r in self.rows.iter().filter(|r| matches(r)) {
            topic_matches[r.topic] = true;
        }
        (0..self.rows.len())
            .filter(|&i| {
                let r = &self.rows[i];
                match r.kind {
                    BeliefRowKind::Topic { .. } => topic_matches[r.topic],
                    _ => matches(r),
                }
            })
            .collect()
    }

    /// A new filter: the list shows its first match at the top.
    pub fn set_filter(&mut self, timeline: &Timeline, filter: String, rows_on_screen: usize) {
        self.list.filter = filter;
        let items = self.matching(timeline);
        self.list.refiltered(items);
        // The first match that is a belief, not its topic's heading.
        let first = self
            .list
            .items()
            .iter()
            .position(|&i| self.rows[i].belief.is_some() && !self.list.filter.is_empty())
            .unwrap_or(0);
        self.list.show_at_top_or_fit(first, rows_on_screen);
        self.format_visible(timeline, rows_on_screen);
    }

    /// How many belief rows (not headings) match the filter.
    pub fn matches(&self) -> usize {
        self.list
            .items()
            .iter()
            .filter(|&&i| self.rows[i].belief.is_some())
            .count()
    }

    /// Moves the selection by `by` rows and formats the rows now on screen.
    pub fn move_by(&mut self, timeline: &Timeline, by: isize, rows_on_screen: usize) {
        self.list.move_by(by, rows_on_screen);
        self.format_visible(timeline, rows_on_screen);
    }

    /// Formats the cells of the rows on screen (only those: a million-event
    /// store may hold tens of thousands of beliefs at once).
    pub fn format_visible(&mut self, timeline: &Timeline, rows_on_screen: usize) {
        let window: Vec<usize> = self
            .list
            .window(rows_on_screen.max(1))
            .map(|(_, r)| r)
            .collect();
        for r in window {
            self.rate(timeline, r);
        }
        self.cells = self
            .list
            .window(rows_on_screen.max(1))
            .map(|(_, r)| {
                let row = &self.rows[r];
                row.belief.map_or_else(BeliefCells::default, |i| {
                    let b = timeline.belief(i);
                    let v = &b.version;
                    let assumed = timeline.ledger.assumed(&v.assertion);
                    BeliefCells {
                        confidence: Assumed::Confidence
                            .mark(assumed, confidence_cell(v.confidence, row.quality.as_ref())),
                        valid: Assumed::ValidFrom
                            .mark(assumed, time::format_interval_short(v.valid)),
                        since: format_short(row.since.unwrap_or(v.recorded_at)),
                        evidence: b.supported_by.iter().map(|e| e.to_string()).collect(),
                        agent_assumed: assumed.contains(&Assumed::Agent),
                        evidence_assumed: assumed.contains(&Assumed::SupportedBy),
                    }
                })
            })
            .collect();
    }
}

impl BeliefsState {
    /// Works out row `r`'s quality at the cursor and the notes that follow
    /// from it: a heading's `⚠ conflicted` (from its topic's held rows, which
    /// follow it), a held row's lost support, else its clip.
    fn rate(&mut self, timeline: &Timeline, r: usize) {
        if self.rows[r].rated {
            return;
        }
        let t = self.at;
        let row = &self.rows[r];
        match row.kind {
            BeliefRowKind::Topic { .. } => {
                let topic = &timeline.header.topics[row.topic];
                let positions: Vec<usize> = self.rows[r + 1..]
                    .iter()
                    .take_while(|x| !matches!(x.kind, BeliefRowKind::Topic { .. }))
                    .filter(|x| x.kind == BeliefRowKind::Held)
                    .filter_map(|x| x.belief)
                    .collect();
                let held = timeline.beliefs(&positions);
                let answer = quality::answer(
                    &timeline.ledger,
                    held.iter().map(|b| (&b.version, &b.supported_by[..])),
                    topic.cardinality,
                    t,
                    None,
                );
                let conflict = answer.status == AnswerStatus::Conflicted;
                let row = &mut self.rows[r];
                row.kind = BeliefRowKind::Topic { conflict };
                if conflict {
                    row.conflict = conflict_parts(&answer);
                    let text = fit_conflict(&row.conflict, usize::MAX);
                    row.note = Note::new(text.clone(), text, true);
                }
            }
            _ => {
                if let Some(i) = row.belief {
                    let b = timeline.belief(i);
                    let v = &b.version;
                    let q = timeline.ledger.quality(v, &b.supported_by, t);
                    // A split piece's agent held the claim from its origin
                    // assertion on (read once per row, never while drawing).
                    let since = timeline.held_since(&b);
                    let row = &mut self.rows[r];
                    row.quality = Some(q);
                    row.since = Some(since);
                    if row.note.is_empty() {
                        row.note = lost_support(timeline, &b.supported_by, q.support, t);
                    }
                    if let Some(by) = v.clipped_by.as_ref().filter(|_| row.note.is_empty()) {
                        row.note = Note::clipped(by);
                    }
                    // A reviewer's verdict, beside the agent's record (its
                    // own glyph): never read into the quality above.
                    if let Some(f) = timeline.review.assertion_verdict(&v.assertion) {
                        row.note = row.note.with_review(&f.id, f.verdict.as_str());
                    }
                }
            }
        }
        self.rows[r].rated = true;
    }
}

/// The agent of a belief row ("" for topic headings and empty topics).
pub fn agent_of<'a>(timeline: &'a Timeline, row: &BeliefRow) -> &'a str {
    row.belief.map_or("", |i| timeline.agent_of(i))
}

/// The claim of a belief row; "(no belief held)" for an empty topic.
pub fn claim_of<'a>(timeline: &'a Timeline, row: &BeliefRow) -> &'a str {
    match (row.belief, &row.kind) {
        (Some(i), _) => timeline.claim_of(i),
        (None, BeliefRowKind::Empty) => "(no belief held)",
        (None, _) => "",
    }
}

/// Every agent's claims in a conflict, in the answer's order; none picked.
fn conflict_parts(answer: &quality::Answer) -> Vec<(String, Vec<String>)> {
    let mut by_agent: Vec<(String, Vec<String>)> = Vec::new();
    for c in &answer.agents {
        match by_agent.iter_mut().find(|(a, _)| *a == *c.agent) {
            Some((_, claims)) => claims.push(c.claim.to_string()),
            None => by_agent.push((c.agent.to_string(), vec![c.claim.to_string()])),
        }
    }
    by_agent
}

/// "⚠ conflicted: triage “A”, “B” · infra “C”" within `max` columns: every
/// agent is named with its claims. When they do not fit whole, the claims are
/// first cut (visibly, with `…`) to share the room, down to
/// `CLAIM_MIN` columns each; then each agent shows its first claims and
/// `+N` for the rest, never silently fewer.
pub fn fit_conflict(parts: &[(String, Vec<String>)], max: usize) -> String {
    let build = |room: usize, per_agent: usize| {
        let agents: Vec<String> = parts
            .iter()
            .map(|(agent, claims)| {
                let shown: Vec<String> = claims
                    .iter()
                    .take(per_agent)
                    .map(|c| format!("“{}”", asof_core::text::cut(c, room)))
                    .collect();
                let more = claims.len().saturating_sub(per_agent);
                let more = if more > 0 {
                    format!(" +{more}")
                } else {
                    String::new()
                };
                format!("{agent} {}{more}", shown.join(", "))
            })
            .collect();
        format!("⚠ conflicted: {}", agents.join(" · "))
    };
    let most = parts.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
    let longest = parts
        .iter()
        .flat_map(|(_, c)| c.iter())
        .map(|c| asof_core::text::width(c))
        .max()
        .unwrap_or(0);
    let fits = |line: &String| asof_core::text::width(line) <= max;
    let whole = build(usize::MAX, most);
    if fits(&whole) {
        return whole;
    }
    if let Some(room) = asof_core::text::largest_fitting(CLAIM_MIN, longest.min(max), |room| {
        fits(&build(room, most))
    }) {
        return build(room, most);
    }
    for per_agent in (1..most).rev() {
        let line = build(CLAIM_MIN, per_agent);
        if fits(&line) {
            return line;
        }
    }
    asof_core::text::cut(&build(CLAIM_MIN, 1), max)
}

/// The fewest columns a claim is cut to in a conflict line.
const CLAIM_MIN: usize = 8;

/// "✗ unsupported: E15 rejected" (short "✗ E15 rejected"), "⚠ contested: E7
/// conflicted", or nothing.
fn lost_support(
    timeline: &Timeline,
    cited: &[asof_core::model::Name],
    support: Support,
    t: Micros,
) -> Note {
    let states = || {
        cited
            .iter()
            .map(|e| format!("{e} {}", timeline.ledger.state(e, t).as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (glyph, word) = match support {
        Support::Ok => return Note::default(),
        Support::Unsupported => ("✗", "unsupported"),
        Support::Contested => ("⚠", "contested"),
    };
    let states = states();
    Note::new(
        format!("{glyph} {word}: {states}"),
        format!("{glyph} {states}"),
        true,
    )
}

/// "0.70", or "0.70→0.21" when decay lowered it (a stale row's ⌛ leads the row).
pub fn confidence_cell(stated: f64, q: Option<&Quality>) -> String {
    match q {
        Some(q) if permille(q.effective_confidence) != permille(stated) => {
            format!("{stated:.2}→{:.2}", q.effective_confidence)
        }
        _ => format!("{stated:.2}"),
    }
}

/// Per topic, claim text → its glyph and colour index, in order of first version.
/// Runs at every open and live refresh over every version, so it looks each
/// claim up by its code, and by its text only the first time in a topic.
pub fn claim_index(timeline: &Timeline) -> Vec<HashMap<String, usize>> {
    let mut index: Vec<HashMap<String, usize>> = vec![HashMap::new(); timeline.header.topics.len()];
    // Per claim code, the last topic (position + 1) it was seen in.
    let mut seen: Vec<usize> = Vec::new();
    for (t, map) in index.iter_mut().enumerate() {
        for &i in timeline.topic_positions(t) {
            let code = timeline.claim_code_of(i as usize) as usize;
            if seen.len() <= code {
                seen.resize(code + 1, 0);
            }
            if seen[code] != t + 1 {
                seen[code] = t + 1;
                let next = map.len();
                map.entry(timeline.claim_text(code as u32).to_owned())
                    .or_insert(next);
            }
        }
    }
    index
}

#[cfg(test)]
mod conflict_tests {
    use super::fit_conflict;

    #[test]
    fn a_conflict_names_every_agent_and_counts_what_it_cannot_show() {
        let parts = vec![
            (
                "triage".to_owned(),
                vec!["eu-west".into(), "us-east".into(), "ap-south".into()],
            ),
            ("infra".to_owned(), vec!["eu-west".into()]),
        ];
        assert_eq!(
            fit_conflict(&parts, 200),
            "⚠ conflicted: triage “eu-west”, “us-east”, “ap-south” · infra “eu-west”"
        );
        assert_eq!(
            fit_conflict(&parts, 52),
            "⚠ conflicted: triage “eu-west” +2 · infra “eu-west”"
        );
        let parts = vec![
            (
                "triage".to_owned(),
                vec!["Bad deploy of checkout-service v4.12".into()],
            ),
            (
                "infra".to_owned(),
                vec!["Card-network provider outage".into()],
            ),
        ];
        let line = fit_conflict(&parts, 56);
        assert!(
            line.contains("triage “Bad deplo") && line.contains("infra “Card-n"),
            "{line}"
        );
        assert!(asof_core::text::width(&line) <= 56);
    }
}
