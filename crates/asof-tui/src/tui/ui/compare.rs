//! The compare view: for each (agent, topic) the fork changed, the working answer
//! over recorded time in the parent and in the fork, the columns where they
//! differ marked underneath, and when each converged on the resolution.
//!
//! ```text
//! ┌ What-if without E15 — a replay, not a causal model ─────────────────────┐
//! │removed E15 · dropped B19, B20 · scaled none · no-op retractions R4       │
//! │            03-03     03-05     03-07     03-09     03-11     03-13        │
//! │triage · root-cause                                                       │
//! │  parent  ●●●  ▲▲◆◆◆   ▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲   │
//! │  fork    ●●●  ▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲   │
//! │                ^^^^^^^ differs                                           │
//! │  right from: parent 03-05 09:15 · fork 03-03 10:30 (1d 22h sooner) · …   │
//! └──────────────────────────────────────────────────────────────────────────┘
//! ```

use crate::tui::app::App;
use crate::tui::compare_view::{self, Clock, LABEL, View};
use crate::tui::fork_worker as whatif;
use crate::tui::layout;
use crate::tui::state::list::FilteredList;
use crate::tui::theme::claim_glyph;
use asof_core::axis;
use asof_core::engine::answers::{Steps, value_at};
use asof_core::time::Micros;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// Draws the compare view in `area`, scrolled as `scroll` says.
pub fn render(app: &App, scroll: &FilteredList, frame: &mut Frame, area: Rect) {
    let Some(view) = app.compare_view() else {
        return;
    };
    let theme = &app.theme;
    let popup = layout::compare_popup(area);
    frame.render_widget(Clear, popup);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(true))
        .title(view.title(popup.width as usize))
        .title_bottom(view.keys);
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    if inner.width as usize <= LABEL + 2 || inner.height == 0 {
        return;
    }
    let width = inner.width as usize - LABEL;
    let mut lines = vec![Line::from(view.top.clone())];
    lines.push(axis_line(&view, width, theme.muted()));
    if view.lanes.is_empty() {
        lines.push(Line::from(Span::styled(view.empty, theme.good())));
    }
    let columns: Vec<Micros> = (0..width)
        .map(|c| column_time(view.span, width, c))
        .collect();
    for lane in &view.lanes {
        let topic = app.timeline.header.topic_position(lane.topic);
        let glyph = |steps: &Steps, t: Micros| -> (&'static str, Style) {
            match value_at(steps, t) {
                None => ("·", theme.muted()),
                Some(claim) => {
                    let i = topic
                        .and_then(|t| app.claim_index.get(t))
                        .and_then(|m| m.get(claim))
                        .copied()
                        .unwrap_or(7);
                    (claim_glyph(i), theme.claim(i))
                }
            }
        };
        lines.push(Line::from(Span::styled(lane.title.clone(), theme.title())));
        for (name, steps) in [(view.names.0, lane.a), (view.names.1, lane.b)] {
            let mut spans = vec![Span::styled(name, theme.muted())];
            spans.extend(columns.iter().map(|&t| {
                let (g, style) = glyph(steps, t);
                Span::styled(g, style)
            }));
            lines.push(Line::from(spans));
        }
        let marks: String = columns
            .iter()
            .map(|&t| {
                if value_at(lane.a, t) != value_at(lane.b, t) {
                    '^'
                } else {
                    ' '
                }
            })
            .collect();
        lines.push(Line::from(vec![
            Span::raw(" ".repeat(LABEL)),
            Span::styled(marks, theme.warning()),
            Span::styled(whatif::DIFFERS, theme.muted()),
        ]));
        // The legend: which claim each glyph stands for in this lane.
        let mut legend = vec![Span::styled(whatif::LEGEND_HEAD, theme.muted())];
        for claim in compare_view::claims(lane) {
            let i = topic
                .and_then(|t| app.claim_index.get(t))
                .and_then(|m| m.get(claim))
                .copied()
                .unwrap_or(7);
            legend.push(Span::styled(format!("{} ", claim_glyph(i)), theme.claim(i)));
            legend.push(Span::raw(whatif::legend_item(claim)));
        }
        legend.push(Span::styled(whatif::LEGEND_TAIL, theme.muted()));
        lines.push(Line::from(legend));
        for (head, text) in &lane.notes {
            lines.push(Line::from(vec![
                Span::styled(*head, theme.muted()),
                Span::raw(text.clone()),
            ]));
        }
    }
    for line in &view.tail {
        lines.push(Line::from(line.clone()));
    }
    let rows = inner.height as usize;
    let first = scroll.offset().min(lines.len().saturating_sub(rows));
    let shown: Vec<Line> = lines.into_iter().skip(first).take(rows).collect();
    // A line that goes on past the right edge ends in `…` there: what is
    // cut (an id list, a claim) is cut visibly, never read as whole.
    let cut: Vec<u16> = shown
        .iter()
        .enumerate()
        .filter(|(_, line)| line.width() > scroll.column + inner.width as usize)
        .map(|(y, _)| inner.y + y as u16)
        .collect();
    frame.render_widget(
        Paragraph::new(shown).scroll((0, u16::try_from(scroll.column).unwrap_or(u16::MAX))),
        inner,
    );
    let buffer = frame.buffer_mut();
    for y in cut {
        if let Some(cell) = buffer.cell_mut((inner.right() - 1, y)) {
            cell.set_symbol("…");
        }
    }
}

fn column_time((first, last): (Micros, Micros), width: usize, c: usize) -> Micros {
    let span = (last - first).max(1) as f64;
    first + ((c as f64 + 0.5) * span / width as f64) as Micros
}

fn axis_line(view: &View, width: usize, style: Style) -> Line<'static> {
    let (first, last) = view.span;
    let mut row = vec![' '; width];
    let mut free = 0i64;
    let mut put = |col: i64, label: String| {
        let len = label.chars().count() as i64;
        if col >= free && col + len <= width as i64 {
            for (i, ch) in label.chars().enumerate() {
                row[col as usize + i] = ch;
            }
            free = col + len + 1;
        }
    };
    match view.clock {
        Clock::Recorded => {
            let dated = axis::dated(last - first);
            let (step, ticks) = axis::ticks(first, last.max(first + 1), width as i64, dated);
            for (col, t) in ticks {
                put(col, axis::tick_label(t, step, dated));
            }
        }
        // Time since each run's start, at readable steps.
        Clock::SinceStart => {
            let (_, ticks) = axis::ticks(first, last.max(first + 1), width as i64, false);
            for (col, t) in ticks {
                put(
                    col,
                    format!("+{}", asof_core::time::format_duration(t - first)),
                );
            }
        }
        // Assertions (#1 is the first), a label every 1, 2, 5, 10, … of them.
        Clock::Step => {
            let count = (last - first).max(1);
            let step = [1i64, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
                .into_iter()
                .find(|s| s * (width as i64) / count >= 8)
                .unwrap_or(count);
            let mut k = first;
            while k < last {
                put((k - first) * width as i64 / count, format!("#{}", k + 1));
                k += step;
            }
        }
    }
    Line::from(vec![
        Span::raw(" ".repeat(LABEL)),
        Span::styled(row.into_iter().collect::<String>(), style),
    ])
}
