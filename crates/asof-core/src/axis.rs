//! Time axes: tick steps people read (1 ms … 30 d) and labels that read as
//! dates or clock times at every zoom, distinct at the axis's resolution.
//! Shared by the TUI's scrubber, plane and compare lanes and the exported
//! SVG plane (pure: no terminal, no store).

use crate::time::{self, Micros};

/// One second in µs.
pub const SECOND: i64 = 1_000_000;
const DAY: i64 = 86_400 * SECOND;

/// Whether an axis of this span writes the date in every label: when it
/// spans more than a day (the scrubber writes its dates on a row of their own).
pub fn dated(span: i64) -> bool {
    span > DAY
}

/// A label's width at this step: `03-02` 5 for day steps, else `09:05` 5,
/// `09:05:30` 8 or `09:05:30.250` 12, and 6 more with the date.
pub fn label_width(step: i64, dated: bool) -> i64 {
    if step >= DAY {
        return 5;
    }
    let clock = if step % SECOND != 0 {
        12
    } else if step % (60 * SECOND) != 0 {
        8
    } else {
        5
    };
    clock + if dated { 6 } else { 0 }
}

/// The smallest readable step whose labels leave two cells between them.
pub fn tick_step(span: i64, cells: i64, dated: bool) -> i64 {
    let per_cell = span as f64 / cells.max(1) as f64;
    time::READABLE_STEPS
        .iter()
        .copied()
        .find(|&s| s as f64 / per_cell >= (label_width(s, dated) + 2) as f64)
        .unwrap_or(30 * DAY)
}

/// How a tick at `t` with this `step` reads: the date alone for day steps
/// and midnights, else the clock time (with the date on a `dated` axis), to
/// the second or millisecond when the step has them.
pub fn tick_label(t: Micros, step: i64, dated: bool) -> String {
    if step >= DAY || (t.rem_euclid(DAY) == 0 && step >= 60 * SECOND) {
        return time::format_with(t, "%m-%d");
    }
    let clock = if step % SECOND != 0 {
        "%H:%M:%S%.3f"
    } else if step % (60 * SECOND) != 0 {
        "%H:%M:%S"
    } else {
        "%H:%M"
    };
    if dated {
        time::format_with(t, &format!("%m-%d {clock}"))
    } else {
        time::format_with(t, clock)
    }
}

/// Ticks in `[from, to)` aligned to multiples of the step, each with the cell
/// (0..cells) it falls in.
pub fn ticks(from: Micros, to: Micros, cells: i64, dated: bool) -> (i64, Vec<(i64, Micros)>) {
    let step = tick_step((to - from).max(1), cells, dated);
    ticks_at(from, to, cells, step)
}

/// Ticks for a vertical axis: one label per row, three rows apart at least.
pub fn row_ticks(from: Micros, to: Micros, rows: i64) -> (i64, Vec<(i64, Micros)>) {
    let per_row = (to - from).max(1) as f64 / rows.max(1) as f64;
    let step = time::READABLE_STEPS
        .iter()
        .copied()
        .find(|&s| s as f64 / per_row >= 3.0)
        .unwrap_or(30 * DAY);
    ticks_at(from, to, rows, step)
}

fn ticks_at(from: Micros, to: Micros, cells: i64, step: i64) -> (i64, Vec<(i64, Micros)>) {
    let span = (to - from).max(1);
    let mut t = from.div_euclid(step) * step;
    if t < from {
        t += step;
    }
    let mut out = Vec::new();
    while t < to {
        let cell = ((t - from) as i128 * cells as i128 / span as i128) as i64;
        if (0..cells).contains(&cell) {
            out.push((cell, t));
        }
        t += step;
    }
    (step, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_read_as_dates_or_times() {
        let t = time::parse("2026-03-02T09:05:00Z").unwrap();
        assert_eq!(tick_label(t, 3600 * SECOND, false), "09:05");
        assert_eq!(tick_label(t, 15 * SECOND, false), "09:05:00");
        assert_eq!(
            tick_label(t - t.rem_euclid(DAY), 3600 * SECOND, false),
            "03-02"
        );
        assert_eq!(tick_label(t, 2 * DAY, false), "03-02");
        assert_eq!(tick_step(14 * DAY, 100, false), DAY);
        assert_eq!(tick_step(14 * DAY, 40, false), 7 * DAY);
        assert_eq!(tick_step(3600 * SECOND, 100, false), 5 * 60 * SECOND);
    }

    #[test]
    fn ticks_are_aligned_and_inside() {
        let from = time::parse("2026-03-02T09:05:00Z").unwrap();
        let (step, ticks) = ticks(from, from + 3 * 3600 * SECOND, 60, false);
        assert_eq!(step, 30 * 60 * SECOND);
        assert_eq!(
            ticks.first().map(|t| tick_label(t.1, step, false)),
            Some("09:30".to_owned())
        );
        assert!(ticks.iter().all(|&(cell, _)| (0..60).contains(&cell)));
    }

    #[test]
    fn short_runs_tick_in_milliseconds_and_long_axes_are_dated() {
        let t = time::parse("2026-03-02T09:05:00Z").unwrap();
        // An 8-second run over 100 cells: ticks a second apart or closer.
        let step = tick_step(8 * SECOND, 100, false);
        assert!(step <= SECOND, "{step}");
        assert_eq!(tick_label(t + 250_000, 250_000, false), "09:05:00.250");
        // Three days over 60 cells: every label carries its date.
        assert!(dated(3 * DAY));
        let step = tick_step(3 * DAY, 60, true);
        assert_eq!(step, DAY);
        assert_eq!(tick_label(t, 6 * 3600 * SECOND, true), "03-02 09:05");
        assert_eq!(
            tick_label(t - t.rem_euclid(DAY), 6 * 3600 * SECOND, true),
            "03-02"
        );
        // Labels never overlap: a step leaves its label's width and two cells.
        for cells in [20, 40, 80, 160] {
            for span in [SECOND, 8 * SECOND, 600 * SECOND, DAY, 3 * DAY] {
                let step = tick_step(span, cells, dated(span));
                if step < 30 * DAY {
                    let gap = step as f64 * cells as f64 / span as f64;
                    assert!(gap >= (label_width(step, dated(span)) + 2) as f64);
                }
            }
        }
    }
}
