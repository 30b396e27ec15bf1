//! The TUI's shared state and its router. `App` holds what every panel shares —
//! the timeline, the recorded cursor, focus, the popup, play — and routes each
//! [`Action`] to the panel state it concerns (`tui::state`). Drawing never
//! changes this state; every query runs here, when the cursor or the selection
//! moves, and its text is formatted once for the views to copy.

pub mod copy;
mod live;
mod mouse;
mod plane;
mod popups;
mod review;
mod whatif;

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

use asof_core::time::Micros;
use asof_store::query::timeline::Timeline;
use ratatui::layout::Rect;
use std::collections::HashMap;

pub use live::LiveState;
pub use review::ReviewShown;

/// Play speeds: milliseconds per event.
pub const SPEEDS_MS: [u64; 5] = [2000, 1000, 500, 250, 100];
/// How often the play clock ticks.
pub const TICK_MS: u64 = 50;

pub use crate::tui::state::focus::Focus;

/// The TUI's whole state: what is loaded, where the cursors are, what each panel shows. Keys become
/// [`Action`]s; `update` changes this; views only draw it.
pub struct App {
    /// The store being scrubbed.
    pub timeline: Timeline,
    /// Colours (or none, with `NO_COLOR`).
    pub theme: Theme,
    /// The recorded cursor.
    pub cursor: Micros,
    /// The timeline strip: its zoom and window.
    pub scrubber: ScrubberState,
    /// The focused panel.
    pub focus: Focus,
    /// The open popup, if any.
    pub popup: Option<Popup>,
    /// Whether play is on.
    pub playing: bool,
    /// The play speed, an index into [`SPEEDS_MS`].
    pub speed: usize,
    play_elapsed: u64,
    /// The terminal's size (columns, rows).
    pub size: (u16, u16),
    /// The status line's message, until the next key.
    pub status: Option<String>,
    /// Set when the user quits: the loop ends.
    pub quit: bool,
    /// The beliefs panel.
    pub beliefs: BeliefsState,
    /// The evidence panel.
    pub evidence: EvidenceState,
    /// The plane.
    pub plane: PlaneState,
    /// The what-if fork and compare view, when made.
    pub whatif: WhatIfState,
    /// Per topic: claim text → index for glyph and colour.
    pub claim_index: Vec<HashMap<String, usize>>,
    /// Per belief: its claim's index and its display widths.
    pub looks: Vec<beliefs::BeliefLook>,
    /// The header's description of the latest event at or before the cursor.
    pub latest: String,
    /// Position of the latest event: (1-based index, total).
    pub event_position: (usize, usize),
    /// The review file `m` appends findings to (docs/review.md); `None`:
    /// making findings is off.
    pub review: Option<std::path::PathBuf>,
    /// Who makes the findings (`--reviewer`); `None`: from the environment.
    pub reviewer: Option<String>,
    /// The review as the panels show it, formatted when it changes (not per frame).
    pub review_shown: ReviewShown,
    /// Set when the source is live (design.md §6).
    pub live: Option<LiveState>,
    /// Text `y` asked to put on the clipboard, for the loop to send.
    clipboard: Option<String>,
}

impl App {
    /// The app over `timeline`, drawn with `theme` in a terminal of `size`, the cursor at the log's
    /// end.
    pub fn new(timeline: Timeline, theme: Theme, size: (u16, u16)) -> App {
        let scrubber = ScrubberState::new(timeline.span());
        let cursor = timeline.span().map_or(scrubber.full.0, |(_, last)| last);
        let claim_index = beliefs::claim_index(&timeline);
        let looks = beliefs::looks(&timeline, &claim_index);
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
            looks,
            latest: String::new(),
            event_position: (0, 0),
            review: None,
            reviewer: None,
            review_shown: ReviewShown::default(),
            live: None,
            clipboard: None,
        };
        app.review_changed();
        app.cursor_moved();
        app.sync_plane(true);
        app.prefetch();
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

    /// Milliseconds per event at the play speed.
    pub fn play_interval_ms(&self) -> u64 {
        SPEEDS_MS[self.speed]
    }

    /// The valid cursor: free, or on the diagonal.
    pub fn valid_at(&self) -> Micros {
        self.plane.valid_at(self.cursor)
    }

    /// Applies one action. Returns whether anything visible changed.
    pub fn update(&mut self, action: Action) -> bool {
        if action != Action::Tick {
            self.status = None;
        }
        let changed = match action {
            Action::Tick => {
                let changed = self.tick();
                if changed {
                    self.prefetch();
                }
                return changed;
            }
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
            self.prefetch();
        }
        changed
    }

    /// Reads the evidence rows now on screen from the store, so drawing
    /// finds them (the beliefs' rows are read when they are formatted).
    fn prefetch(&mut self) {
        let rows = self.list_rows().1;
        let window: Vec<usize> = self.evidence.list.window(rows).map(|(_, i)| i).collect();
        self.timeline.evidence_items(&window);
        if let Some(e) = self.timeline.take_error() {
            self.status = Some(e);
        }
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
            Action::StepBack
            | Action::StepForward
            | Action::PrevEvent
            | Action::NextEvent
            | Action::Start
            | Action::End => {
                if let Some(t) = self.scrubber.target(action, &self.timeline, self.cursor) {
                    self.move_cursor(t);
                }
            }
            Action::TogglePlay => {
                if !self.playing && self.timeline.next_event(self.cursor).is_none() {
                    self.move_cursor(self.timeline.span().map_or(self.scrubber.full.0, |s| s.0));
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
                if let Some(by) = FilteredList::delta(action, rows) {
                    self.move_selection(by);
                }
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
            Action::ForkReview => self.fork_review(),
            Action::Mark => self.ask_mark(),
            Action::Copy => self.copy(),
            Action::Calls => match texts::calls(&self.timeline, self.cursor) {
                Some(view) => self.popup = Some(Popup::Text(view)),
                None => {
                    self.status = Some(
                        "no model calls: this store was not read from an OpenTelemetry trace"
                            .into(),
                    )
                }
            },
            Action::SaveFork => self.save_fork(),
            Action::Export => {
                self.popup = Some(Popup::Prompt(Prompt::offering(
                    PromptKind::Export,
                    "html".into(),
                )))
            }
            Action::Compare => match (&self.whatif.fork, self.whatif.showing_fork) {
                (None, _) if self.whatif.runs.is_some() => {
                    self.popup = Some(Popup::Compare(FilteredList::default()))
                }
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
            Action::PlaneLegend => self.plane.legend_page = self.plane.legend_page.wrapping_add(1),
            Action::PlaneLeft
            | Action::PlaneRight
            | Action::PlaneUp
            | Action::PlaneDown
            | Action::PlaneZoomIn
            | Action::PlaneZoomOut => {
                if let Some(t) = self.plane.update(action, self.cursor, self.scrubber.step()) {
                    self.move_cursor(t);
                }
            }
            Action::ScrollLeft | Action::ScrollRight | Action::Type(_) | Action::Edit(_) => {
                return false;
            }
            Action::Tick | Action::Quit | Action::Resize(..) => {}
        }
        true
    }

    /// Moves the recorded cursor, keeps it in view, recomputes what it shows
    /// and reads the rows it brings on screen (outside [`App::update`]).
    pub fn seek(&mut self, t: Micros) {
        self.move_cursor(t);
        self.prefetch();
    }

    /// [`App::seek`] inside an update, which reads the rows on screen once at its end.
    fn move_cursor(&mut self, t: Micros) {
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

    /// Everything that depends on the cursor, recomputed once per move.
    fn cursor_moved(&mut self) {
        let total = self.timeline.mark_count();
        let done = self.timeline.events_upto(self.cursor);
        self.event_position = (done, total);
        self.latest = texts::latest(&self.timeline, self.cursor);
        let (belief_rows, evidence_rows) = self.list_rows();
        self.beliefs
            .compute(&self.timeline, &self.looks, self.cursor, belief_rows);
        if self.focus != Focus::Evidence {
            self.evidence
                .follow(&self.timeline, self.cursor, evidence_rows);
        }
        self.sync_plane(false);
    }
}
