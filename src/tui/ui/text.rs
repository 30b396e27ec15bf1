//! Fitting text into terminal columns by display width.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `text` cut to at most `width` columns (with `…` when cut) and padded to exactly `width`.
pub fn fit(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(width);
    if text.width() <= width {
        out.push_str(text);
        out.extend(std::iter::repeat_n(' ', width - text.width()));
        return out;
    }
    if width == 0 {
        return out;
    }
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    used += 1;
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    out
}

/// Marks a list row as selected: reverse video on every span.
pub fn reverse(line: &mut ratatui::text::Line) {
    for span in &mut line.spans {
        span.style = span.style.add_modifier(ratatui::style::Modifier::REVERSED);
    }
}

/// Display width.
pub fn width(text: &str) -> usize {
    text.width()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_by_display_width() {
        assert_eq!(fit("abc", 5), "abc  ");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("日本語", 4), "日… ");
        assert_eq!(fit("x", 0), "");
    }
}
