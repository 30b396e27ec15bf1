//! Time axes: tick steps people read (1 s … 30 d) and labels that read as
//! dates or clock times at every zoom. Shared by the scrubber and the plane.

use crate::time::{self, Micros};

pub const SECOND: i64 = 1_000_000;
const DAY: i64 = 86_400 * SECOND;
const TICKS: [i64; 16] = [
    SECOND,
    5 * SECOND,
    15 * SECOND,
    30 * SECOND,
    60 * SECOND,
    5 * 60 * SECOND,
    15 * 60 * SECOND,
    30 * 60 * SECOND,
    3600 * SECOND,
    3 * 3600 * SECOND,
    6 * 3600 * SECOND,
    12 * 3600 * SECOND,
    DAY,
    2 * DAY,
    7 * DAY,
    30 * DAY,
];

/// The smallest readable step that leaves `label_cells + 2` cells between ticks.
pub fn tick_step(span: i64, cells: i64, label_cells: i64) -> i64 {
    let per_cell = span as f64 / cells.max(1) as f64;
    TICKS
        .iter()
        .copied()
        .find(|&s| s as f64 / per_cell >= (label_cells + 2) as f64)
        .unwrap_or(TICKS[TICKS.len() - 1])
}

/// How wide labels are at this density: `09:05` (5) or `09:05:30` (8).
pub fn label_cells(span: i64, cells: i64) -> i64 {
    if span / cells.max(1) >= 60 * SECOND {
        5
    } else {
        8
    }
}

/// How a tick reads: dates for day steps, clock times below, and the date
/// wherever a tick falls on midnight.
pub fn tick_label(t: Micros, step: i64) -> String {
    if step >= DAY || t.rem_euclid(DAY) == 0 {
        time::format_with(t, "%m-%d")
    } else if step >= 60 * SECOND {
        time::format_with(t, "%H:%M")
    } else {
        time::format_with(t, "%H:%M:%S")
    }
}

/// Ticks in `[from, to)` aligned to multiples of the step, each with the cell
/// (0..cells) it falls in.
pub fn ticks(from: Micros, to: Micros, cells: i64, label_cells: i64) -> (i64, Vec<(i64, Micros)>) {
    let span = (to - from).max(1);
    let step = tick_step(span, cells, label_cells);
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
        assert_eq!(tick_label(t, 3600 * SECOND), "09:05");
        assert_eq!(tick_label(t, 15 * SECOND), "09:05:00");
        assert_eq!(tick_label(t - t.rem_euclid(DAY), 3600 * SECOND), "03-02");
        assert_eq!(tick_label(t, 2 * DAY), "03-02");
        assert_eq!(tick_step(14 * DAY, 100, 5), DAY);
        assert_eq!(tick_step(14 * DAY, 40, 5), 7 * DAY);
        assert_eq!(tick_step(3600 * SECOND, 100, 5), 5 * 60 * SECOND);
    }

    #[test]
    fn ticks_are_aligned_and_inside() {
        let from = time::parse("2026-03-02T09:05:00Z").unwrap();
        let (step, ticks) = ticks(from, from + 3 * 3600 * SECOND, 60, 5);
        assert_eq!(step, 30 * 60 * SECOND);
        assert_eq!(
            ticks.first().map(|t| tick_label(t.1, step)),
            Some("09:30".to_owned())
        );
        assert!(ticks.iter().all(|&(cell, _)| (0..60).contains(&cell)));
    }
}
