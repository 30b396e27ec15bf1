//! Fitting text into terminal columns: the library's rules (atomic ids, visible
//! cuts, one line per cell), and the selection's reverse video.

pub use crate::text::{cut, fit, id_list, one_line, skip_columns, width, wrap};

/// Marks a list row as selected: reverse video on every span.
pub fn reverse(line: &mut ratatui::text::Line) {
    for span in &mut line.spans {
        span.style = span.style.add_modifier(ratatui::style::Modifier::REVERSED);
    }
}
