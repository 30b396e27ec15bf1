//! The TUI's shared state and its router. `App` holds what every panel shares —
//! the timeline, the recorded cursor, focus, the popup, play — and routes each
//! [`Action`] to the panel state it concerns (`tui::state`). Drawing never
//! changes this state; every query runs here, when the cursor or the selection
//! moves, and its text is formatted once for the views to copy.

use super::action::Action;
use super::keymap::Context;
use super::layout::{self, Areas};
use super::state::beliefs::{self, BeliefsState};
use super::state::evidence::EvidenceState;
use super::state::list::FilteredList;
use super::state::plane::PlaneState;
use super::state::popup::{Popup, Prompt, PromptKind};
use super::state::scrubber::ScrubberState;
use super::state::texts;
use super::state::whatif::WhatIfState;
use super::theme::Theme;
use super::whatif::ForkResult;
use crate::query::timeline::Timeline;
use crate::time::{self, Micros, format_short};
use ratatui::layout::Rect;
use std::collections::HashMap;

pub use crate::query::LATE;
/// Play speeds: milliseconds per event.
pub const SPEEDS_MS: [u64; 5] = [2000, 1000, 500, 250, 100];
/// How often the play clock ticks.
pub const TICK_MS: u64 = 50;

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

pub struct App {
    pub timeline: Timeline,
    pub theme: Theme,
    /// The recorded cursor.
    pub cursor: Micros,
    pub scrubber: ScrubberState,
    pub focus: Focus,
    pub popup: Option<Popup>,
    pub playing: bool,
    pub speed: usize,
    play_elapsed: u64,
    pub size: (u16, u16),
    pub status: Option<String>,
    pub quit: bool,
    pub beliefs: BeliefsState,
    pub evidence: EvidenceState,
    pub plane: PlaneState,
    pub whatif: WhatIfState,
    /// Per topic: claim text → index for glyph and colour.
    pub claim_index: Vec<HashMap<String, usize>>,
    /// The header's description of the latest event at or before the cursor.
    pub latest: String,
    /// Position of the latest event: (1-based index, total).
    pub event_position: (usize, usize),
}

impl App {
    pub fn new(timeline: Timeline, theme: Theme, size: (u16, u16)) -> App {
        let scrubber = ScrubberState::new(timeline.span());
        let cursor = timeline.span().map_or(scrubber.full.0, |(_, last)| last);
        let claim_index = claim_index(&timeline);
        let evidence = EvidenceState::new(&timeline);
        let mut app = App {
            timeline,
            theme,
            cursor,
            scrubber,
            focus: Focus::Scrubber,
            popup: None,
            playing: false,
            speed: 1,
            play_elapsed: 0,
            size,
            status: None,
            quit: false,
            beliefs: BeliefsState::default(),
            evidence,
            plane: PlaneState::new(cursor),
            whatif: WhatIfState::default(),
            claim_index,
            latest: String::new(),
            event_position: (0, 0),
        };
        app.cursor_moved();
        app.sync_plane(true);
        app
    }

    /// The panels on this screen (the same rectangles the views draw into).
    pub fn areas(&self) -> Areas {
        layout::areas_with(Rect::new(0, 0, self.size.0, self.size.1), self.plane.full)
    }

    fn screen(&self) -> Rect {
        Rect::new(0, 0, self.size.0, self.size.1)
    }

    /// How many rows of the beliefs and of the evidence list are on screen.
    pub fn list_rows(&self) -> (usize, usize) {
        let a = self.areas();
        (
            layout::rows(a.beliefs.map(layout::belief_rows)),
            layout::rows(a.evidence.map(layout::evidence_rows)),
        )
    }

    /// The context whose bindings apply now.
    pub fn context(&self) -> Context {
        match (&self.popup, self.focus) {
            (Some(Popup::Prompt(_)), _) => Context::Prompt,
            (Some(_), _) => Context::Popup,
            (None, Focus::Scrubber) => Context::Scrubber,
            (None, Focus::Plane) => Context::Plane,
            (None, _) => Context::Lists,
        }
    }

    pub fn play_interval_ms(&self) -> u64 {
        SPEEDS_MS[self.speed]
    }

    /// The valid cursor: free, or on the diagonal.
    pub fn valid_at(&self) -> Micros {
        self.plane.valid_at(self.cursor)
    }

    /// The evidence id a worker should fork without, if the user asked (taken once).
    pub fn take_fork_request(&mut self) -> Option<String> {
        self.whatif.request.take()
    }

    /// A worker finished the fork: keep it and open the compare view.
    pub fn fork_finished(&mut self, result: Result<ForkResult, String>) {
        self.whatif.busy = None;
        match result {
            Ok(fork) => {
                if self.whatif.showing_fork {
                    self.swap_timelines();
                }
                self.whatif.other = Some(fork.timeline.clone());
                self.status = Some(format!(
                    "what-if fork without {} ready: c cycles compare → fork → parent",
                    fork.removed
                ));
                self.whatif.fork = Some(fork);
                self.popup = Some(Popup::Compare(FilteredList::default()));
            }
            Err(e) => self.status = Some(format!("fork failed: {e}")),
        }
    }

    /// The influence ranking arrived from the background.
    pub fn influence_ready(&mut self, ranking: Vec<crate::fork::influence::Influence>) {
        self.whatif.influence_ready(ranking);
    }

    /// Shows the other timeline (parent ↔ fork) in every panel.
    fn swap_timelines(&mut self) {
        let Some(mut other) = self.whatif.other.take() else {
            return;
        };
        std::mem::swap(&mut self.timeline, &mut other);
        self.whatif.other = Some(other);
        self.whatif.showing_fork = !self.whatif.showing_fork;
        let filter = std::mem::take(&mut self.evidence.list.filter);
        self.evidence = EvidenceState::new(&self.timeline);
        let rows = self.list_rows().1;
        self.evidence.set_filter(&self.timeline, filter, rows);
        self.cursor_moved();
        self.sync_plane(true);
    }

    /// The (topic, agent) the plane should show: the beliefs selection's topic and
    /// agent, or the first agent holding versions on that topic.
    fn plane_target(&self) -> (usize, Option<String>) {
        let row = self.beliefs.selected();
        let topic = row.map_or(0, |r| r.topic);
        let agent = match row {
            Some(r) if r.belief.is_some() => Some(beliefs::agent_of(&self.timeline, r).to_owned()),
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

    fn sync_plane(&mut self, force: bool) {
        let target = self.plane_target();
        let empty = HashMap::new();
        let claims = self.claim_index.get(target.0).unwrap_or(&empty);
        self.plane
            .sync(&self.timeline, claims, target, self.cursor, force);
    }

    /// Applies one action. Returns whether anything visible changed.
    pub fn update(&mut self, action: Action) -> bool {
        if action != Action::Tick {
            self.status = None;
        }
        let changed = match action {
            Action::Tick => return self.tick(),
            Action::Quit => {
                self.quit = true;
                true
            }
            Action::Resize(w, h) => {
                self.size = (w, h);
                self.relayout();
                true
            }
            _ if self.popup.is_some() => self.update_popup(action),
            _ => self.apply(action),
        };
        if changed {
            self.sync_plane(false);
        }
        changed
    }

    fn apply(&mut self, action: Action) -> bool {
        let (belief_rows, evidence_rows) = self.list_rows();
        match action {
            Action::Back => {
                // Esc backs out of one thing at a time and never quits.
                if !self.clear_filter() {
                    if self.playing {
                        self.playing = false;
                    } else if self.plane.full {
                        self.plane.full = false;
                        self.relayout();
                    } else {
                        self.status = Some("nothing to close: q quits".into());
                    }
                }
            }
            Action::StepBack => self.seek(self.cursor - self.scrubber.step()),
            Action::StepForward => self.seek(self.cursor + self.scrubber.step()),
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
            Action::Start => self.seek(self.timeline.span().map_or(self.scrubber.full.0, |s| s.0)),
            Action::End => self.seek(self.timeline.span().map_or(self.scrubber.full.1, |s| s.1)),
            Action::TogglePlay => {
                if !self.playing && self.timeline.next_event(self.cursor).is_none() {
                    self.seek(self.timeline.span().map_or(self.scrubber.full.0, |s| s.0));
                }
                self.playing = !self.playing;
                self.play_elapsed = 0;
            }
            Action::Faster => self.speed = (self.speed + 1).min(SPEEDS_MS.len() - 1),
            Action::Slower => self.speed = self.speed.saturating_sub(1),
            Action::ZoomIn => self.scrubber.zoom(0.5, self.cursor),
            Action::ZoomOut => self.scrubber.zoom(2.0, self.cursor),
            Action::FocusNext => self.focus = self.focus.step(1),
            Action::FocusPrev => self.focus = self.focus.step(-1),
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => {
                let rows = if self.focus == Focus::Beliefs {
                    belief_rows
                } else {
                    evidence_rows
                };
                let by = match action {
                    Action::Up => -1,
                    Action::Down => 1,
                    Action::PageUp => -FilteredList::page(rows),
                    Action::PageDown => FilteredList::page(rows),
                    Action::Top => isize::MIN / 2,
                    _ => isize::MAX / 2,
                };
                self.move_selection(by);
            }
            Action::Open => self.open(),
            Action::Filter if matches!(self.focus, Focus::Beliefs | Focus::Evidence) => {
                // `/` starts a new filter; the old one stays until the first key.
                self.popup = Some(Popup::Prompt(Prompt::new(
                    PromptKind::Filter(self.focus),
                    String::new(),
                )));
            }
            Action::Filter => {
                self.status = Some("/ filters the beliefs or evidence list: Tab to one".into())
            }
            Action::Help => self.popup = Some(Popup::Help(texts::help())),
            Action::Jump => {
                self.popup = Some(Popup::Prompt(Prompt::new(PromptKind::Jump, String::new())))
            }
            Action::Click(x, y) => self.click(x, y),
            Action::Wheel(down, x, y) => self.wheel(down, x, y),
            Action::Fork => self.fork(),
            Action::Compare => match (&self.whatif.fork, self.whatif.showing_fork) {
                (None, _) => self.status = Some("no fork yet: select evidence and press w".into()),
                (Some(_), true) => self.swap_timelines(),
                (Some(_), false) => self.popup = Some(Popup::Compare(FilteredList::default())),
            },
            Action::ToggleValid => self.status = Some(self.plane.toggle_valid(self.cursor).into()),
            Action::PlaneFull => {
                self.plane.full = !self.plane.full;
                if self.plane.full {
                    self.focus = Focus::Plane;
                }
                self.relayout();
            }
            Action::PlaneLeft | Action::PlaneRight => {
                let sign = if action == Action::PlaneLeft { -1 } else { 1 };
                if self.plane.valid_free {
                    self.plane.move_valid(sign);
                } else {
                    self.seek(self.cursor + sign * self.scrubber.step());
                }
            }
            Action::PlaneUp => self.seek(self.cursor + self.plane.plane.recorded_step()),
            Action::PlaneDown => self.seek(self.cursor - self.plane.plane.recorded_step()),
            Action::PlaneZoomIn => self.plane.plane.zoom(0.5, self.valid_at(), self.cursor),
            Action::PlaneZoomOut => self.plane.plane.zoom(2.0, self.valid_at(), self.cursor),
            Action::ScrollLeft | Action::ScrollRight | Action::Type(_) | Action::Edit(_) => {
                return false;
            }
            Action::Tick | Action::Quit | Action::Resize(..) => {}
        }
        true
    }

    fn tick(&mut self) -> bool {
        if self.whatif.busy.is_some() {
            self.whatif.spinner = self.whatif.spinner.wrapping_add(1);
        }
        if !self.playing {
            return self.whatif.busy.is_some();
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

    /// Keys while a popup is open.
    fn update_popup(&mut self, action: Action) -> bool {
        let screen = self.screen();
        let Some(popup) = &mut self.popup else {
            return false;
        };
        match (popup, action) {
            (Popup::Prompt(_), _) => return self.update_prompt(action),
            (_, Action::Back) => self.popup = None,
            (Popup::Help(_), Action::Help) => self.popup = None,
            (Popup::Compare(_), Action::Compare) => {
                self.popup = None;
                self.swap_timelines();
            }
            (Popup::Help(view) | Popup::Text(view), _) => return view.update(action, screen),
            (Popup::Compare(scroll), _) => {
                let lines = self
                    .whatif
                    .fork
                    .as_ref()
                    .map_or(0, super::whatif::line_count);
                let rows = layout::inner(layout::compare_popup(screen)).height as usize;
                if scroll.len() != lines {
                    scroll.set_items((0..lines).collect(), rows);
                }
                let page = FilteredList::page(rows);
                match action {
                    Action::Up => scroll.scroll_by(-1, rows),
                    Action::Down => scroll.scroll_by(1, rows),
                    Action::PageUp => scroll.scroll_by(-page, rows),
                    Action::PageDown => scroll.scroll_by(page, rows),
                    Action::Top => scroll.scroll_by(isize::MIN / 2, rows),
                    Action::Bottom => scroll.scroll_by(isize::MAX / 2, rows),
                    _ => return false,
                }
            }
        }
        true
    }

    fn update_prompt(&mut self, action: Action) -> bool {
        let Some(Popup::Prompt(prompt)) = &mut self.popup else {
            return false;
        };
        let kind = prompt.kind;
        match action {
            Action::Back => {
                self.popup = None;
                if let PromptKind::Filter(focus) = kind {
                    self.set_filter(focus, String::new());
                }
            }
            Action::Open => match kind {
                PromptKind::Filter(_) => self.popup = None,
                PromptKind::Jump => {
                    match time::parse_user(&prompt.text, time::now(), self.cursor) {
                        Ok(t) => {
                            self.popup = None;
                            self.seek(t);
                        }
                        // The text stays, to be mended.
                        Err(e) => prompt.error = Some(e),
                    }
                }
            },
            _ => {
                if prompt.edit(action)
                    && let PromptKind::Filter(focus) = kind
                {
                    let text = prompt.text.clone();
                    self.set_filter(focus, text);
                }
            }
        }
        true
    }

    fn set_filter(&mut self, focus: Focus, text: String) {
        let (belief_rows, evidence_rows) = self.list_rows();
        match focus {
            Focus::Beliefs => self.beliefs.set_filter(&self.timeline, text, belief_rows),
            Focus::Evidence => self
                .evidence
                .set_filter(&self.timeline, text, evidence_rows),
            Focus::Scrubber | Focus::Plane => {}
        }
    }

    /// Esc on a filtered list clears its filter; returns whether it did.
    fn clear_filter(&mut self) -> bool {
        let filtered = match self.focus {
            Focus::Beliefs => self.beliefs.list.is_filtered(),
            Focus::Evidence => self.evidence.list.is_filtered(),
            _ => false,
        };
        if filtered {
            self.set_filter(self.focus, String::new());
        }
        filtered
    }

    /// Moves the recorded cursor, keeps it in view, and recomputes what it shows.
    pub fn seek(&mut self, t: Micros) {
        self.cursor = self.scrubber.reveal(t);
        self.cursor_moved();
    }

    /// After a resize or a layout change: keep each list's selection on screen.
    fn relayout(&mut self) {
        let (belief_rows, evidence_rows) = self.list_rows();
        self.beliefs.list.keep_visible(belief_rows);
        self.beliefs.format_visible(&self.timeline, belief_rows);
        self.evidence.list.keep_visible(evidence_rows);
    }

    fn move_selection(&mut self, by: isize) {
        let (belief_rows, evidence_rows) = self.list_rows();
        match self.focus {
            Focus::Beliefs => self.beliefs.move_by(&self.timeline, by, belief_rows),
            Focus::Evidence => self.evidence.list.move_by(by, evidence_rows),
            Focus::Scrubber | Focus::Plane => {}
        }
    }

    fn fork(&mut self) {
        let selected = self
            .evidence
            .list
            .selected_item()
            .map(|i| self.timeline.evidence[i].evidence.id.clone());
        match (self.whatif.may_fork(), self.focus, selected) {
            (Err(why), _, _) => self.status = Some(why.into()),
            (Ok(()), Focus::Evidence, Some(id)) => {
                self.whatif.busy = Some(format!("replaying without {id}"));
                self.whatif.request = Some(id);
            }
            _ => {
                self.status =
                    Some("select an evidence item (Tab to the evidence panel), then w".into())
            }
        }
    }

    fn click(&mut self, x: u16, y: u16) {
        let areas = self.areas();
        let (belief_rows, evidence_rows) = self.list_rows();
        let hit = |r: Option<Rect>| r.filter(|r| r.contains((x, y).into()));
        let plane_area = areas
            .plane
            .filter(|_| !areas.plane_shares_evidence || self.focus == Focus::Plane);
        if let Some(area) = hit(Some(areas.scrubber)) {
            self.focus = Focus::Scrubber;
            let t = self.scrubber.time_at_column(area, x);
            self.seek(t);
        } else if let Some(area) = hit(plane_area) {
            self.focus = Focus::Plane;
            if let Some((valid, recorded)) =
                super::plane::time_at(&self.plane.plane, layout::plane_grid(area), x, y)
            {
                self.plane.put_valid(valid);
                self.seek(recorded);
            }
        } else if let Some(area) = hit(areas.beliefs) {
            self.focus = Focus::Beliefs;
            if let Some(rows) = hit(Some(layout::belief_rows(area))) {
                let at = self.beliefs.list.offset() + (y - rows.y) as usize;
                if at < self.beliefs.list.len() {
                    self.beliefs.list.select(at, belief_rows);
                }
            }
        } else if let Some(area) = hit(areas.evidence) {
            self.focus = Focus::Evidence;
            if let Some(rows) = hit(Some(layout::evidence_rows(area))) {
                let at = self.evidence.list.offset() + (y - rows.y) as usize;
                if at < self.evidence.list.len() {
                    self.evidence.list.select(at, evidence_rows);
                }
            }
        }
    }

    fn wheel(&mut self, down: bool, x: u16, y: u16) {
        let areas = self.areas();
        let over = |r: Option<Rect>| r.is_some_and(|r| r.contains((x, y).into()));
        if over(areas.beliefs) || over(areas.evidence) {
            self.focus = if over(areas.beliefs) {
                Focus::Beliefs
            } else {
                Focus::Evidence
            };
            self.move_selection(if down { 3 } else { -3 });
        } else {
            let step = self.scrubber.step();
            self.seek(self.cursor + if down { step } else { -step });
        }
    }

    fn open(&mut self) {
        let view = match self.focus {
            Focus::Plane => match self.plane.reading.versions.first() {
                Some(&id) => texts::version(&self.timeline, id),
                None => {
                    self.status = Some("nothing is believed under the crosshair".into());
                    return;
                }
            },
            Focus::Beliefs => match self.beliefs.selected() {
                Some(row) => {
                    let agent = row
                        .belief
                        .map(|_| beliefs::agent_of(&self.timeline, row).to_owned());
                    texts::history(&self.timeline, self.cursor, row.topic, agent.as_deref())
                }
                None => return,
            },
            Focus::Evidence => match self.evidence.list.selected_item() {
                Some(i) => {
                    let id = &self.timeline.evidence[i].evidence.id;
                    texts::evidence(&self.timeline, self.cursor, i, self.whatif.influence_of(id))
                }
                None => return,
            },
            Focus::Scrubber => texts::events(&self.timeline, self.cursor, &self.latest),
        };
        self.popup = Some(Popup::Text(view));
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
                format!(
                    "{} {}{more}",
                    format_short(m.recorded_at),
                    texts::describe_mark(m)
                )
            }
        };
        let (belief_rows, evidence_rows) = self.list_rows();
        self.beliefs
            .compute(&self.timeline, &self.claim_index, self.cursor, belief_rows);
        if self.focus != Focus::Evidence {
            self.evidence
                .follow(&self.timeline, self.cursor, evidence_rows);
        }
        self.sync_plane(false);
    }
}

/// Per topic, claim text → its glyph and colour index, in order of first version.
fn claim_index(timeline: &Timeline) -> Vec<HashMap<String, usize>> {
    let mut index: Vec<HashMap<String, usize>> = vec![HashMap::new(); timeline.header.topics.len()];
    for (t, map) in index.iter_mut().enumerate() {
        for b in timeline.topic_versions(t) {
            let next = map.len();
            map.entry(b.version.claim.to_string()).or_insert(next);
        }
    }
    index
}
