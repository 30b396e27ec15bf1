//! The plane's state: which topic and agent it shows, the valid cursor (free,
//! or following the diagonal valid = recorded), the crosshair's reading, and
//! whether the plane is shown full-screen.

use crate::tui::plane_model::{self as plane, Plane, Reading};
use asof_core::time::Micros;
use asof_store::query::timeline::Timeline;
use std::collections::HashMap;

/// The plane panel: the plane drawn, the crosshair's valid cursor and its reading.
#[derive(Debug, Clone)]
pub struct PlaneState {
    /// The topic's plane, built when the topic or agent changes.
    pub plane: Plane,
    /// `false`: the valid cursor follows the diagonal (valid = recorded).
    pub valid_free: bool,
    valid_cursor: Micros,
    /// The crosshair's reading, from `believed(recorded, about valid)`.
    pub reading: Reading,
    /// The (topic, agent, recorded, valid) the reading was computed for.
    reading_for: Option<(usize, Option<String>, Micros, Micros)>,
    /// `p`: the plane takes the whole body of the screen.
    pub full: bool,
    /// `n`: which page of the legend shows, when it does not fit at once
    /// (taken modulo the number of pages when drawn).
    pub legend_page: usize,
}

impl PlaneState {
    /// The plane state before any topic is chosen, its crosshair at `cursor`.
    pub fn new(cursor: Micros) -> PlaneState {
        PlaneState {
            plane: Plane::empty(),
            valid_free: false,
            valid_cursor: cursor,
            reading: Reading::default(),
            reading_for: None,
            full: false,
            legend_page: 0,
        }
    }

    /// The valid cursor: free, or on the diagonal (the recorded cursor).
    pub fn valid_at(&self, cursor: Micros) -> Micros {
        if self.valid_free {
            self.valid_cursor
        } else {
            cursor
        }
    }

    /// `v`: frees the valid cursor where it is (on the diagonal), or lets it
    /// follow the diagonal again. Returns the status line to show.
    pub fn toggle_valid(&mut self, cursor: Micros) -> &'static str {
        if self.valid_free {
            self.valid_free = false;
            "valid cursor follows the diagonal (about = recorded)"
        } else {
            self.valid_cursor = cursor;
            self.valid_free = true;
            "valid cursor free where it was: ←/→ in the plane move it; v follows the diagonal again"
        }
    }

    /// The plane's own keys: ←/→ move the free valid cursor (else step recorded
    /// time by `step`), ↑/↓ recorded time, z/Z zoom. Returns where the recorded
    /// cursor should go, if anywhere; `None` also for keys that are not the plane's.
    pub fn update(
        &mut self,
        action: crate::tui::action::Action,
        cursor: Micros,
        step: i64,
    ) -> Option<Micros> {
        use crate::tui::action::Action;
        let sign = if action == Action::PlaneLeft { -1 } else { 1 };
        match action {
            Action::PlaneLeft | Action::PlaneRight if self.valid_free => self.move_valid(sign),
            Action::PlaneLeft | Action::PlaneRight => return Some(cursor + sign * step),
            Action::PlaneUp => return Some(cursor + self.plane.recorded_step()),
            Action::PlaneDown => return Some(cursor - self.plane.recorded_step()),
            Action::PlaneZoomIn => self.plane.zoom(0.5, self.valid_at(cursor), cursor),
            Action::PlaneZoomOut => self.plane.zoom(2.0, self.valid_at(cursor), cursor),
            _ => {}
        }
        None
    }

    /// Moves the free valid cursor by `steps` plane steps.
    pub fn move_valid(&mut self, steps: i64) {
        self.valid_cursor += steps * self.plane.valid_step();
    }

    /// Puts the free valid cursor at `valid` (a click on the grid).
    pub fn put_valid(&mut self, valid: Micros) {
        self.valid_free = true;
        self.valid_cursor = valid;
    }

    /// Rebuilds the plane when the topic or agent changed (or `force`), keeps the
    /// crosshair in view and recomputes its reading when it moved.
    pub fn sync(
        &mut self,
        timeline: &Timeline,
        claims: &HashMap<String, usize>,
        (topic, agent): (usize, Option<String>),
        cursor: Micros,
        force: bool,
    ) {
        if force || topic != self.plane.topic || agent != self.plane.agent {
            self.plane = Plane::build(timeline, claims, topic, agent.as_deref());
            self.reading_for = None;
            self.legend_page = 0;
        }
        let valid = self.valid_at(cursor);
        self.plane.follow(valid, cursor);
        let key = (topic, self.plane.agent.clone(), cursor, valid);
        if self.reading_for.as_ref() == Some(&key) {
            return;
        }
        self.reading = plane::reading(
            timeline,
            claims,
            topic,
            self.plane.agent.as_deref(),
            cursor,
            valid,
        );
        self.reading_for = Some(key);
    }
}
