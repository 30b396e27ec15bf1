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

use crate::axis;
use crate::fork::diff::{Steps, value_at};
use crate::time::Micros;
use crate::tui::app::App;
use crate::tui::fork_worker::{self as whatif, ForkResult};
use crate::tui::layout;
use crate::tui::state::list::FilteredList;
use crate::tui::theme::claim_glyph;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

const LABEL: usize = 9;

pub fn render(app: &App, scroll: &FilteredList, frame: &mut Frame, area: Rect) {
    let Some(fork) = &app.whatif.fork else { return };
    let theme = &app.theme;
    let popup = layout::compare_popup(area);
    frame.render_widget(Clear, popup);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(true))
        .title(title(fork, popup.width as usize))
        .title_bottom(
            " c: show the fork in the panels · ↑/↓ PgUp/PgDn scroll · ←/→ sideways · Esc closes ",
        );
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    if inner.width as usize <= LABEL + 2 || inner.height == 0 {
        return;
    }
    let width = inner.width as usize - LABEL;
    let mut lines = vec![Line::from(whatif::report_line(fork))];
    lines.push(axis_line(fork, width, theme.muted()));
    if fork.lanes.is_empty() {
        lines.push(Line::from(Span::styled(
            "No answer changes: the fork believes what the parent believed.",
            theme.good(),
        )));
    }
    let columns: Vec<Micros> = (0..width)
        .map(|c| column_time(fork.span, width, c))
        .collect();
    for lane in &fork.lanes {
        let topic = app.timeline.header.topic_position(&lane.topic);
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
        lines.push(Line::from(Span::styled(
            format!("{} · {}", lane.agent, lane.topic),
            theme.title(),
        )));
        for (name, steps) in [("  parent ", &lane.parent), ("  fork   ", &lane.fork)] {
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
                if value_at(&lane.parent, t) != value_at(&lane.fork, t) {
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
        for claim in lane.claims() {
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
        if let Some(truth) = whatif::truth_line(fork, lane) {
            lines.push(Line::from(vec![
                Span::styled(whatif::TRUTH_HEAD, theme.muted()),
                Span::raw(truth),
            ]));
        }
    }
    let rows = inner.height as usize;
    let first = scroll.offset().min(lines.len().saturating_sub(rows));
    let shown: Vec<Line> = lines.into_iter().skip(first).take(rows).collect();
    frame.render_widget(
        Paragraph::new(shown).scroll((0, u16::try_from(scroll.column).unwrap_or(u16::MAX))),
        inner,
    );
}

fn column_time((first, last): (Micros, Micros), width: usize, c: usize) -> Micros {
    let span = (last - first).max(1) as f64;
    first + ((c as f64 + 0.5) * span / width as f64) as Micros
}

fn axis_line(fork: &ForkResult, width: usize, style: Style) -> Line<'static> {
    let (first, last) = fork.span;
    let dated = axis::dated(last - first);
    let (step, ticks) = axis::ticks(first, last.max(first + 1), width as i64, dated);
    let mut row = vec![' '; width];
    let mut free = 0i64;
    for (col, t) in ticks {
        let label = axis::tick_label(t, step, dated);
        let len = label.chars().count() as i64;
        if col >= free && col + len <= width as i64 {
            for (i, ch) in label.chars().enumerate() {
                row[col as usize + i] = ch;
            }
            free = col + len + 1;
        }
    }
    Line::from(vec![
        Span::raw(" ".repeat(LABEL)),
        Span::styled(row.into_iter().collect::<String>(), style),
    ])
}

/// " What-if without E15 — a replay, not a causal model ", the removed ids
/// whole (`E3,E7 +4`) and the rest cut visibly to the popup's width.
fn title(fork: &ForkResult, width: usize) -> String {
    let ids: Vec<&str> = fork.removed.split(',').collect();
    let room = width.saturating_sub(4);
    let head = "What-if without ";
    let removed = crate::tui::text::id_list(&ids, room.saturating_sub(head.len()).min(40));
    format!(
        " {} ",
        crate::tui::text::cut(
            &format!("{head}{removed} — a replay, not a causal model"),
            room
        )
    )
}
