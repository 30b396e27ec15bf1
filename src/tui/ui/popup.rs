//! Popups: scrollable text (history, evidence details) and the one-line prompt.

use crate::tui::app::{App, LineStyle, PromptKind, TextView};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// A rectangle of at most `width`×`height`, centred in `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

pub fn render_text(app: &App, view: &TextView, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let width = view
        .lines
        .iter()
        .map(|l| super::text::width(&l.text))
        .max()
        .unwrap_or(20) as u16
        + 4;
    let popup = centered(area, width.max(40), view.lines.len() as u16 + 2);
    let rows = popup.height.saturating_sub(2) as usize;
    let lines: Vec<Line> = view
        .lines
        .iter()
        .skip(
            view.scroll
                .min(view.lines.len().saturating_sub(rows.max(1))),
        )
        .take(rows)
        .map(|l| {
            let style = match l.style {
                LineStyle::Normal => theme.base(),
                LineStyle::Heading => theme.title(),
                LineStyle::Held => theme.base().add_modifier(Modifier::BOLD),
                LineStyle::Closed => theme.superseded(),
                LineStyle::Future => theme.future(),
                LineStyle::Note => theme.muted(),
            };
            Line::from(Span::styled(l.text.clone(), style))
        })
        .collect();
    frame.render_widget(Clear, popup);
    let more = if view.lines.len() > rows {
        " · ↑/↓ scroll"
    } else {
        ""
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(true))
        .title(view.title.clone())
        .title_bottom(format!(" Esc closes{more} "));
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}

pub fn render_prompt(app: &App, kind: PromptKind, text: &str, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let (title, hint) = match kind {
        PromptKind::Jump => (
            " Jump to recorded time ",
            "2026-03-03T12:00:00Z, 2026-03-03 12:00 or 12:00 (UTC) · Enter · Esc",
        ),
        PromptKind::Filter(_) => (" Filter ", "type to filter · Enter keeps · Esc clears"),
    };
    let popup = centered(area, 72, 4);
    frame.render_widget(Clear, popup);
    let lines = vec![
        Line::from(vec![
            Span::styled("> ", theme.key()),
            Span::raw(text.to_owned()),
            Span::styled("█", theme.key()),
        ]),
        Line::from(Span::styled(hint, theme.muted())),
    ];
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(true))
        .title(title);
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
