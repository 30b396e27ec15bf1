//! The TUI's state and `update`. Drawing never changes this state; every query
//! runs here, when the cursor or the selection moves, and its text is formatted
//! once for the draw functions to copy.

use super::action::Action;
use super::keymap::Context;
use super::plane::{self, Plane, Reading};
use super::theme::Theme;
use super::ui::layout::{Areas, areas};
use super::whatif::ForkResult;
use crate::model::Cardinality;
use crate::query::timeline::{MarkKind, Timeline};
use crate::time::{self, Micros, format_short};
use ratatui::layout::Rect;
use std::collections::HashMap;

pub use crate::query::LATE;
/// Play speeds: milliseconds per event.
pub const SPEEDS_MS: [u64; 5] = [2000, 1000, 500, 250, 100];
/// How often the play clock ticks.
pub const TICK_MS: u64 = 50;
const MIN_VIEW: i64 = 60_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Scrubber,
    Beliefs,
    Plane,
    Evidence,
}

impl Focus {
    const ORDER: [Focus; 4] = [
        Focus::Scrubber,
        Focus::Beliefs,
        Focus::Plane,
        Focus::Evidence,
    ];

    fn step(self, by: isize) -> Focus {
        let i = Self::ORDER.iter().position(|&f| f == self).unwrap_or(0) as isize;
        Self::ORDER[(i + by).rem_euclid(Self::ORDER.len() as isize) as usize]
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BeliefRowKind {
    /// A topic's heading; `conflict` when agents' answers differ at the cursor.
    Topic { conflict: bool },
    /// A version held at the cursor.
    Held,
    /// A version closed by the latest event at or before the cursor.
    ClosedNow,
    /// The topic has no version held at the cursor.
    Empty,
}

/// One line of the beliefs panel, formatted when the cursor moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeliefRow {
    pub kind: BeliefRowKind,
    pub topic: usize,
    pub claim_index: usize,
    /// Index of the belief in `timeline.beliefs` (held and closed rows).
    pub belief: Option<usize>,
    pub note: String,
    pub version: Option<u64>,
}

/// The formatted cells of one belief row on screen (see `App::belief_cells`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BeliefCells {
    pub confidence: String,
    pub valid: String,
    pub since: String,
    pub evidence: String,
}

/// One line of the evidence panel, borrowed from the timeline and formatted only
/// for the rows on screen (a million-event store has hundreds of thousands of items).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceRow<'a> {
    pub index: usize,
    pub id: &'a str,
    pub kind: &'a str,
    pub source: &'a str,
    pub observed: String,
    pub recorded: String,
    pub lag: String,
    pub cited_by: String,
    pub summary: &'a str,
    pub recorded_at: Micros,
    pub late: bool,
}

/// A scrollable popup of preformatted lines (history, evidence details).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextView {
    pub title: String,
    pub lines: Vec<ViewLine>,
    pub scroll: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStyle {
    Normal,
    Heading,
    Held,
    Closed,
    Future,
    Note,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewLine {
    pub text: String,
    pub style: LineStyle,
}

impl ViewLine {
    fn new(style: LineStyle, text: impl Into<String>) -> Self {
        ViewLine {
            text: text.into(),
            style,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    Jump,
    Filter(Focus),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Popup {
    Help,
    /// Parent and fork side by side: answer lanes, divergence, time to truth.
    Compare,
    Text(TextView),
    Prompt {
        kind: PromptKind,
        text: String,
    },
}

pub struct App {
    pub timeline: Timeline,
    pub theme: Theme,
    /// The recorded cursor.
    pub cursor: Micros,
    /// The scrubber's visible recorded range.
    pub view: (Micros, Micros),
    full: (Micros, Micros),
    pub focus: Focus,
    pub popup: Option<Popup>,
    pub playing: bool,
    pub speed: usize,
    play_elapsed: u64,
    pub size: (u16, u16),
    pub status: Option<String>,
    pub quit: bool,

    pub belief_rows: Vec<BeliefRow>,
    pub belief_visible: Vec<usize>,
    pub belief_selected: usize,
    pub belief_offset: usize,
    pub belief_filter: String,
    /// Cells of the visible belief rows, `belief_offset` onwards.
    pub belief_cells: Vec<BeliefCells>,
    /// Display width of the longest claim among the belief rows.
    pub belief_claim_width: usize,

    /// The widest evidence id (characters).
    pub evidence_id_width: usize,
    pub evidence_visible: Vec<usize>,
    pub evidence_selected: usize,
    pub evidence_offset: usize,
    pub evidence_filter: String,

    /// Per topic: claim text → index for glyph and colour.
    pub claim_index: Vec<HashMap<String, usize>>,
    /// The header's description of the latest event at or before the cursor.
    pub latest: String,
    /// Position of the latest event: (1-based index, total).
    pub event_position: (usize, usize),

    /// The plane of the selected topic and agent.
    pub plane: Plane,
    /// `false`: the valid cursor follows the diagonal (valid = recorded).
    pub valid_free: bool,
    valid_cursor: Micros,
    /// The crosshair's reading, from `believed(recorded, about valid)`.
    pub reading: Reading,
    /// The (topic, agent, recorded, valid) the reading was computed for.
    reading_for: Option<(usize, Option<String>, Micros, Micros)>,

    /// The last what-if fork, once a worker has finished it.
    pub fork: Option<ForkResult>,
    /// The timeline not on screen (the parent while the fork is shown, or the fork).
    other: Option<Timeline>,
    /// The panels show the fork.
    pub showing_fork: bool,
    /// Background work in progress (spinner text).
    pub busy: Option<String>,
    pub spinner: usize,
    /// Evidence to fork without, for the event loop to hand to a worker.
    request: Option<String>,
    /// Evidence id → its influence, once computed in the background.
    pub influence: HashMap<String, String>,
}

impl App {
    pub fn new(timeline: Timeline, theme: Theme, size: (u16, u16)) -> App {
        let full = match timeline.span() {
            Some((a, b)) => {
                let pad = ((b - a) / 50).max(60_000_000);
                (a - pad, b + pad)
            }
            None => {
                let now = time::now();
                (now - 3_600_000_000, now + 3_600_000_000)
            }
        };
        let cursor = timeline.span().map_or(full.0, |(_, last)| last);
        let mut claim_index: Vec<HashMap<String, usize>> =
            vec![HashMap::new(); timeline.header.topics.len()];
        for (t, map) in claim_index.iter_mut().enumerate() {
            for b in timeline.topic_versions(t) {
                let next = map.len();
                map.entry(b.version.claim.to_string()).or_insert(next);
            }
        }
        let evidence_id_width = evidence_id_width(&timeline);
        let mut app = App {
            timeline,
            theme,
            cursor,
            view: full,
            full,
            focus: Focus::Scrubber,
            popup: None,
            playing: false,
            speed: 1,
            play_elapsed: 0,
            size,
            status: None,
            quit: false,
            belief_rows: Vec::new(),
            belief_visible: Vec::new(),
            belief_selected: 0,
            belief_offset: 0,
            belief_filter: String::new(),
            belief_cells: Vec::new(),
            belief_claim_width: 0,
            evidence_id_width,
            evidence_visible: Vec::new(),
            evidence_selected: 0,
            evidence_offset: 0,
            evidence_filter: String::new(),
            claim_index,
            latest: String::new(),
            event_position: (0, 0),
            plane: Plane::empty(),
            valid_free: false,
            valid_cursor: cursor,
            reading: Reading::default(),
            reading_for: None,
            fork: None,
            other: None,
            showing_fork: false,
            busy: None,
            spinner: 0,
            request: None,
            influence: HashMap::new(),
        };
        app.refilter_evidence();
        app.cursor_moved();
        app.sync_plane(true);
        app
    }

    /// The evidence id a worker should fork without, if the user asked (taken once).
    pub fn take_fork_request(&mut self) -> Option<String> {
        self.request.take()
    }

    /// A worker finished the fork: keep it and open the compare view.
    pub fn fork_finished(&mut self, result: Result<ForkResult, String>) {
        self.busy = None;
        match result {
            Ok(fork) => {
                if self.showing_fork {
                    self.swap_timelines();
                }
                self.other = Some(fork.timeline.clone());
                self.status = Some(format!(
                    "what-if fork without {} ready: c cycles compare → fork → parent",
                    fork.removed
                ));
                self.fork = Some(fork);
                self.popup = Some(Popup::Compare);
            }
            Err(e) => self.status = Some(format!("fork failed: {e}")),
        }
    }

    /// The influence ranking arrived from the background.
    pub fn influence_ready(&mut self, ranking: Vec<crate::fork::influence::Influence>) {
        self.influence = ranking
            .into_iter()
            .map(|i| {
                let text = if i.truth_shift_ms != 0 {
                    format!("shift {}", time::format_duration(i.truth_shift_ms * 1000))
                } else if i.divergence_ms != 0 {
                    format!("diverge {}", time::format_duration(i.divergence_ms * 1000))
                } else {
                    "none".to_owned()
                };
                (i.evidence, text)
            })
            .collect();
    }

    /// Shows the other timeline (parent ↔ fork) in every panel.
    fn swap_timelines(&mut self) {
        let Some(mut other) = self.other.take() else {
            return;
        };
        std::mem::swap(&mut self.timeline, &mut other);
        self.other = Some(other);
        self.showing_fork = !self.showing_fork;
        self.evidence_id_width = evidence_id_width(&self.timeline);
        self.refilter_evidence();
        self.cursor_moved();
        self.sync_plane(true);
    }

    /// The agent of a belief row ("" for topic headings and empty topics).
    pub fn row_agent(&self, row: &BeliefRow) -> &str {
        row.belief
            .map_or("", |i| &*self.timeline.beliefs[i].version.agent)
    }

    /// The claim of a belief row; "(no belief held)" for an empty topic.
    pub fn row_claim(&self, row: &BeliefRow) -> &str {
        match (row.belief, &row.kind) {
            (Some(i), _) => &self.timeline.beliefs[i].version.claim,
            (None, BeliefRowKind::Empty) => "(no belief held)",
            (None, _) => "",
        }
    }

    /// The id of a belief row's topic.
    pub fn row_topic(&self, row: &BeliefRow) -> &str {
        self.timeline
            .header
            .topics
            .get(row.topic)
            .map_or("", |t| t.id.as_str())
    }

    /// The valid cursor: free, or on the diagonal (the recorded cursor).
    pub fn valid_at(&self) -> Micros {
        if self.valid_free {
            self.valid_cursor
        } else {
            self.cursor
        }
    }

    /// The (topic, agent) the plane should show: the beliefs selection's topic and
    /// agent, or the first agent holding versions on that topic.
    fn plane_target(&self) -> (usize, Option<String>) {
        let row = self
            .belief_visible
            .get(self.belief_selected)
            .map(|&i| &self.belief_rows[i]);
        let topic = row.map_or(0, |r| r.topic);
        let agent = match row {
            Some(r) if r.belief.is_some() => Some(self.row_agent(r).to_owned()),
            _ => {
                let tl = &self.timeline;
                tl.header
                    .agents
                    .iter()
                    .find(|a| tl.topic_versions(topic).any(|b| *b.version.agent == *a.id))
                    .map(|a| a.id.clone())
            }
        };
        (topic, agent)
    }

    /// Rebuilds the plane when the selected topic or agent changed, keeps the
    /// crosshair in view and recomputes its reading.
    fn sync_plane(&mut self, force: bool) {
        let (topic, agent) = self.plane_target();
        let empty = HashMap::new();
        if force || topic != self.plane.topic || agent != self.plane.agent {
            let claims = self.claim_index.get(topic).unwrap_or(&empty);
            let plane = Plane::build(&self.timeline, claims, topic, agent.as_deref());
            self.plane = plane;
            self.reading_for = None;
        }
        let valid = self.valid_at();
        self.plane
            .follow(self.valid_free.then_some(valid), self.cursor);
        // The reading is a query: run it only when the crosshair or the plane moved.
        let key = (topic, self.plane.agent.clone(), self.cursor, valid);
        if self.reading_for.as_ref() == Some(&key) {
            return;
        }
        let claims = self.claim_index.get(topic).unwrap_or(&empty);
        let reading = plane::reading(
            &self.timeline,
            claims,
            topic,
            self.plane.agent.as_deref(),
            self.cursor,
            valid,
        );
        self.reading = reading;
        self.reading_for = Some(key);
    }

    pub fn areas(&self) -> Areas {
        areas(Rect::new(0, 0, self.size.0, self.size.1))
    }

    /// The context whose bindings apply now.
    pub fn context(&self) -> Context {
        match (&self.popup, self.focus) {
            (Some(_), _) => Context::Popup,
            (None, Focus::Scrubber) => Context::Scrubber,
            (None, Focus::Plane) => Context::Plane,
            (None, _) => Context::Lists,
        }
    }

    pub fn play_interval_ms(&self) -> u64 {
        SPEEDS_MS[self.speed]
    }

    /// The recorded step for ←/→: about a hundredth of the visible range, rounded
    /// to a duration people read.
    pub fn step(&self) -> i64 {
        nice_duration((self.view.1 - self.view.0) / 100)
    }

    /// Applies one action. Returns whether anything visible changed.
    pub fn update(&mut self, action: Action) -> bool {
        let changed = self.apply(action);
        if changed {
            self.sync_plane(false);
        }
        changed
    }

    fn apply(&mut self, action: Action) -> bool {
        if action != Action::Tick {
            self.status = None;
        }
        if let Some(Popup::Prompt { .. }) = &self.popup {
            return self.update_prompt(action);
        }
        if self.popup.is_some() && self.update_popup(action) {
            return true;
        }
        match action {
            Action::Quit => self.quit = true,
            Action::Back => {
                // Esc backs out of one thing at a time; with nothing open, it quits.
                if self.popup.take().is_none() && !self.clear_filter() {
                    if self.playing {
                        self.playing = false;
                    } else {
                        self.quit = true;
                    }
                }
            }
            Action::StepBack => self.seek(self.cursor - self.step()),
            Action::StepForward => self.seek(self.cursor + self.step()),
            Action::PrevEvent => {
                if let Some(t) = self.timeline.prev_event(self.cursor) {
                    self.seek(t);
                }
            }
            Action::NextEvent => {
                if let Some(t) = self.timeline.next_event(self.cursor) {
                    self.seek(t);
                }
            }
            Action::Start => {
                let t = self.timeline.span().map_or(self.full.0, |s| s.0);
                self.seek(t);
            }
            Action::End => {
                let t = self.timeline.span().map_or(self.full.1, |s| s.1);
                self.seek(t);
            }
            Action::TogglePlay => {
                if !self.playing && self.timeline.next_event(self.cursor).is_none() {
                    // At the end: play from the start.
                    let t = self.timeline.span().map_or(self.full.0, |s| s.0);
                    self.seek(t);
                }
                self.playing = !self.playing;
                self.play_elapsed = 0;
            }
            Action::Faster => self.speed = (self.speed + 1).min(SPEEDS_MS.len() - 1),
            Action::Slower => self.speed = self.speed.saturating_sub(1),
            Action::ZoomIn => self.zoom(0.5),
            Action::ZoomOut => self.zoom(2.0),
            Action::FocusNext => self.focus = self.focus.step(1),
            Action::FocusPrev => self.focus = self.focus.step(-1),
            Action::Up => self.select_by(-1),
            Action::Down => self.select_by(1),
            Action::PageUp => self.select_by(-(self.page_rows() as isize)),
            Action::PageDown => self.select_by(self.page_rows() as isize),
            Action::Top => self.select_by(isize::MIN / 2),
            Action::Bottom => self.select_by(isize::MAX / 2),
            Action::Open => self.open(),
            Action::Filter => {
                if matches!(self.focus, Focus::Beliefs | Focus::Evidence) {
                    let text = self.filter_text(self.focus).to_owned();
                    self.popup = Some(Popup::Prompt {
                        kind: PromptKind::Filter(self.focus),
                        text,
                    });
                }
            }
            Action::Help => self.popup = Some(Popup::Help),
            Action::Jump => {
                self.popup = Some(Popup::Prompt {
                    kind: PromptKind::Jump,
                    text: String::new(),
                })
            }
            Action::Type(_) | Action::Erase => return false,
            Action::Click(x, y) => self.click(x, y),
            Action::Wheel(down, x, y) => self.wheel(down, x, y),
            Action::Resize(w, h) => {
                self.size = (w, h);
                self.keep_visible();
            }
            Action::Tick => return self.tick(),
            Action::Fork => {
                let selected = self
                    .evidence_visible
                    .get(self.evidence_selected)
                    .map(|&i| self.timeline.evidence[i].evidence.id.clone());
                match (self.focus, selected) {
                    _ if self.busy.is_some() => {
                        self.status = Some("a fork is already running".into())
                    }
                    _ if self.showing_fork => {
                        self.status =
                            Some("press c to return to the parent before forking again".into())
                    }
                    (Focus::Evidence, Some(id)) => {
                        self.busy = Some(format!("replaying without {id}"));
                        self.request = Some(id);
                    }
                    _ => {
                        self.status = Some(
                            "select an evidence item (Tab to the evidence panel), then w".into(),
                        )
                    }
                }
            }
            Action::Compare => match (&self.fork, &self.popup) {
                (None, _) => self.status = Some("no fork yet: select evidence and press w".into()),
                (Some(_), Some(Popup::Compare)) => {
                    self.popup = None;
                    self.swap_timelines();
                }
                (Some(_), _) if self.showing_fork => self.swap_timelines(),
                (Some(_), _) => self.popup = Some(Popup::Compare),
            },
            Action::ToggleValid => {
                self.valid_free = !self.valid_free;
                // Start from the diagonal when it is on the plane, else mid-plane.
                let (v0, v1) = self.plane.valid_view;
                self.valid_cursor = if (v0..v1).contains(&self.cursor) {
                    self.cursor
                } else {
                    self.plane.valid_middle()
                };
                self.status = Some(if self.valid_free {
                    "valid cursor free: ←/→ in the plane move it; v follows the diagonal again"
                        .into()
                } else {
                    "valid cursor follows the diagonal (about = recorded)".into()
                });
            }
            Action::PlaneLeft | Action::PlaneRight => {
                let sign = if action == Action::PlaneLeft { -1 } else { 1 };
                if self.valid_free {
                    self.valid_cursor += sign * self.plane.valid_step();
                } else {
                    self.seek(self.cursor + sign * self.step());
                }
            }
            Action::PlaneUp => self.seek(self.cursor + self.plane.recorded_step()),
            Action::PlaneDown => self.seek(self.cursor - self.plane.recorded_step()),
            Action::PlaneZoomIn => self.plane.zoom(0.5, self.valid_at(), self.cursor),
            Action::PlaneZoomOut => self.plane.zoom(2.0, self.valid_at(), self.cursor),
        }
        true
    }

    fn tick(&mut self) -> bool {
        if self.busy.is_some() {
            self.spinner = self.spinner.wrapping_add(1);
        }
        if !self.playing {
            return self.busy.is_some();
        }
        self.play_elapsed += TICK_MS;
        if self.play_elapsed < self.play_interval_ms() {
            return false;
        }
        self.play_elapsed = 0;
        match self.timeline.next_event(self.cursor) {
            Some(t) => self.seek(t),
            None => self.playing = false,
        }
        true
    }

    /// Keys while a popup is open; returns whether it handled the action.
    fn update_popup(&mut self, action: Action) -> bool {
        let Some(popup) = &mut self.popup else {
            return false;
        };
        match (popup, action) {
            (_, Action::Back) => self.popup = None,
            (Popup::Help, Action::Help) => self.popup = None,
            (Popup::Compare, Action::Compare) => return false,
            (Popup::Text(view), Action::Up) => view.scroll = view.scroll.saturating_sub(1),
            (Popup::Text(view), Action::Down) => {
                view.scroll = (view.scroll + 1).min(view.lines.len().saturating_sub(1))
            }
            (Popup::Text(view), Action::PageUp) => view.scroll = view.scroll.saturating_sub(10),
            (Popup::Text(view), Action::PageDown) => {
                view.scroll = (view.scroll + 10).min(view.lines.len().saturating_sub(1))
            }
            (Popup::Help, Action::Up | Action::Down | Action::PageUp | Action::PageDown) => {}
            (
                _,
                Action::Quit
                | Action::Resize(..)
                | Action::Tick
                | Action::Click(..)
                | Action::Wheel(..),
            ) => return false,
            _ => {}
        }
        true
    }

    fn update_prompt(&mut self, action: Action) -> bool {
        let Some(Popup::Prompt { kind, text }) = &mut self.popup else {
            return false;
        };
        let kind = *kind;
        match action {
            Action::Type(c) => text.push(c),
            Action::Erase => {
                text.pop();
            }
            Action::Back => {
                self.popup = None;
                if let PromptKind::Filter(focus) = kind {
                    self.set_filter(focus, String::new());
                }
                return true;
            }
            Action::Open => {
                let text = std::mem::take(text);
                self.popup = None;
                if kind == PromptKind::Jump {
                    match time::parse_loose(&text, self.cursor) {
                        Ok(t) => self.seek(t),
                        Err(e) => self.status = Some(format!("jump: {e}")),
                    }
                }
                return true;
            }
            Action::Quit => {
                self.quit = true;
                return true;
            }
            Action::Resize(w, h) => {
                self.size = (w, h);
                return true;
            }
            Action::Tick => return self.tick(),
            _ => return false,
        }
        if let (PromptKind::Filter(focus), Some(Popup::Prompt { text, .. })) = (kind, &self.popup) {
            let text = text.clone();
            self.set_filter(focus, text);
        }
        true
    }

    fn filter_text(&self, focus: Focus) -> &str {
        match focus {
            Focus::Beliefs => &self.belief_filter,
            _ => &self.evidence_filter,
        }
    }

    fn set_filter(&mut self, focus: Focus, text: String) {
        match focus {
            Focus::Beliefs => {
                self.belief_filter = text;
                self.refilter_beliefs();
            }
            Focus::Evidence => {
                self.evidence_filter = text;
                self.refilter_evidence();
            }
            Focus::Scrubber | Focus::Plane => {}
        }
    }

    /// Esc on a filtered list clears its filter; returns whether it did.
    fn clear_filter(&mut self) -> bool {
        let focus = self.focus;
        if matches!(focus, Focus::Beliefs | Focus::Evidence) && !self.filter_text(focus).is_empty()
        {
            self.set_filter(focus, String::new());
            return true;
        }
        false
    }

    /// Moves the recorded cursor, keeps it in view, and recomputes what it shows.
    pub fn seek(&mut self, t: Micros) {
        self.cursor = t.clamp(self.full.0, self.full.1);
        let width = self.view.1 - self.view.0;
        if self.cursor < self.view.0 {
            self.view = (self.cursor, self.cursor + width);
        } else if self.cursor > self.view.1 {
            self.view = (self.cursor - width, self.cursor);
        }
        self.cursor_moved();
    }

    fn zoom(&mut self, factor: f64) {
        let full_width = self.full.1 - self.full.0;
        let width = (((self.view.1 - self.view.0) as f64 * factor) as i64)
            .clamp(MIN_VIEW.min(full_width), full_width);
        let left_share = if self.view.1 > self.view.0 {
            (self.cursor - self.view.0) as f64 / (self.view.1 - self.view.0) as f64
        } else {
            0.5
        };
        let mut from = self.cursor - (width as f64 * left_share.clamp(0.0, 1.0)) as i64;
        from = from.clamp(self.full.0, self.full.1 - width);
        self.view = (from, from + width);
    }

    /// The recorded instant under a scrubber column.
    pub fn time_at_column(&self, area: Rect, column: u16) -> Micros {
        let inner = super::ui::scrubber::lanes_area(area);
        let x = column
            .saturating_sub(inner.x)
            .min(inner.width.saturating_sub(1)) as i64;
        let width = inner.width.max(1) as i64;
        self.view.0 + (self.view.1 - self.view.0) * x / width
    }

    fn click(&mut self, x: u16, y: u16) {
        let areas = self.areas();
        let inside = |r: Option<Rect>| {
            r.filter(|r| x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)
        };
        let plane_area = areas
            .plane
            .filter(|_| !areas.plane_shares_evidence || self.focus == Focus::Plane);
        if let Some(area) = inside(Some(areas.scrubber)) {
            self.focus = Focus::Scrubber;
            let t = self.time_at_column(area, x);
            self.seek(t);
        } else if let Some(area) = inside(plane_area) {
            self.focus = Focus::Plane;
            if let Some((valid, recorded)) = super::ui::plane::time_at(&self.plane, area, x, y) {
                self.valid_free = true;
                self.valid_cursor = valid;
                self.seek(recorded);
            }
        } else if let Some(area) = inside(areas.beliefs) {
            self.focus = Focus::Beliefs;
            let row = (y.saturating_sub(area.y + 1)) as usize + self.belief_offset;
            if row < self.belief_visible.len() {
                self.belief_selected = row;
            }
        } else if let Some(area) = inside(areas.evidence) {
            self.focus = Focus::Evidence;
            let row = (y.saturating_sub(area.y + 2)) as usize + self.evidence_offset;
            if row < self.evidence_visible.len() {
                self.evidence_selected = row;
            }
        }
    }

    fn wheel(&mut self, down: bool, x: u16, y: u16) {
        let areas = self.areas();
        let over = |r: Option<Rect>| {
            r.is_some_and(|r| x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)
        };
        if over(areas.beliefs) || over(areas.evidence) {
            self.focus = if over(areas.beliefs) {
                Focus::Beliefs
            } else {
                Focus::Evidence
            };
            self.select_by(if down { 3 } else { -3 });
        } else {
            let step = self.step();
            self.seek(self.cursor + if down { step } else { -step });
        }
    }

    fn page_rows(&self) -> usize {
        let areas = self.areas();
        let area = match self.focus {
            Focus::Beliefs => areas.beliefs,
            _ => areas.evidence,
        };
        area.map_or(10, |a| a.height.saturating_sub(3).max(1) as usize)
    }

    fn select_by(&mut self, by: isize) {
        let (selected, len) = match self.focus {
            Focus::Beliefs => (&mut self.belief_selected, self.belief_visible.len()),
            Focus::Evidence => (&mut self.evidence_selected, self.evidence_visible.len()),
            Focus::Scrubber | Focus::Plane => return,
        };
        if len == 0 {
            *selected = 0;
            return;
        }
        *selected = (*selected as isize)
            .saturating_add(by)
            .clamp(0, len as isize - 1) as usize;
        self.keep_visible();
    }

    /// Scroll offsets that keep each list's selection on screen.
    fn keep_visible(&mut self) {
        let areas = self.areas();
        let fit = |selected: usize, offset: usize, rows: usize| -> usize {
            if rows == 0 {
                return selected;
            }
            if selected < offset {
                selected
            } else if selected >= offset + rows {
                selected + 1 - rows
            } else {
                offset
            }
        };
        let belief_rows = areas
            .beliefs
            .map_or(0, |a| a.height.saturating_sub(2) as usize);
        let evidence_rows = areas
            .evidence
            .map_or(0, |a| a.height.saturating_sub(3) as usize);
        self.belief_offset = fit(self.belief_selected, self.belief_offset, belief_rows);
        self.evidence_offset = fit(self.evidence_selected, self.evidence_offset, evidence_rows);
        self.format_visible_beliefs(belief_rows);
    }

    /// Formats the cells of the belief rows on screen (only those: a million-event
    /// store may hold tens of thousands of beliefs at once).
    fn format_visible_beliefs(&mut self, rows: usize) {
        let timeline = &self.timeline;
        self.belief_cells = self
            .belief_visible
            .iter()
            .skip(self.belief_offset)
            .take(rows.max(1))
            .map(|&r| {
                self.belief_rows[r]
                    .belief
                    .map_or_else(BeliefCells::default, |i| {
                        let b = &timeline.beliefs[i];
                        let v = &b.version;
                        BeliefCells {
                            confidence: format!("{:.2}", v.confidence),
                            valid: time::format_interval_short(v.valid),
                            since: format_short(v.recorded_at),
                            evidence: if b.supported_by.is_empty() {
                                "-".into()
                            } else {
                                b.supported_by.join(",")
                            },
                        }
                    })
            })
            .collect();
    }

    fn open(&mut self) {
        match self.focus {
            Focus::Plane => match self.reading.versions.first() {
                Some(&id) => self.popup = Some(Popup::Text(self.version_view(id))),
                None => self.status = Some("nothing is believed under the crosshair".into()),
            },
            Focus::Beliefs => {
                if let Some(&i) = self.belief_visible.get(self.belief_selected) {
                    let row = &self.belief_rows[i];
                    let agent = row.belief.map(|_| self.row_agent(row).to_owned());
                    self.popup = Some(Popup::Text(self.history_view(row.topic, agent.as_deref())));
                }
            }
            Focus::Evidence => {
                if let Some(&i) = self.evidence_visible.get(self.evidence_selected) {
                    self.popup = Some(Popup::Text(self.evidence_view(i)));
                }
            }
            Focus::Scrubber => {
                // Enter on the timeline: the events at the cursor's latest instant.
                self.popup = Some(Popup::Text(self.events_view()));
            }
        }
    }

    /// Everything that depends on the cursor, recomputed once per move.
    fn cursor_moved(&mut self) {
        let total = self.timeline.marks.len();
        let done = self
            .timeline
            .marks
            .partition_point(|m| m.recorded_at <= self.cursor);
        self.event_position = (done, total);
        self.latest = match self.timeline.latest_marks(self.cursor) {
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
        };
        self.compute_beliefs();
        if self.focus != Focus::Evidence {
            // The evidence list follows the cursor: the latest item known then.
            let items = &self.timeline.evidence;
            let known = self
                .evidence_visible
                .partition_point(|&i| items[i].evidence.recorded_at <= self.cursor);
            self.evidence_selected = known.saturating_sub(1);
            let rows = self
                .areas()
                .evidence
                .map_or(0, |a| a.height.saturating_sub(3) as usize);
            let last_offset = self.evidence_visible.len().saturating_sub(rows);
            self.evidence_offset = self
                .evidence_selected
                .saturating_sub(rows / 2)
                .min(last_offset);
            self.keep_visible();
        }
        self.sync_plane(false);
    }

    fn compute_beliefs(&mut self) {
        let selected_key = self.belief_visible.get(self.belief_selected).map(|&i| {
            let row = &self.belief_rows[i];
            (row.topic, self.row_agent(row).to_owned(), row.version)
        });
        let t = self.cursor;
        let timeline = &self.timeline;
        let latest = timeline.latest_marks(t);
        let latest_at = latest.first().map(|m| m.recorded_at);
        let mut reconfirmed: HashMap<u64, String> = HashMap::new();
        for m in latest.iter().filter(|m| m.kind == MarkKind::Reconfirmation) {
            for v in &m.covering {
                reconfirmed.insert(
                    *v,
                    format!("↻ reconfirmed by {} on {}", m.id, m.cites.join(",")),
                );
            }
        }
        // Held and just-closed beliefs, each grouped by topic (both in reading order).
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
            let conflict =
                topic.cardinality == Cardinality::One && agents_disagree(timeline, topic_held);
            let blank = BeliefRow {
                kind: BeliefRowKind::Empty,
                topic: ti,
                claim_index: 0,
                belief: None,
                note: String::new(),
                version: None,
            };
            rows.push(BeliefRow {
                kind: BeliefRowKind::Topic { conflict },
                note: if conflict {
                    "⚠ agents disagree".into()
                } else {
                    String::new()
                },
                ..blank.clone()
            });
            if topic_held.is_empty() && topic_closed.is_empty() {
                rows.push(blank);
                continue;
            }
            // Merge held and just-closed rows by agent, then valid time.
            let mut mine: Vec<(usize, bool)> = topic_held
                .iter()
                .map(|&i| (i, true))
                .chain(topic_closed.iter().map(|&i| (i, false)))
                .collect();
            mine.sort_by_key(|&(i, is_held)| {
                let v = &timeline.beliefs[i].version;
                (timeline.topic_agent(i).1, v.valid.from, !is_held, v.id)
            });
            for (i, is_held) in mine {
                let b = &timeline.beliefs[i];
                let v = &b.version;
                let mut note = String::new();
                if let Some(r) = reconfirmed.get(&v.id) {
                    note = r.clone();
                } else if !is_held {
                    if let Some(c) = &v.closed {
                        note = format!("✗ {c}");
                    }
                } else if Some(v.recorded_at) == latest_at {
                    note = "+ new".into();
                }
                if let Some(by) = v.clipped_by.as_ref().filter(|_| note.is_empty()) {
                    note = format!("clipped by {by}");
                }
                rows.push(BeliefRow {
                    kind: if is_held {
                        BeliefRowKind::Held
                    } else {
                        BeliefRowKind::ClosedNow
                    },
                    claim_index: self.claim_index[ti].get(&*v.claim).copied().unwrap_or(0),
                    belief: Some(i),
                    note,
                    version: Some(v.id),
                    topic: ti,
                });
            }
        }
        self.belief_claim_width = rows
            .iter()
            .filter_map(|r| r.belief)
            .map(|i| super::ui::text::width(&self.timeline.beliefs[i].version.claim))
            .max()
            .unwrap_or(0);
        self.belief_rows = rows;
        self.refilter_beliefs();
        // Keep the selection on the same belief (or topic) when the cursor moves.
        if let Some((topic, agent, version)) = selected_key {
            let rows = &self.belief_rows;
            let visible = &self.belief_visible;
            let found = visible
                .iter()
                .position(|&i| version.is_some() && rows[i].version == version)
                .or_else(|| {
                    visible
                        .iter()
                        .position(|&i| rows[i].topic == topic && self.row_agent(&rows[i]) == agent)
                })
                .or_else(|| visible.iter().position(|&i| rows[i].topic == topic));
            if let Some(p) = found {
                self.belief_selected = p;
            }
        }
        self.belief_selected = self
            .belief_selected
            .min(self.belief_visible.len().saturating_sub(1));
        self.keep_visible();
    }

    fn refilter_beliefs(&mut self) {
        let needle = self.belief_filter.to_lowercase();
        let rows = &self.belief_rows;
        let topics = &self.timeline.header.topics;
        let found = |text: &str| text.to_lowercase().contains(&needle);
        let matches = |r: &BeliefRow| {
            needle.is_empty()
                || found(&topics[r.topic].id)
                || found(self.row_agent(r))
                || found(self.row_claim(r))
                || matches!(r.kind, BeliefRowKind::Topic { .. }) && found(&topics[r.topic].question)
        };
        // A topic heading stays when the topic or any of its rows match.
        let mut topic_matches = vec![false; self.timeline.header.topics.len()];
        for r in rows.iter().filter(|r| matches(r)) {
            topic_matches[r.topic] = true;
        }
        self.belief_visible = (0..rows.len())
            .filter(|&i| {
                let r = &rows[i];
                match r.kind {
                    BeliefRowKind::Topic { .. } => topic_matches[r.topic],
                    _ => matches(r),
                }
            })
            .collect();
        self.belief_selected = self
            .belief_selected
            .min(self.belief_visible.len().saturating_sub(1));
        self.keep_visible();
    }

    fn refilter_evidence(&mut self) {
        let needle = self.evidence_filter.to_lowercase();
        let found = |s: &str| s.to_lowercase().contains(&needle);
        self.evidence_visible = self
            .timeline
            .evidence
            .iter()
            .enumerate()
            .filter(|(_, item)| {
                let e = &item.evidence;
                needle.is_empty()
                    || [&e.id, &e.kind, &e.source, &e.summary]
                        .iter()
                        .any(|s| found(s))
                    || item.cited_by.iter().any(|id| found(id))
            })
            .map(|(i, _)| i)
            .collect();
        self.evidence_selected = self
            .evidence_selected
            .min(self.evidence_visible.len().saturating_sub(1));
        self.keep_visible();
    }

    fn history_view(&self, topic: usize, agent: Option<&str>) -> TextView {
        let header = &self.timeline.header;
        let t = &header.topics[topic];
        let who = agent.map_or("all agents".to_owned(), str::to_owned);
        let mut lines = vec![
            ViewLine::new(LineStyle::Heading, format!("{} — {}", t.id, t.question)),
            ViewLine::new(
                LineStyle::Note,
                format!(
                    "{who}; every version, oldest first; bold: held at the cursor ({}), dim: not yet recorded",
                    format_short(self.cursor)
                ),
            ),
            ViewLine::new(
                LineStyle::Note,
                format!(
                    "{:<25}  {:<8} {:<22} {:<4}  {:<18}  claim  [assertion; evidence]",
                    "recorded → until", "agent", "valid", "conf", "closed"
                ),
            ),
            ViewLine::new(LineStyle::Normal, String::new()),
        ];
        for b in self
            .timeline
            .topic_versions(topic)
            .filter(|b| agent.is_none_or(|a| &*b.version.agent == a))
        {
            let v = &b.version;
            let style = if v.recorded_at > self.cursor {
                LineStyle::Future
            } else if v.held_at(self.cursor) {
                LineStyle::Held
            } else {
                LineStyle::Closed
            };
            let until = format_short(v.superseded_at);
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
                    "{} → {:<11}  {:<8} {:<22} {:.2}  {:<18}  {}  [{}; {}{clip}]",
                    format_short(v.recorded_at),
                    until,
                    v.agent,
                    time::format_interval_short(v.valid),
                    v.confidence,
                    how,
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
        let notes: Vec<_> = self
            .timeline
            .marks
            .iter()
            .filter(|m| {
                m.topic.as_deref() == Some(t.id.as_str())
                    && agent.is_none_or(|a| m.agent.as_deref() == Some(a))
            })
            .filter(|m| matches!(m.effect, "reconfirmed" | "zero_width" | "no_match"))
            .collect();
        if !notes.is_empty() {
            lines.push(ViewLine::new(LineStyle::Normal, String::new()));
            lines.push(ViewLine::new(
                LineStyle::Heading,
                "Events that changed no version",
            ));
            for m in notes {
                let style = if m.recorded_at > self.cursor {
                    LineStyle::Future
                } else {
                    LineStyle::Note
                };
                lines.push(ViewLine::new(
                    style,
                    format!("{}  {}", format_short(m.recorded_at), describe_mark(m)),
                ));
            }
        }
        TextView {
            title: format!(" History: {} ({who}) ", t.id),
            lines,
            scroll: 0,
        }
    }

    fn evidence_view(&self, index: usize) -> TextView {
        let item = &self.timeline.evidence[index];
        let e = &item.evidence;
        let mut lines = vec![
            ViewLine::new(
                LineStyle::Heading,
                format!("{} — {} from {}", e.id, e.kind, e.source),
            ),
            ViewLine::new(LineStyle::Normal, e.summary.clone()),
            ViewLine::new(LineStyle::Normal, String::new()),
            ViewLine::new(LineStyle::Normal, format!("locator      {}", e.locator)),
            ViewLine::new(
                LineStyle::Normal,
                format!("observed     {}", time::format(e.observed_at)),
            ),
        ];
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
        let lag_style = if e.lag() >= LATE {
            LineStyle::Closed
        } else {
            LineStyle::Normal
        };
        let late = if e.lag() >= LATE {
            "  (late-arriving)"
        } else {
            ""
        };
        lines.push(ViewLine::new(
            lag_style,
            format!("lag          {}{late}", time::format_duration(e.lag())),
        ));
        lines.push(ViewLine::new(
            LineStyle::Normal,
            format!("reliability  {:.2}", e.reliability),
        ));
        lines.push(ViewLine::new(LineStyle::Normal, String::new()));
        lines.push(ViewLine::new(LineStyle::Heading, "Cited by"));
        if item.cited_by.is_empty() {
            lines.push(ViewLine::new(
                LineStyle::Note,
                "nothing: no assertion or retraction cites it",
            ));
        }
        for id in &item.cited_by {
            if let Some(m) = self.timeline.marks.iter().find(|m| &m.id == id) {
                let style = if m.recorded_at > self.cursor {
                    LineStyle::Future
                } else {
                    LineStyle::Normal
                };
                lines.push(ViewLine::new(
                    style,
                    format!("{}  {}", format_short(m.recorded_at), describe_mark(m)),
                ));
            }
        }
        TextView {
            title: format!(" Evidence {} ", e.id),
            lines,
            scroll: 0,
        }
    }

    fn version_view(&self, id: u64) -> TextView {
        let Some(b) = self.timeline.beliefs.iter().find(|b| b.version.id == id) else {
            return TextView {
                title: " Version ".into(),
                lines: Vec::new(),
                scroll: 0,
            };
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
            line(
                "held",
                format!(
                    "{} → {}",
                    time::format(v.recorded_at),
                    time::format(v.superseded_at)
                ),
            ),
            line(
                "assertion",
                format!("{} ({})", v.assertion, v.origin.as_str()),
            ),
        ];
        if let Some(c) = &v.closed {
            lines.push(line("closed", c.to_string()));
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
            if let Some(e) = self.timeline.evidence.iter().find(|e| &e.evidence.id == id) {
                let e = &e.evidence;
                lines.push(ViewLine::new(
                    LineStyle::Normal,
                    format!("{}  {} · {} · {}", e.id, e.kind, e.summary, e.locator),
                ));
            }
        }
        TextView {
            title: format!(" Version {} ", v.assertion),
            lines,
            scroll: 0,
        }
    }

    fn events_view(&self) -> TextView {
        let marks = self.timeline.latest_marks(self.cursor);
        let mut lines = vec![ViewLine::new(
            LineStyle::Heading,
            format!("Events at {}", self.latest),
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
                format!("{}  {}", format_short(m.recorded_at), describe_mark(m)),
            ));
        }
        TextView {
            title: " Events ".into(),
            lines,
            scroll: 0,
        }
    }
}

/// One sentence for an event, as the header and popups show it.
pub fn describe_mark(m: &crate::query::timeline::Mark) -> String {
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
            let zero = if m.effect == "zero_width" {
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
    }
}

/// Rounds a duration up to one people read: 1s, 5s, 15s, 1m, 5m, 15m, 1h, 6h, 1d…
pub fn nice_duration(micros: i64) -> i64 {
    const S: i64 = 1_000_000;
    const STEPS: [i64; 14] = [
        S,
        5 * S,
        15 * S,
        30 * S,
        60 * S,
        300 * S,
        900 * S,
        1800 * S,
        3600 * S,
        3 * 3600 * S,
        6 * 3600 * S,
        12 * 3600 * S,
        86_400 * S,
        7 * 86_400 * S,
    ];
    STEPS
        .iter()
        .copied()
        .find(|&s| s >= micros)
        .unwrap_or(STEPS[STEPS.len() - 1])
}

/// Whether the agents holding beliefs on a `cardinality: one` topic have
/// different working answers (`answer`: greatest `valid_from`, then latest
/// `recorded_at`). `held` is one topic's held beliefs.
fn agents_disagree(timeline: &Timeline, held: &[usize]) -> bool {
    let mut answers: HashMap<usize, (Micros, Micros, u64, &str)> = HashMap::new();
    for &i in held {
        let v = &timeline.beliefs[i].version;
        let candidate = (v.valid.from, v.recorded_at, v.id, &*v.claim);
        let entry = answers
            .entry(timeline.topic_agent(i).1)
            .or_insert(candidate);
        if candidate > *entry {
            *entry = candidate;
        }
    }
    let mut claims = answers.values().map(|a| a.3);
    let first = claims.next();
    claims.any(|c| Some(c) != first)
}

/// The evidence panel's rows, formatted once per timeline.
/// The widest evidence id, for the ID column (computed once per timeline).
fn evidence_id_width(timeline: &Timeline) -> usize {
    timeline
        .evidence
        .iter()
        .map(|item| item.evidence.id.chars().count())
        .max()
        .unwrap_or(2)
}

impl App {
    /// The evidence panel's line for item `index` of the timeline.
    pub fn evidence_row(&self, index: usize) -> Option<EvidenceRow<'_>> {
        let item = self.timeline.evidence.get(index)?;
        let e = &item.evidence;
        Some(EvidenceRow {
            index,
            id: &e.id,
            kind: &e.kind,
            source: &e.source,
            observed: format_short(e.observed_at),
            recorded: format_short(e.recorded_at),
            lag: time::format_duration(e.lag()),
            cited_by: if item.cited_by.is_empty() {
                "-".into()
            } else {
                item.cited_by.join(",")
            },
            summary: &e.summary,
            recorded_at: e.recorded_at,
            late: e.lag() >= LATE,
        })
    }
}
