//! Mouse input: a click seeks, selects or puts the crosshair where it lands; the
//! wheel scrolls a list or steps recorded time. What is under the pointer comes
//! from `tui::layout::hit`, the rectangles the views draw into.

use super::{App, Focus};
use crate::tui::layout::{self, Hit};

impl App {
    pub(super) fn click(&mut self, x: u16, y: u16) {
        let (belief_rows, evidence_rows) = self.list_rows();
        match layout::hit(&self.areas(), self.focus == Focus::Plane, x, y) {
            Hit::Scrubber(area) => {
                self.focus = Focus::Scrubber;
                self.move_cursor(self.scrubber.time_at_column(area, x));
            }
            Hit::Plane(grid) => {
                self.focus = Focus::Plane;
                if let Some((valid, recorded)) =
                    crate::tui::plane_model::time_at(&self.plane.plane, grid, x, y)
                {
                    self.plane.put_valid(valid);
                    self.move_cursor(recorded);
                }
            }
            Hit::Beliefs(row) => {
                self.focus = Focus::Beliefs;
                if let Some(r) = row
                    .map(|r| r + self.beliefs.list.offset())
                    .filter(|&r| r < self.beliefs.list.len())
                {
                    self.beliefs.list.select(r, belief_rows);
                }
            }
            Hit::Evidence(row) => {
                self.focus = Focus::Evidence;
                if let Some(r) = row
                    .map(|r| r + self.evidence.list.offset())
                    .filter(|&r| r < self.evidence.list.len())
                {
                    self.evidence.list.select(r, evidence_rows);
                }
            }
            Hit::Nothing => {}
        }
    }

    pub(super) fn wheel(&mut self, down: bool, x: u16, y: u16) {
        let list = match layout::hit(&self.areas(), self.focus == Focus::Plane, x, y) {
            Hit::Beliefs(_) => Some(Focus::Beliefs),
            Hit::Evidence(_) => Some(Focus::Evidence),
            _ => None,
        };
        if let Some(focus) = list {
            self.focus = focus;
            self.move_selection(if down { 3 } else { -3 });
        } else {
            let step = self.scrubber.step();
            self.move_cursor(self.cursor + if down { step } else { -step });
        }
    }
}
