//! The footer: the focused panel's keys, from the keymap; or a status message.
//! However narrow the terminal, `? help` and `q quit` stay: the other hints
//! fill what they leave, whole or not at all.

use crate::tui::app::App;
use crate::tui::keymap;
use asof_core::text::{cut, width};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The keys every context keeps on its footer.
const ESSENTIAL: [&str; 2] = ["?", "q"];

/// Draws the footer in `area`: the status message, or the focused context's key hints.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let room = area.width as usize;
    let hints = keymap::hints(app.context());
    let hint_width = |(keys, what): &(&str, &str)| width(keys) + 1 + width(what) + 2;
    let (essential, other): (Vec<_>, Vec<_>) =
        hints.into_iter().partition(|(k, _)| ESSENTIAL.contains(k));
    let reserved: usize = essential.iter().map(hint_width).sum();
    let mut spans = Vec::new();
    let push = |spans: &mut Vec<Span<'static>>, (keys, what): (&'static str, &'static str)| {
        spans.push(Span::styled(keys, theme.key()));
        spans.push(Span::styled(format!(" {what}  "), theme.muted()));
    };
    match &app.status {
        Some(message) => {
            // The message first; the essential keys when the message leaves room.
            let needed = width(message) + 2 + reserved;
            if needed <= room {
                spans.push(Span::styled(format!("{message}  "), theme.warning()));
                for h in essential {
                    push(&mut spans, h);
                }
            } else {
                spans.push(Span::styled(cut(message, room), theme.warning()));
            }
        }
        None => {
            let mut used = reserved;
            for h in other {
                let w = hint_width(&h);
                if used + w > room {
                    break;
                }
                used += w;
                push(&mut spans, h);
            }
            for h in essential {
                push(&mut spans, h);
            }
        }
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
