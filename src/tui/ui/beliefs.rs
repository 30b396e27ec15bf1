//! The beliefs panel: per topic, what each agent holds at the recorded cursor.
//!
//! ```text
//! ┌ ▶ Beliefs held at 03-03 12:10 ──────────────────────────────────────────┐
//! │root-cause — What is causing checkout payment failures?  ⚠ agents disagree│
//! │  ■ triage   Bad deploy of checkout-service v4.12  0.70  [03-02 09:05, ∞) …│
//! │  ● triage   Expired TLS certificate on the card-…  0.50  … ✗ superseded … │
//! └──────────────────────────────────────────────────────────────────────────┘
//! ```
//! Only the visible rows are drawn; their text was formatted when the cursor moved.

use super::text::fit;
use crate::time;
use crate::tui::app::{App, BeliefCells, BeliefRowKind, Focus};
use crate::tui::theme::claim_glyph;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let focused = app.focus == Focus::Beliefs;
    let filter = if app.belief_filter.is_empty() {
        String::new()
    } else {
        format!(" · filter “{}”", app.belief_filter)
    };
    let block = super::panel(
        app,
        focused,
        format!("Beliefs held at {}{filter}", time::format_short(app.cursor)),
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    if width == 0 || inner.height == 0 {
        return;
    }
    // Columns: glyph, agent, claim (14 to 44 wide), confidence, then the valid
    // interval and `since` as room allows; the last column shows the row's note
    // ("✗ superseded by B19 just now") or else its evidence.
    let longest = app.belief_claim_width.max(14);
    let fixed = 2 + 2 + 9 + 6;
    let show_valid = width >= fixed + 14 + 24 + 14;
    let show_since = width >= fixed + longest.min(44) + 24 + 13 + 20;
    let reserved = fixed + if show_valid { 24 } else { 0 } + if show_since { 13 } else { 0 } + 21;
    let claim_w = width.saturating_sub(reserved).clamp(14, longest.min(44));

    let mut lines = Vec::with_capacity(inner.height as usize);
    let visible = app
        .belief_visible
        .iter()
        .enumerate()
        .skip(app.belief_offset)
        .take(inner.height as usize);
    for (pos, &i) in visible {
        let row = &app.belief_rows[i];
        let blank = BeliefCells::default();
        let cells = app
            .belief_cells
            .get(pos - app.belief_offset)
            .unwrap_or(&blank);
        let selected = focused && pos == app.belief_selected;
        let mut line = match &row.kind {
            BeliefRowKind::Topic { conflict } => {
                let question = app
                    .timeline
                    .header
                    .topics
                    .get(row.topic)
                    .map_or("", |t| t.question.as_str());
                let mut spans = vec![Span::styled(app.row_topic(row).to_owned(), theme.title())];
                if *conflict {
                    spans.push(Span::styled(format!("  {}", row.note), theme.warning()));
                }
                spans.push(Span::styled(format!(" — {question}"), theme.base()));
                Line::from(spans)
            }
            BeliefRowKind::Empty => Line::from(Span::styled(
                format!("    {}", app.row_claim(row)),
                theme.muted(),
            )),
            BeliefRowKind::Held | BeliefRowKind::ClosedNow => {
                let closed = row.kind == BeliefRowKind::ClosedNow;
                let text_style = if closed {
                    theme.superseded()
                } else {
                    theme.base()
                };
                let mut spans = vec![
                    Span::raw("  "),
                    Span::styled(
                        format!("{} ", claim_glyph(row.claim_index)),
                        theme.claim(row.claim_index),
                    ),
                    Span::styled(fit(app.row_agent(row), 8), theme.muted()),
                    Span::raw(" "),
                    Span::styled(
                        fit(app.row_claim(row), claim_w),
                        if closed {
                            text_style
                        } else {
                            theme.claim(row.claim_index)
                        },
                    ),
                    Span::styled(format!("  {}", cells.confidence), text_style),
                ];
                if show_valid {
                    spans.push(Span::styled(
                        format!("  {}", fit(&cells.valid, 22)),
                        text_style,
                    ));
                }
                if show_since {
                    spans.push(Span::styled(
                        format!("  {}", fit(&cells.since, 11)),
                        theme.muted(),
                    ));
                }
                if row.note.is_empty() {
                    spans.push(Span::styled(format!("  {}", cells.evidence), theme.muted()));
                } else {
                    let style = if closed {
                        theme.warning()
                    } else {
                        theme.good()
                    };
                    spans.push(Span::styled(
                        format!("  {}", row.note),
                        style.remove_modifier(Modifier::CROSSED_OUT),
                    ));
                }
                Line::from(spans)
            }
        };
        if selected {
            line = line.style(Style::new().add_modifier(Modifier::REVERSED));
            super::text::reverse(&mut line);
        }
        lines.push(line);
    }
    if app.belief_visible.is_empty() {
        lines.push(Line::from(Span::styled(
            "  nothing matches the filter",
            theme.muted(),
        )));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
