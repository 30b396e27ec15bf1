//! The footer: the focused panel's keys, from the keymap; or a status message.

use crate::tui::app::App;
use crate::tui::keymap;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let line = match &app.status {
        Some(message) => Line::from(Span::styled(message.clone(), theme.warning())),
        None => {
            let mut spans = Vec::new();
            for (keys, what) in keymap::hints(app.context()) {
                spans.push(Span::styled(keys, theme.key()));
                spans.push(Span::styled(format!(" {what}  "), theme.muted()));
            }
            Line::from(spans)
        }
    };
    frame.render_widget(Paragraph::new(line), area);
}
