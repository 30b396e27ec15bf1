//! Fitting text into columns so that nothing shown can be misquoted.
//!
//! Every front end (the TUI's cells and lines, the CLI's tables) cuts text
//! through these functions, so the rules hold everywhere at once:
//!
//! * **Identifiers are atomic.** A cut never ends inside a token that carries
//!   a digit (`E15`, `B19`, `03-03`, `v4.12`): the cut backs off to before the
//!   token, so `E15` can never be shown as `E1`, which names another item.
//! * **A list of ids** shows the ids that fit whole, then `+N` for the rest
//!   (`E15,E21 +2`).
//! * **Cut text says so**: it ends with `…`.
//! * **One line per cell**: newlines become `⏎` (and tabs a space), so a table
//!   never breaks across lines and a cell never spills into the next row.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Display width of `text` in terminal columns.
pub fn width(text: &str) -> usize {
    text.width()
}

/// A character that belongs to an identifier-like token (`E15`, `tool_call-3`, `v4.12`).
fn token_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/')
}

/// The first `n` characters of `text` (all of it when it is shorter): a
/// summary's prefix, borrowed.
pub fn first_chars(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// `text` with its newlines shown as `⏎` and tabs and other control
/// characters as spaces: what a one-line cell shows.
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\r' => out.push('⏎'),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `text` cut to at most `max` columns, ending with `…` when cut, never inside
/// a token that carries a digit (an id, a time, a version): such a token is
/// shown whole or not at all. Newlines show as `⏎`. Not padded.
pub fn cut(text: &str, max: usize) -> String {
    let text = one_line(text);
    if text.width() <= max {
        return text.into_owned();
    }
    if max == 0 {
        return String::new();
    }
    // The longest prefix that leaves one column for `…`.
    let mut end = 0;
    let mut used = 0;
    for (i, c) in text.char_indices() {
        let w = c.width().unwrap_or(0);
        if used + w > max - 1 {
            break;
        }
        used += w;
        end = i + c.len_utf8();
    }
    let head = &text[..end];
    let cut_inside = head.chars().next_back().is_some_and(token_char)
        && text[end..].chars().next().is_some_and(token_char);
    let head = if cut_inside {
        // Back off to the start of the token when the token is id-like.
        let start = head
            .char_indices()
            .rev()
            .find(|&(_, c)| !token_char(c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let token_end = text[start..]
            .char_indices()
            .find(|&(_, c)| !token_char(c))
            .map_or(text.len(), |(i, _)| start + i);
        if text[start..token_end].chars().any(|c| c.is_ascii_digit()) {
            &head[..start]
        } else {
            head
        }
    } else {
        head
    };
    format!("{head}…")
}

/// [`cut`], then padded with spaces to exactly `width` columns.
pub fn fit(text: &str, width: usize) -> String {
    let mut out = cut(text, width);
    let used = out.width();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    out
}

/// Ids joined by `,` within `max` columns: the ids that fit whole, then ` +N`
/// for those that do not (`E15,E21 +2`); `-` for none. Never a cut id.
pub fn id_list<S: AsRef<str>>(ids: &[S], max: usize) -> String {
    if ids.is_empty() {
        return if max >= 1 { "-".into() } else { String::new() };
    }
    let widths: Vec<usize> = ids.iter().map(|id| id.as_ref().width()).collect();
    let total = widths.iter().sum::<usize>() + ids.len() - 1;
    // How many ids fit whole with room left for " +N" (measured, not built:
    // a cell may cite thousands, and it is fitted on every frame).
    let shown = if total <= max {
        ids.len()
    } else {
        let mut used = 0;
        let mut shown = 0;
        for (n, w) in widths.iter().enumerate() {
            let rest = ids.len() - n - 1;
            let tail = if rest == 0 { 0 } else { 2 + digits(rest) };
            let w = w + usize::from(n > 0);
            if used + w + tail > max {
                break;
            }
            used += w;
            shown = n + 1;
        }
        shown
    };
    let joined = ids[..shown]
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(",");
    match ids.len() - shown {
        0 => joined,
        more if shown > 0 => format!("{joined} +{more}"),
        more if digits(more) < max => format!("+{more}"),
        _ => String::new(),
    }
}

/// How many decimal digits `n` has.
fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The largest `n` in `lo..=hi` for which `fits(n)` holds, where `fits`
/// holds for every number below one it holds for (a width that fits keeps
/// fitting when narrowed). A binary search: the fitters that try widths call
/// it on every frame, so the cost must not grow with a 64 KiB claim.
pub fn largest_fitting(lo: usize, hi: usize, fits: impl Fn(usize) -> bool) -> Option<usize> {
    if lo > hi || !fits(lo) {
        return None;
    }
    let (mut ok, mut bad) = (lo, hi + 1);
    while bad - ok > 1 {
        let mid = ok + (bad - ok) / 2;
        if fits(mid) {
            ok = mid;
        } else {
            bad = mid;
        }
    }
    Some(ok)
}

/// "1 match", "2 matches": a count with its noun in the right number.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// "30016 characters, 361 lines": how much a whole text is.
pub fn size(text: &str) -> String {
    format!(
        "{}, {}",
        count(text.chars().count(), "character", "characters"),
        count(text.lines().count().max(1), "line", "lines")
    )
}

/// `text` as a Markdown fenced block, its fence longer than any run of
/// backticks inside it (so the text cannot close it early).
pub fn fenced(text: &str) -> String {
    let (mut run, mut longest) = (0usize, 0usize);
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}text\n{text}\n{fence}")
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
            // A word longer than a line is broken at the line's width.
            let mut end = 0;
            let mut used = 0;
            for (i, c) in line.char_indices() {
                let w = c.width().unwrap_or(0);
                if used + w > width {
                    break;
                }
                used += w;
                end = i + c.len_utf8();
            }
            let end = end.max(line.chars().next().map_or(0, char::len_utf8));
            let rest = line[end..].to_owned();
            line.truncate(end);
            lines.push(std::mem::replace(&mut line, rest));
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Bytes in lower-case hex, two digits a byte (a digest, an OTLP id as
/// OTLP/JSON writes it).
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The prefix is the first `n` characters, whatever they are.
        #[test]
        fn first_chars_are_the_first_characters(text in ".*", n in 0usize..40) {
            let taken: String = text.chars().take(n).collect();
            prop_assert_eq!(super::first_chars(&text, n), taken.as_str());
        }
    }

    #[test]
    fn a_fence_is_longer_than_any_run_of_backticks_inside() {
        assert_eq!(fenced("a"), "```text\na\n```");
        assert_eq!(fenced("x ```` y"), "`````text\nx ```` y\n`````");
        assert_eq!(size("ab\nc"), "4 characters, 2 lines");
        assert_eq!(size(""), "0 characters, 1 line");
    }

    use super::*;

    #[test]
    fn bytes_are_written_in_lower_case_hex_two_digits_each() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0, 1, 0xab, 0xff]), "0001abff");
    }

    #[test]
    fn fits_by_display_width() {
        assert_eq!(fit("abc", 5), "abc  ");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("日本語", 4), "日… ");
        assert_eq!(fit("x", 0), "");
    }

    #[test]
    fn a_cut_never_ends_inside_an_id() {
        // "E15" must not become "E1", another item's id.
        assert_eq!(cut("on E15", 5), "on …");
        assert_eq!(cut("on E15,E21", 8), "on E15,…");
        assert_eq!(cut("superseded by B19", 16), "superseded by …");
        // Words without digits are cut where they must be, visibly.
        assert_eq!(cut("superseded", 5), "supe…");
        assert_eq!(cut("E15", 2), "…");
        for w in 0..12 {
            let c = cut("cites E15 and B21", w);
            assert!(width(&c) <= w, "{c:?} wider than {w}");
            assert!(!c.contains("E1…") && !c.contains("B2…") && !c.contains("B…"));
        }
    }

    #[test]
    fn id_lists_show_whole_ids_then_a_count() {
        let ids = ["E15", "E21", "E3", "E4"];
        assert_eq!(id_list(&ids, 20), "E15,E21,E3,E4");
        assert_eq!(id_list(&ids, 12), "E15,E21 +2");
        assert_eq!(id_list(&ids, 7), "E15 +3");
        assert_eq!(id_list(&ids, 3), "+4");
        assert_eq!(id_list(&ids, 1), "");
        assert_eq!(id_list::<&str>(&[], 5), "-");
        for w in 0..16 {
            let s = id_list(&ids, w);
            assert!(width(&s) <= w);
            for token in s
                .split([',', ' '])
                .filter(|t| !t.is_empty() && !t.starts_with('+'))
            {
                assert!(ids.contains(&token), "{token} is not an id ({s:?})");
            }
        }
    }

    #[test]
    fn the_largest_fitting_width_is_found_by_halving() {
        assert_eq!(largest_fitting(8, 100, |n| n <= 37), Some(37));
        assert_eq!(largest_fitting(8, 100, |n| n <= 500), Some(100));
        assert_eq!(largest_fitting(8, 100, |n| n <= 7), None);
        assert_eq!(largest_fitting(9, 8, |_| true), None);
    }

    #[test]
    fn newlines_show_as_a_return_sign_in_one_line() {
        assert_eq!(one_line("Nodes:\n- a\r\n- b\tc"), "Nodes:⏎- a⏎- b c");
        assert_eq!(cut("a\nb", 5), "a⏎b");
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
