//! Shown instead of the panels when the terminal is below the minimum size.

use crate::tui::layout::{MIN_HEIGHT, MIN_WIDTH};
use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::widgets::{Paragraph, Wrap};

/// Draws the note a screen too small for the panels gets.
pub fn render(frame: &mut Frame, area: Rect) {
    let text = format!(
        "Terminal too small: {}×{}. asof needs at least {MIN_WIDTH}×{MIN_HEIGHT}. Enlarge the window or press q.",
        area.width, area.height
    );
    let height = if area.width == 0 {
        0
    } else {
        (text.chars().count() as u16)
            .div_ceil(area.width)
            .min(area.height)
    };
    let y = area.y + area.height.saturating_sub(height) / 2;
    let rect = Rect::new(area.x, y, area.width, height);
    frame.render_widget(
        Paragraph::new(text)
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true }),
        rect,
    );
}
