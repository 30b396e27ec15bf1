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

/// `text` without its first `columns` display columns (for text scrolled sideways).
pub fn skip_columns(text: &str, columns: usize) -> &str {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        if used >= columns {
            return &text[i..];
        }
        used += c.width().unwrap_or(0);
    }
    ""
}

/// `text` broken at spaces into lines of at most `width` columns (a word longer
/// than a line is cut).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let needed = if line.is_empty() {
            word.width()
        } else {
            line.width() + 1 + word.width()
        };
        if needed > width && !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while line.width() > width {
            let cut = fit(&line, width + 1);
            let head: String = cut.trim_end().trim_end_matches('…').to_owned();
            let rest = line[head.len()..].to_owned();
            lines.push(head);
            line = rest;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
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

    #[test]
    fn wraps_and_scrolls_by_display_width() {
        assert_eq!(
            wrap("Expired TLS certificate on the gateway", 12),
            vec!["Expired TLS", "certificate", "on the", "gateway"]
        );
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(skip_columns("日本語abc", 4), "語abc");
        assert_eq!(skip_columns("ab", 5), "");
    }
}
