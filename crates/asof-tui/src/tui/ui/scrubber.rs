//! The timeline scrubber over recorded time: one lane per mark kind, binned to
//! columns, with the cursor and an axis whose labels read as dates or times at
//! every zoom.
//!
//! ```text
//! ┌ Timeline · recorded time ─────────────────────────── 03-02 08:48 → 03-16 10:10 ┐
//! │evidence  • ●  •   ●•      •           │       •              •            •   │
//! │beliefs   ▲ ▲▲ ↻   ▲       ▲           │    ▲  ▲                           ▲   │
//! │retract         ✕     ✕                │                                     │
//! │          ┬          ┬          ┬          ┬          ┬          ┬          ┬  │
//! │          03-03      03-05      03-07      03-09      03-11      03-13      03-15│
//! └────────────────────────────────────────────────────────────────────────────────┘
//! ```
//! Bins are counted with binary searches over sorted instants (`partition_point`),
//! so a frame costs O(width · log events) whatever the size of the log.

use crate::tui::app::{App, Focus};
use asof_core::axis;
use asof_core::time;
use asof_store::query::timeline::MarkKind;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

const LABEL_WIDTH: u16 = 9;
const LANES: [(&str, &[MarkKind]); 3] = [
    ("evidence", &[MarkKind::Evidence, MarkKind::Verification]),
    ("beliefs", &[MarkKind::Assertion, MarkKind::Reconfirmation]),
    ("retract", &[MarkKind::Retraction]),
];

fn block(app: &App) -> Block<'static> {
    let focused = app.focus == Focus::Scrubber;
    super::panel(app, focused, "Timeline · recorded time".to_owned()).title_top(
        Line::from(format!(
            " {} → {} ",
            time::format_short(app.scrubber.view.0),
            time::format_short(app.scrubber.view.1)
        ))
        .right_aligned(),
    )
}

/// Draws the timeline strip in `area`: its lanes of marks over the view, the cursor and the axis.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let block = block(app);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width < 2 || inner.height < 1 {
        return;
    }
    let lanes = crate::tui::layout::scrubber_lanes(area);
    let width = lanes.width as i64;
    let (from, to) = app.scrubber.view;
    let span = (to - from).max(1);
    let column_start = |c: i64| from + span * c / width;
    let cursor_col = ((app.cursor - from) as i128 * width as i128 / span as i128) as i64;

    let mut lines = Vec::new();
    for (name, kinds) in LANES
        .iter()
        .take(inner.height.saturating_sub(1).max(1) as usize)
    {
        let mut spans = Vec::with_capacity(lanes.width as usize + 1);
        if crate::tui::layout::scrubber_labels_shown(inner) {
            spans.push(Span::styled(
                format!("{name:<width$}", width = LABEL_WIDTH as usize),
                theme.muted(),
            ));
        }
        for c in 0..width {
            let (a, b) = (
                column_start(c),
                column_start(c + 1).max(column_start(c) + 1),
            );
            let counts: Vec<usize> = kinds.iter().map(|&k| app.timeline.count(k, a, b)).collect();
            let (glyph, kind) = glyph(kinds, &counts);
            let style = if c == cursor_col {
                theme.cursor()
            } else if glyph == " " {
                Style::new()
            } else {
                theme.mark(kind)
            };
            let glyph = if c == cursor_col && glyph == " " {
                "│"
            } else {
                glyph
            };
            spans.push(Span::styled(glyph, style));
        }
        lines.push(Line::from(spans));
    }
    let axis_rows = inner.height as usize - lines.len();
    if axis_rows > 0 {
        lines.extend(axis(app, lanes, inner, axis_rows, cursor_col));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The glyph for one bin of a lane: density for evidence, kind for beliefs.
fn glyph(kinds: &[MarkKind], counts: &[usize]) -> (&'static str, MarkKind) {
    match kinds {
        [MarkKind::Evidence, MarkKind::Verification] => match (counts[0], counts[1]) {
            (0, 0) => (" ", MarkKind::Evidence),
            (0, _) => ("◇", MarkKind::Verification),
            (1, _) => ("•", MarkKind::Evidence),
            (2..=4, _) => ("●", MarkKind::Evidence),
            _ => ("◉", MarkKind::Evidence),
        },
        [MarkKind::Assertion, MarkKind::Reconfirmation] => match (counts[0], counts[1]) {
            (0, 0) => (" ", MarkKind::Assertion),
            (0, _) => ("↻", MarkKind::Reconfirmation),
            (1, _) => ("▴", MarkKind::Assertion),
            _ => ("▲", MarkKind::Assertion),
        },
        _ => match counts.first().copied().unwrap_or(0) {
            0 => (" ", MarkKind::Retraction),
            _ => ("✕", MarkKind::Retraction),
        },
    }
}

fn axis(app: &App, lanes: Rect, inner: Rect, rows: usize, cursor_col: i64) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let width = lanes.width as i64;
    let (from, to) = app.scrubber.view;
    let (step, ticks) = axis::ticks(from, to, width, false);
    let mut tick_row = vec![' '; width as usize];
    let mut labels = vec![' '; width as usize];
    let mut free_from = 0i64;
    for (col, t) in ticks {
        tick_row[col as usize] = '┬';
        let label = axis::tick_label(t, step, false);
        let len = label.chars().count() as i64;
        if col >= free_from && col + len <= width {
            for (i, ch) in label.chars().enumerate() {
                labels[(col + i as i64) as usize] = ch;
            }
            free_from = col + len + 1;
        }
    }
    let pad = if crate::tui::layout::scrubber_labels_shown(inner) {
        " ".repeat(LABEL_WIDTH as usize)
    } else {
        String::new()
    };
    let line = |chars: Vec<char>| -> Line<'static> {
        let mut spans = vec![Span::raw(pad.clone())];
        for (c, ch) in chars.into_iter().enumerate() {
            let style = if c as i64 == cursor_col {
                theme.cursor()
            } else {
                theme.muted()
            };
            spans.push(Span::styled(ch.to_string(), style));
        }
        Line::from(spans)
    };
    if rows >= 2 {
        vec![line(tick_row), line(labels)]
    } else {
        vec![line(labels)]
    }
}
