//! The `?` overlay: every key from the keymap, and what the glyphs mean.

use super::popup::centered;
use crate::tui::app::App;
use crate::tui::keymap;
use crate::tui::theme::claim_glyph;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let mut lines = Vec::new();
    for (context, rows) in keymap::help() {
        lines.push(Line::from(Span::styled(context.title(), theme.title())));
        for (keys, what) in rows {
            lines.push(Line::from(vec![
                Span::styled(format!("  {keys:<14}"), theme.key()),
                Span::raw(what),
            ]));
        }
    }
    lines.push(Line::from(Span::styled("Mouse", theme.title())));
    lines.push(Line::from(
        "  click the timeline to seek, a row to select; wheel steps or scrolls",
    ));
    lines.push(Line::from(Span::styled("Glyphs", theme.title())));
    lines.push(Line::from(
        "  timeline  • ● ◉ evidence (1, 2-4, 5+)   ▴ ▲ assertion   ↻ reconfirmation   ✕ retraction",
    ));
    lines.push(Line::from(format!(
        "  beliefs   {} {} {} … one glyph per claim   ✗ closed just now   ↻ reconfirmed   + new",
        claim_glyph(0),
        claim_glyph(1),
        claim_glyph(2)
    )));
    lines.push(Line::from(
        "  evidence  !lag = late-arriving (an hour or more); dim = recorded after the cursor",
    ));
    let popup = centered(area, 96, lines.len() as u16 + 2);
    frame.render_widget(Clear, popup);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(true))
        .title(" Help · Esc closes ");
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
