//! The selection's reverse video. (Fitting text into terminal columns —
//! atomic ids, visible cuts, one line per cell — is `asof_core::text`'s.)

/// Marks a list row as selected: reverse video on every span.
pub fn reverse(line: &mut ratatui::text::Line) {
    for span in &mut line.spans {
        span.style = span.style.add_modifier(ratatui::style::Modifier::REVERSED);
    }
}
