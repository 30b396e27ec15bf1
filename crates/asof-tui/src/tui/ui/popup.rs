//! Popups: scrollable text (help, history, evidence and version details, the
//! events at the cursor) and the one-line prompt. Where they go and how many
//! rows they hold come from `tui::layout`, as the scrolling state asks.

use crate::tui::app::App;
use crate::tui::keymap::{self, Context};
use crate::tui::layout;
use crate::tui::state::popup::{LineStyle, Prompt, PromptKind, TextView};
use asof_core::text::{cut, skip_columns};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// Draws a text popup over `screen`, scrolled as the view says.
pub fn render_text(app: &App, view: &TextView, frame: &mut Frame, screen: Rect) {
    let theme = &app.theme;
    let (outer, inner) = view.area(screen);
    let rows = inner.height as usize;
    let lines: Vec<Line> = view
        .scroll
        .window(rows)
        .map(|(_, i)| {
            let l = &view.lines[i];
            let style = match l.style {
                LineStyle::Normal => theme.base(),
                LineStyle::Heading => theme.title(),
                LineStyle::Held => theme.base().add_modifier(Modifier::BOLD),
                LineStyle::Closed => theme.superseded(),
                LineStyle::Future => theme.future(),
                LineStyle::Note => theme.muted(),
            };
            // A line wider than the popup ends in `…` (←/→ shows the rest).
            Line::from(Span::styled(
                cut(
                    skip_columns(&l.text, view.scroll.column),
                    inner.width as usize,
                ),
                style,
            ))
        })
        .collect();
    frame.render_widget(Clear, outer);
    let below = view.lines.len().saturating_sub(view.scroll.offset() + rows);
    let mut where_ = Vec::new();
    if view.lines.len() > rows {
        where_.push(format!(
            "lines {}-{} of {}{}",
            view.scroll.offset() + 1,
            (view.scroll.offset() + rows).min(view.lines.len()),
            view.lines.len(),
            if below > 0 { " · ↓ more" } else { "" }
        ));
    }
    if view.widest > inner.width as usize {
        where_.push("←/→ wide lines".into());
    }
    where_.push("Esc closes".into());
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(true))
        .title(view.title.clone())
        .title_bottom(format!(" {} ", where_.join(" · ")));
    frame.render_widget(Paragraph::new(lines).block(block), outer);
}

/// Draws the one-line prompt over `screen`, with its caret and last error.
pub fn render_prompt(app: &App, prompt: &Prompt, frame: &mut Frame, screen: Rect) {
    let theme = &app.theme;
    let title = match prompt.kind {
        PromptKind::Jump => {
            "Jump to recorded time: 2026-03-03T12:00:00Z, 2026-03-03 12:00, 12:00 (UTC, the cursor's day) or now"
        }
        PromptKind::Filter(_) => "Filter: type to narrow the list",
        PromptKind::Mark(_) => "A finding about what is selected, at the cursor:",
        PromptKind::Export => "Write the report of what is shown: md or html, then a file name",
    };
    let title = prompt.subject.as_deref().unwrap_or(title);
    let popup = layout::prompt_popup(screen);
    let room = popup.width.saturating_sub(4) as usize;
    let title = format!(" {} ", cut(title, room));
    frame.render_widget(Clear, popup);
    let (before, after) = prompt.text.split_at(
        prompt
            .text
            .char_indices()
            .nth(prompt.caret)
            .map_or(prompt.text.len(), |(i, _)| i),
    );
    let mut caret_and_rest = after.chars();
    let under = caret_and_rest
        .next()
        .map_or(" ".to_owned(), |c| c.to_string());
    let second = match &prompt.error {
        Some(e) => Line::from(Span::styled(e.clone(), theme.warning())),
        None => {
            let hints: Vec<String> = keymap::hints(Context::Prompt)
                .into_iter()
                .map(|(k, w)| format!("{k} {w}"))
                .collect();
            let hints = hints.join(" · ");
            let text = match prompt.kind {
                PromptKind::Mark(on) => format!(
                    "{} [note] · {hints}",
                    asof_core::review::names(on.kind()).replace(", ", "|")
                ),
                _ => hints,
            };
            Line::from(Span::styled(cut(&text, room + 2), theme.muted()))
        }
    };
    let lines = vec![
        Line::from(vec![
            Span::styled("> ", theme.key()),
            Span::raw(before.to_owned()),
            Span::styled(under, theme.key().add_modifier(Modifier::REVERSED)),
            Span::raw(caret_and_rest.as_str().to_owned()),
        ]),
        second,
    ];
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(true))
        .title(title);
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
