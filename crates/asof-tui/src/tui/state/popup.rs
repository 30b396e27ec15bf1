//! The popups' state: scrollable text (help, history, evidence and version
//! details, the events at the cursor), the compare view, and the one-line
//! prompt with its own editing keys. Every popup scrolls through the same
//! [`FilteredList`]; how many rows fit comes from `tui::layout`.

use super::list::FilteredList;
use crate::tui::action::{Action, Edit};
use crate::tui::layout;
use asof_core::review::{TargetKind, Verdict};
use asof_core::time::{self, Micros};
use ratatui::layout::Rect;

/// How a popup's line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStyle {
    /// Plain text.
    Normal,
    /// A heading.
    Heading,
    /// A version held at the cursor.
    Held,
    /// A version closed by the cursor.
    Closed,
    /// Something recorded after the cursor (not known then).
    Future,
    /// A note: said in a muted style.
    Note,
}

/// One line of a popup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewLine {
    /// Its text.
    pub text: String,
    /// How it is drawn.
    pub style: LineStyle,
}

impl ViewLine {
    /// A line of `text` drawn as `style`.
    pub fn new(style: LineStyle, text: impl Into<String>) -> Self {
        ViewLine {
            text: text.into(),
            style,
        }
    }
}

/// A scrollable popup of preformatted lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextView {
    /// The popup's title.
    pub title: String,
    /// Its lines.
    pub lines: Vec<ViewLine>,
    /// The first line on screen, and how far the text is scrolled sideways.
    pub scroll: FilteredList,
    /// The widest line, in columns.
    pub widest: usize,
}

impl TextView {
    /// A popup titled `title` of `lines`, scrolled to the top.
    pub fn new(title: impl Into<String>, lines: Vec<ViewLine>) -> TextView {
        let widest = lines
            .iter()
            .map(|l| asof_core::text::width(&l.text))
            .max()
            .unwrap_or(0);
        let mut scroll = FilteredList::default();
        scroll.set_items((0..lines.len()).collect(), 0);
        TextView {
            title: title.into(),
            lines,
            scroll,
            widest,
        }
    }

    /// Where this view sits on a screen: its frame and the rows inside.
    pub fn area(&self, screen: Rect) -> (Rect, Rect) {
        layout::text_popup(screen, self.widest, self.lines.len())
    }

    /// Scrolls for ↑/↓/PgUp/PgDn/g/G and ←/→; returns whether the action was a
    /// scrolling one.
    pub fn update(&mut self, action: Action, screen: Rect) -> bool {
        let (_, inner) = self.area(screen);
        let rows = inner.height as usize;
        let wide = self.widest.saturating_sub(inner.width as usize);
        if let Some(by) = FilteredList::delta(action, rows) {
            self.scroll.scroll_by(by, rows);
            return true;
        }
        match action {
            Action::ScrollLeft => self.scroll.scroll_columns(-8, wide),
            Action::ScrollRight => self.scroll.scroll_columns(8, wide),
            _ => return false,
        }
        true
    }
}

/// What a review finding made in the TUI is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkOn {
    /// Evidence item `n` of the timeline.
    Evidence(usize),
    /// Belief `n` of the timeline (the version its assertion put in place).
    Belief(usize),
}

impl MarkOn {
    /// The kind of target a finding about it has.
    pub fn kind(self) -> TargetKind {
        match self {
            MarkOn::Evidence(_) => TargetKind::Evidence,
            MarkOn::Belief(_) => TargetKind::Version,
        }
    }
}

/// What a one-line prompt asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    /// `:`: a time to jump to.
    Jump,
    /// `/`: a filter for this panel's list.
    Filter(super::focus::Focus),
    /// A review finding's verdict (and a note) about what is selected
    /// (docs/review.md).
    Mark(MarkOn),
    /// `e`: the report's format (`md` or `html`) and, optionally, its file.
    Export,
}

/// A one-line prompt: the text, where the caret is, and the last error (the
/// text is kept so it can be mended).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// What the prompt asks for.
    pub kind: PromptKind,
    /// What is typed so far.
    pub text: String,
    /// The caret, in characters.
    pub caret: usize,
    /// Why the last text was refused, until it is mended.
    pub error: Option<String>,
    /// What the prompt is about, when it is about one thing (the mark
    /// prompt names its item: "Mark E18 (metric, grafana) at 03-04 09:40 as:").
    pub subject: Option<String>,
    /// The text was offered, not typed: the first key typed replaces it.
    pub offered: bool,
}

impl Prompt {
    /// A prompt for `kind`, holding `text`, the caret at its end.
    pub fn new(kind: PromptKind, text: String) -> Prompt {
        let caret = text.chars().count();
        Prompt {
            kind,
            text,
            caret,
            error: None,
            subject: None,
            offered: false,
        }
    }

    /// A prompt whose text is an offer: typing replaces it, moving the caret keeps it.
    pub fn offering(kind: PromptKind, text: String) -> Prompt {
        Prompt {
            offered: !text.is_empty(),
            ..Prompt::new(kind, text)
        }
    }

    fn byte(&self, chars: usize) -> usize {
        self.text
            .char_indices()
            .nth(chars)
            .map_or(self.text.len(), |(i, _)| i)
    }

    /// Types or edits; returns whether the text changed.
    pub fn edit(&mut self, action: Action) -> bool {
        if std::mem::take(&mut self.offered) && matches!(action, Action::Type(_)) {
            self.text.clear();
            self.caret = 0;
        }
        let len = self.text.chars().count();
        match action {
            Action::Type(c) => {
                let at = self.byte(self.caret);
                self.text.insert(at, c);
                self.caret += 1;
                self.error = None;
                true
            }
            Action::Edit(Edit::Backspace) if self.caret > 0 => {
                let at = self.byte(self.caret - 1);
                self.text.remove(at);
                self.caret -= 1;
                self.error = None;
                true
            }
            Action::Edit(Edit::Delete) if self.caret < len => {
                let at = self.byte(self.caret);
                self.text.remove(at);
                self.error = None;
                true
            }
            Action::Edit(Edit::Left) => {
                self.caret = self.caret.saturating_sub(1);
                false
            }
            Action::Edit(Edit::Right) => {
                self.caret = (self.caret + 1).min(len);
                false
            }
            Action::Edit(Edit::Home) => {
                self.caret = 0;
                false
            }
            Action::Edit(Edit::End) => {
                self.caret = len;
                false
            }
            _ => false,
        }
    }
}

/// What popup is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Popup {
    /// `?`: the keys, generated from the keymap.
    Help(TextView),
    /// Parent and fork side by side: answer lanes, divergence, time to truth.
    Compare(FilteredList),
    /// Details: a topic's history, an evidence item, a version, the events.
    Text(TextView),
    /// A one-line prompt.
    Prompt(Prompt),
}

/// What a popup's key asks of the rest of the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// The popup did not use the key.
    Ignored,
    /// Handled inside the popup (scrolled, edited).
    Handled,
    /// Close the popup.
    Close,
    /// The compare view's `c`: close it and show the fork in the panels.
    ShowFork,
    /// The jump prompt read a time; the words say how, when the text named
    /// no day (`12:10 → 2026-03-03 12:10 UTC, the cursor's day`).
    Seek(Micros, Option<String>),
    /// The filter prompt's text changed (or was cancelled: empty).
    Filter(PromptKind, String),
    /// The mark prompt read a verdict and a note about what it names.
    Mark(MarkOn, Verdict, Option<String>),
    /// The export prompt read a format (`true`: HTML) and maybe a file name.
    Export(bool, Option<String>),
}

impl Popup {
    /// One key while this popup is open. `compare` is the compare view's size
    /// (lines, widest screen-independent line: `compare_view::View::size`); the
    /// compare view has; `now` and `cursor` read times typed into a jump prompt.
    pub fn update(
        &mut self,
        action: Action,
        screen: Rect,
        (compare_lines, compare_widest): (usize, usize),
        (now, cursor): (Micros, Micros),
    ) -> Effect {
        match (self, action) {
            (Popup::Prompt(prompt), _) => prompt.update(action, now, cursor),
            (_, Action::Back) => Effect::Close,
            (Popup::Help(_), Action::Help) => Effect::Close,
            (Popup::Compare(_), Action::Compare) => Effect::ShowFork,
            (Popup::Help(view) | Popup::Text(view), _) => {
                if view.update(action, screen) {
                    Effect::Handled
                } else {
                    Effect::Ignored
                }
            }
            (Popup::Compare(scroll), _) => {
                let rows = layout::inner(layout::compare_popup(screen)).height as usize;
                if scroll.len() != compare_lines {
                    scroll.set_items((0..compare_lines).collect(), rows);
                }
                // Sideways as every popup scrolls, up to its widest line: the
                // text's, or the marks' (as wide as the popup, plus their key).
                let inner = layout::inner(layout::compare_popup(screen)).width as usize;
                let widest = compare_widest
                    .max(inner + asof_core::text::width(crate::tui::fork_worker::DIFFERS));
                let most = widest.saturating_sub(inner);
                match (action, FilteredList::delta(action, rows)) {
                    (Action::ScrollLeft, _) => {
                        scroll.scroll_columns(-8, most);
                        Effect::Handled
                    }
                    (Action::ScrollRight, _) => {
                        scroll.scroll_columns(8, most);
                        Effect::Handled
                    }
                    (_, Some(by)) => {
                        scroll.scroll_by(by, rows);
                        Effect::Handled
                    }
                    (_, None) => Effect::Ignored,
                }
            }
        }
    }
}

impl Prompt {
    /// Enter applies, Esc cancels, anything else edits.
    fn update(&mut self, action: Action, now: Micros, cursor: Micros) -> Effect {
        match (action, self.kind) {
            (Action::Back, PromptKind::Filter(_)) => Effect::Filter(self.kind, String::new()),
            (Action::Back, PromptKind::Jump | PromptKind::Mark(_) | PromptKind::Export) => {
                Effect::Close
            }
            (Action::Open, PromptKind::Export) => {
                // The format, then everything after it is one file name
                // (spaces and all; quotes around it are taken off).
                let text = self.text.trim();
                let (format, file) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
                let format = Some(format.to_ascii_lowercase()).filter(|f| !f.is_empty());
                let file = file.trim();
                let file = file
                    .strip_prefix('"')
                    .and_then(|f| f.strip_suffix('"'))
                    .unwrap_or(file);
                let file = Some(file.to_owned()).filter(|f| !f.is_empty());
                match format.as_deref() {
                    Some("md" | "markdown") => Effect::Export(false, file),
                    Some("html") => Effect::Export(true, file),
                    _ => {
                        self.error = Some("write md or html, then a file name if you like".into());
                        Effect::Handled
                    }
                }
            }
            (Action::Open, PromptKind::Mark(on)) => match parse_mark(&self.text, on.kind()) {
                Ok((verdict, note)) => Effect::Mark(on, verdict, note),
                Err(e) => {
                    self.error = Some(e);
                    Effect::Handled
                }
            },
            (Action::Open, PromptKind::Filter(_)) => Effect::Close,
            (Action::Open, PromptKind::Jump) => match time::parse_user(&self.text, now, cursor) {
                Ok(t) => Effect::Seek(
                    t,
                    time::is_clock_only(&self.text).then(|| {
                        format!(
                            "{} → {} UTC, on the cursor's day",
                            self.text.trim(),
                            time::format(t).trim_end_matches('Z').replace('T', " ")
                        )
                    }),
                ),
                // The text stays, to be mended.
                Err(e) => {
                    self.error = Some(e);
                    Effect::Handled
                }
            },
            (_, PromptKind::Filter(_)) if self.edit(action) => {
                Effect::Filter(self.kind, self.text.clone())
            }
            _ => {
                self.edit(action);
                Effect::Handled
            }
        }
    }
}

/// "rejected a traffic lull" → (rejected, "a traffic lull"): a verdict for
/// a finding about `kind`, as any unambiguous prefix ("rej", "mis"), then
/// the note. `note` alone needs its note.
pub fn parse_mark(text: &str, kind: TargetKind) -> Result<(Verdict, Option<String>), String> {
    let text = text.trim();
    let (word, note) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let word = word.to_lowercase();
    let verdicts = kind.verdicts();
    let matches: Vec<Verdict> = verdicts
        .iter()
        .copied()
        .filter(|v| !word.is_empty() && v.as_str().starts_with(&word))
        .collect();
    let names = asof_core::review::names(kind);
    let note = Some(note.trim().to_owned()).filter(|n| !n.is_empty());
    match matches.as_slice() {
        [Verdict::Note] if note.is_none() => Err("a note needs its text: note WHY".into()),
        [verdict] => Ok((*verdict, note)),
        [] => Err(format!("start with a verdict: {names}")),
        _ => Err(format!("`{word}` could be several verdicts: {names}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_edits_at_its_caret() {
        let mut p = Prompt::new(PromptKind::Jump, "12:00".into());
        p.edit(Action::Edit(Edit::Home));
        p.edit(Action::Type('0'));
        p.edit(Action::Edit(Edit::End));
        p.edit(Action::Edit(Edit::Backspace));
        p.edit(Action::Edit(Edit::Left));
        p.edit(Action::Edit(Edit::Delete));
        assert_eq!(p.text, "012:");
        p.edit(Action::Edit(Edit::Home));
        p.edit(Action::Edit(Edit::Right));
        p.edit(Action::Type('é'));
        assert_eq!((p.text.as_str(), p.caret), ("0é12:", 2));
    }

    #[test]
    fn an_offered_format_is_replaced_by_typing_and_a_file_name_keeps_its_spaces() {
        let mut p = Prompt::offering(PromptKind::Export, "html".into());
        for c in "md my report.md".chars() {
            p.edit(Action::Type(c));
        }
        assert_eq!(p.text, "md my report.md");
        assert_eq!(
            p.update(Action::Open, 0, 0),
            Effect::Export(false, Some("my report.md".into()))
        );
        // Moving the caret first keeps the offer, to be edited.
        let mut p = Prompt::offering(PromptKind::Export, "html".into());
        p.edit(Action::Edit(Edit::End));
        p.edit(Action::Type(' '));
        p.edit(Action::Type('x'));
        assert_eq!(
            p.update(Action::Open, 0, 0),
            Effect::Export(true, Some("x".into()))
        );
    }

    #[test]
    fn a_clock_time_says_the_day_it_was_read_on() {
        let cursor = time::parse("2026-03-03T08:00:00Z").unwrap_or_default();
        let mut p = Prompt::new(PromptKind::Jump, "12:10".into());
        let at = time::parse("2026-03-03T12:10:00Z").unwrap_or_default();
        assert_eq!(
            p.update(Action::Open, 0, cursor),
            Effect::Seek(
                at,
                Some("12:10 → 2026-03-03 12:10:00 UTC, on the cursor's day".into())
            )
        );
        let mut p = Prompt::new(PromptKind::Jump, "2026-03-03 12:10".into());
        assert_eq!(p.update(Action::Open, 0, cursor), Effect::Seek(at, None));
    }

    #[test]
    fn text_scrolls_within_its_lines() {
        let lines = (0..50)
            .map(|i| ViewLine::new(LineStyle::Normal, format!("line {i} {}", "x".repeat(i * 3))))
            .collect();
        let mut v = TextView::new("t", lines);
        let screen = Rect::new(0, 0, 80, 24);
        assert!(v.update(Action::Bottom, screen));
        assert_eq!(v.scroll.offset(), 50 - 22);
        v.update(Action::ScrollRight, screen);
        assert_eq!(v.scroll.column, 8);
        assert!(!v.update(Action::Fork, screen));
    }
}
