//! The timeline scrubber's state: the visible recorded range, zooming around
//! the cursor, the step of ←/→, and the instant under a column (rounded to what
//! the zoom can resolve).

use crate::tui::layout;
use asof_core::time::Micros;
use ratatui::layout::Rect;

/// The narrowest view the timeline zooms to: 10 ms, so a run of seconds
/// can be read event by event.
const MIN_VIEW: i64 = 10_000;

/// The timeline strip: which part of the recorded span it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScrubberState {
    /// The visible recorded range.
    pub view: (Micros, Micros),
    /// The whole log's range, padded.
    pub full: (Micros, Micros),
}

impl ScrubberState {
    /// The strip over the log's `span` (padded a little), showing all of it.
    pub fn new(span: Option<(Micros, Micros)>) -> ScrubberState {
        let full = match span {
            Some((a, b)) => {
                let pad = asof_core::time::readable_step((b - a) / 50).max(1_000);
                (a - pad, b + pad)
            }
            None => {
                let now = asof_core::time::now();
                (now - 3_600_000_000, now + 3_600_000_000)
            }
        };
        ScrubberState { view: full, full }
    }

    /// Where ←/→, [/] and Home/End take the recorded cursor from `cursor`.
    pub fn target(
        &self,
        action: crate::tui::action::Action,
        timeline: &asof_store::query::timeline::Timeline,
        cursor: Micros,
    ) -> Option<Micros> {
        use crate::tui::action::Action;
        match action {
            Action::StepBack => Some(cursor - self.step()),
            Action::StepForward => Some(cursor + self.step()),
            Action::PrevEvent => timeline.prev_event(cursor),
            Action::NextEvent => timeline.next_event(cursor),
            Action::Start => Some(timeline.span().map_or(self.full.0, |s| s.0)),
            Action::End => Some(timeline.span().map_or(self.full.1, |s| s.1)),
            _ => None,
        }
    }

    /// The recorded step for ←/→: about a hundredth of the visible range, rounded
    /// to a duration people read.
    pub fn step(&self) -> i64 {
        asof_core::time::readable_step((self.view.1 - self.view.0) / 100)
    }

    /// Keeps `cursor` (clamped to the log) in view; returns it clamped.
    pub fn reveal(&mut self, cursor: Micros) -> Micros {
        let cursor = cursor.clamp(self.full.0, self.full.1);
        let width = self.view.1 - self.view.0;
        if cursor < self.view.0 {
            self.view = (cursor, cursor + width);
        } else if cursor > self.view.1 {
            self.view = (cursor - width, cursor);
        }
        cursor
    }

    /// Zooms the view by `factor` (below 1: in) around `cursor`, within the log's range.
    pub fn zoom(&mut self, factor: f64, cursor: Micros) {
        let full_width = self.full.1 - self.full.0;
        let width = (((self.view.1 - self.view.0) as f64 * factor) as i64)
            .clamp(MIN_VIEW.min(full_width), full_width);
        let left_share = if self.view.1 > self.view.0 {
            (cursor - self.view.0) as f64 / (self.view.1 - self.view.0) as f64
        } else {
            0.5
        };
        let mut from = cursor - (width as f64 * left_share.clamp(0.0, 1.0)) as i64;
        from = from.clamp(self.full.0, self.full.1 - width);
        self.view = (from, from + width);
    }

    /// The recorded instant under a scrubber column, rounded to the time one
    /// column covers (made readable), so a click shows `12:10`, not microseconds.
    pub fn time_at_column(&self, area: Rect, column: u16) -> Micros {
        let lanes = layout::scrubber_lanes(area);
        let x = column
            .saturating_sub(lanes.x)
            .min(lanes.width.saturating_sub(1)) as i64;
        let width = lanes.width.max(1) as i64;
        let span = self.view.1 - self.view.0;
        let exact = self.view.0 + span * x / width + span / width / 2;
        round_to(exact, asof_core::time::readable_step(span / width))
    }
}

/// `t` rounded to the nearest multiple of `unit` (since the epoch, so minutes
/// and hours land on the clock).
pub fn round_to(t: Micros, unit: i64) -> Micros {
    if unit <= 1 {
        return t;
    }
    (t + unit / 2).div_euclid(unit) * unit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clicks_land_on_readable_times() {
        assert_eq!(round_to(1_234_567_891, 1_000_000), 1_235_000_000);
        assert_eq!(round_to(-1_400_000, 1_000_000), -1_000_000);
        let s = ScrubberState {
            view: (0, 86_400_000_000),
            full: (0, 86_400_000_000),
        };
        let t = s.time_at_column(Rect::new(0, 0, 110, 7), 57);
        assert_eq!(t % 900_000_000, 0, "a day over 100 columns: quarter hours");
    }
}
