//! Rendering: `render(&App, &mut Frame)` only draws, into the rectangles
//! `tui::layout` gives; each panel's view is one file, beside its state in
//! `tui::state`.

pub mod beliefs;
pub mod compare;
pub mod evidence;
pub mod footer;
pub mod header;
pub mod plane;
pub mod popup;
pub mod scrubber;
pub mod too_small;

use super::app::{App, Focus};
use super::state::popup::Popup;
use ratatui::Frame;
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders};

/// A panel's frame: focus shows as the border style *and* a `▶` in the title.
pub fn panel(app: &App, focused: bool, title: String) -> Block<'static> {
    let marker = if focused { "▶ " } else { "" };
    Block::default()
        .borders(Borders::ALL)
        .border_style(app.theme.border(focused))
        .title(Span::styled(
            format!(" {marker}{title} "),
            app.theme.border(focused),
        ))
}

/// The screen `app` draws at its size, as text: each row's symbols with its
/// trailing blanks cut (what a test or a capture compares).
pub fn screen(app: &App) -> String {
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(app.size.0, app.size.1))
            .expect("a test backend always opens");
    // Drawing into memory cannot fail.
    let _ = terminal.draw(|f| render(app, f));
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        for x in 0..buffer.area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Draws one frame of `app`: every panel, then the open popup.
pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    let areas = app.areas();
    if areas.too_small {
        too_small::render(frame, area);
        return;
    }
    header::render(app, frame, areas.header, areas.compact);
    scrubber::render(app, frame, areas.scrubber);
    if let Some(a) = areas.beliefs {
        beliefs::render(app, frame, a, areas.plane_shares_evidence);
    }
    let plane_shown = !areas.plane_shares_evidence || app.focus == Focus::Plane;
    if let Some(a) = areas
        .evidence
        .filter(|_| !(areas.plane_shares_evidence && plane_shown))
    {
        evidence::render(app, frame, a);
    }
    if let Some(a) = areas.plane.filter(|_| plane_shown) {
        plane::render(app, frame, a);
    }
    footer::render(app, frame, areas.footer);
    match &app.popup {
        None => {}
        Some(Popup::Help(view) | Popup::Text(view)) => popup::render_text(app, view, frame, area),
        Some(Popup::Compare(scroll)) => compare::render(app, scroll, frame, area),
        Some(Popup::Prompt(prompt)) => popup::render_prompt(app, prompt, frame, area),
    }
}
