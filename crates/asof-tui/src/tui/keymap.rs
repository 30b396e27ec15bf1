//! The one keymap. Keys become [`Action`]s here and nowhere else; the footer
//! hints and the `?` help overlay are generated from the same table.

use super::action::{Action, Edit};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// Where a binding applies. Focused-panel bindings win over global ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Wherever the focus is.
    Global,
    /// The timeline strip has the focus.
    Scrubber,
    /// The beliefs or evidence list has the focus.
    Lists,
    /// The plane has the focus.
    Plane,
    /// A popup is open.
    Popup,
    /// A text prompt (`:` jump, `/` filter): typed characters are text.
    Prompt,
}

impl Context {
    /// The context's heading in the help.
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Everywhere",
            Context::Scrubber => "Timeline",
            Context::Lists => "Beliefs and evidence lists",
            Context::Plane => "Plane (valid × recorded time)",
            Context::Popup => "Popups (help, history, details, compare)",
            Context::Prompt => "Prompts (: jump, / filter)",
        }
    }
}

/// A key as a binding names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A character, as typed (shift included).
    Char(char),
    /// A key without a character (arrows, Enter, Tab).
    Code(KeyCode),
    /// A character with Ctrl held.
    Ctrl(char),
}

/// Keys that ask for one action in one context.
pub struct Binding {
    /// Where it applies.
    pub context: Context,
    /// The keys.
    pub keys: &'static [Key],
    /// How the keys are written in hints: `←/→ h/l`.
    pub label: &'static str,
    /// What it does, in the help (empty: it shares the line above).
    pub help: &'static str,
    /// What it asks for.
    pub action: Action,
    /// The footer's word for it, when the footer shows it.
    pub hint: Option<&'static str>,
}

use Context::*;
use Key::{Char, Code, Ctrl};

/// Every binding, in the help's order.
pub const BINDINGS: &[Binding] = &[
    Binding {
        context: Global,
        keys: &[Code(KeyCode::Left), Char('h')],
        label: "←/→ h/l",
        help: "step the recorded cursor back / forward",
        action: Action::StepBack,
        hint: Some("step"),
    },
    Binding {
        context: Global,
        keys: &[Code(KeyCode::Right), Char('l')],
        label: "",
        help: "",
        action: Action::StepForward,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('[')],
        label: "[/]",
        help: "previous / next event",
        action: Action::PrevEvent,
        hint: Some("event"),
    },
    Binding {
        context: Global,
        keys: &[Char(']')],
        label: "",
        help: "",
        action: Action::NextEvent,
        hint: None,
    },
    Binding {
        context: Scrubber,
        keys: &[Code(KeyCode::Home), Char('g')],
        label: "g/G Home/End",
        help: "jump to the start / end of the log",
        action: Action::Start,
        hint: Some("start/end"),
    },
    Binding {
        context: Scrubber,
        keys: &[Code(KeyCode::End), Char('G')],
        label: "",
        help: "",
        action: Action::End,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char(' ')],
        label: "Space",
        help: "play / pause (one event at a time)",
        action: Action::TogglePlay,
        hint: Some("play"),
    },
    Binding {
        context: Global,
        keys: &[Char('+'), Char('=')],
        label: "+/-",
        help: "play faster / slower",
        action: Action::Faster,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('-'), Char('_')],
        label: "",
        help: "",
        action: Action::Slower,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('z')],
        label: "z/Z",
        help: "zoom the timeline in / out around the cursor",
        action: Action::ZoomIn,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('Z')],
        label: "",
        help: "",
        action: Action::ZoomOut,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char(':')],
        label: ":",
        help: "jump to a typed time",
        action: Action::Jump,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Code(KeyCode::Tab)],
        label: "Tab/S-Tab",
        help: "focus the next / previous panel",
        action: Action::FocusNext,
        hint: Some("focus"),
    },
    Binding {
        context: Global,
        keys: &[Code(KeyCode::BackTab)],
        label: "",
        help: "",
        action: Action::FocusPrev,
        hint: None,
    },
    Binding {
        context: Lists,
        keys: &[Code(KeyCode::Up), Char('k')],
        label: "↑/↓ j/k",
        help: "select",
        action: Action::Up,
        hint: Some("select"),
    },
    Binding {
        context: Lists,
        keys: &[Code(KeyCode::Down), Char('j')],
        label: "",
        help: "",
        action: Action::Down,
        hint: None,
    },
    Binding {
        context: Lists,
        keys: &[Code(KeyCode::PageUp)],
        label: "PgUp/PgDn",
        help: "page up / down",
        action: Action::PageUp,
        hint: None,
    },
    Binding {
        context: Lists,
        keys: &[Code(KeyCode::PageDown)],
        label: "",
        help: "",
        action: Action::PageDown,
        hint: None,
    },
    Binding {
        context: Lists,
        keys: &[Code(KeyCode::Home), Char('g')],
        label: "g/G Home/End",
        help: "first / last row",
        action: Action::Top,
        hint: None,
    },
    Binding {
        context: Lists,
        keys: &[Code(KeyCode::End), Char('G')],
        label: "",
        help: "",
        action: Action::Bottom,
        hint: None,
    },
    Binding {
        context: Lists,
        keys: &[Code(KeyCode::Enter)],
        label: "Enter",
        help: "details: a topic's history, an evidence item",
        action: Action::Open,
        hint: Some("details"),
    },
    Binding {
        context: Lists,
        keys: &[Char('/')],
        label: "/",
        help: "filter the list (Esc clears)",
        action: Action::Filter,
        hint: Some("filter"),
    },
    Binding {
        context: Plane,
        keys: &[Code(KeyCode::Left), Char('h')],
        label: "←/→ h/l",
        help: "move the valid cursor (once `v` freed it), else step recorded time",
        action: Action::PlaneLeft,
        hint: Some("valid (v frees it)"),
    },
    Binding {
        context: Plane,
        keys: &[Code(KeyCode::Right), Char('l')],
        label: "",
        help: "",
        action: Action::PlaneRight,
        hint: None,
    },
    Binding {
        context: Plane,
        keys: &[Code(KeyCode::Up), Char('k')],
        label: "↑/↓ k/j",
        help: "recorded cursor later / earlier",
        action: Action::PlaneUp,
        hint: Some("recorded"),
    },
    Binding {
        context: Plane,
        keys: &[Code(KeyCode::Down), Char('j')],
        label: "",
        help: "",
        action: Action::PlaneDown,
        hint: None,
    },
    Binding {
        context: Plane,
        keys: &[Char('z')],
        label: "z/Z",
        help: "zoom the plane in / out around the crosshair",
        action: Action::PlaneZoomIn,
        hint: Some("zoom"),
    },
    Binding {
        context: Plane,
        keys: &[Char('Z')],
        label: "",
        help: "",
        action: Action::PlaneZoomOut,
        hint: None,
    },
    Binding {
        context: Plane,
        keys: &[Char('n')],
        label: "n",
        help: "the legend's next page (when the plane's glyphs do not all fit on it)",
        action: Action::PlaneLegend,
        hint: None,
    },
    Binding {
        context: Plane,
        keys: &[Code(KeyCode::Enter)],
        label: "Enter",
        help: "the version under the crosshair",
        action: Action::Open,
        hint: Some("version"),
    },
    Binding {
        context: Lists,
        keys: &[Char('w')],
        label: "w",
        help: "what-if fork without the selected evidence (runs in the background)",
        action: Action::Fork,
        hint: Some("what-if"),
    },
    Binding {
        context: Global,
        keys: &[Char('W')],
        label: "W",
        help: "what-if fork without every evidence item the review rejects, labelled as the review's",
        action: Action::ForkReview,
        hint: None,
    },
    Binding {
        context: Lists,
        keys: &[Char('m')],
        label: "m",
        help: "a review finding on the selected evidence or belief, about the cursor's instant: a verdict and a note (appended to the review file, never the store)",
        action: Action::Mark,
        hint: Some("finding"),
    },
    Binding {
        context: Global,
        keys: &[Char('e')],
        label: "e",
        help: "write the report of the store or fork shown (Markdown or HTML) to a file",
        action: Action::Export,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('s')],
        label: "s",
        help: "save the what-if fork as a store (STEM-without-E15.db in the current directory)",
        action: Action::SaveFork,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('y')],
        label: "y",
        help: "copy the selected belief, version or evidence (or the latest event) as text, via OSC 52",
        action: Action::Copy,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('r')],
        label: "r",
        help: "a trace's model calls in order: what the model read new, said and called at each",
        action: Action::Calls,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('c')],
        label: "c",
        help: "compare parent and fork → show the fork in the panels → back to the parent",
        action: Action::Compare,
        hint: None,
    },
    Binding {
        context: Popup,
        keys: &[Char('c')],
        label: "c",
        help: "in the compare view: show the fork in the panels",
        action: Action::Compare,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('v')],
        label: "v",
        help: "free the valid cursor / let it follow the diagonal (valid = recorded)",
        action: Action::ToggleValid,
        hint: None,
    },
    Binding {
        context: Popup,
        keys: &[Code(KeyCode::Up), Char('k')],
        label: "↑/↓ j/k",
        help: "scroll a line (PgUp/PgDn a page, g/G Home/End to the start/end)",
        action: Action::Up,
        hint: Some("scroll"),
    },
    Binding {
        context: Popup,
        keys: &[Code(KeyCode::Down), Char('j')],
        label: "",
        help: "",
        action: Action::Down,
        hint: None,
    },
    Binding {
        context: Popup,
        keys: &[Code(KeyCode::PageUp)],
        label: "PgUp/PgDn",
        help: "scroll a page",
        action: Action::PageUp,
        hint: Some("page"),
    },
    Binding {
        context: Popup,
        keys: &[Code(KeyCode::PageDown), Char(' ')],
        label: "",
        help: "",
        action: Action::PageDown,
        hint: None,
    },
    Binding {
        context: Popup,
        keys: &[Code(KeyCode::Home), Char('g')],
        label: "g/G Home/End",
        help: "to the start / end",
        action: Action::Top,
        hint: None,
    },
    Binding {
        context: Popup,
        keys: &[Code(KeyCode::End), Char('G')],
        label: "",
        help: "",
        action: Action::Bottom,
        hint: None,
    },
    Binding {
        context: Popup,
        keys: &[Code(KeyCode::Left), Char('h')],
        label: "←/→ h/l",
        help: "scroll wide text sideways",
        action: Action::ScrollLeft,
        hint: Some("sideways"),
    },
    Binding {
        context: Popup,
        keys: &[Code(KeyCode::Right), Char('l')],
        label: "",
        help: "",
        action: Action::ScrollRight,
        hint: None,
    },
    Binding {
        context: Popup,
        keys: &[Code(KeyCode::Esc)],
        label: "Esc",
        help: "close",
        action: Action::Back,
        hint: Some("close"),
    },
    Binding {
        context: Popup,
        keys: &[Char('?'), Code(KeyCode::F(1))],
        label: "?",
        help: "this help (again: close it)",
        action: Action::Help,
        hint: None,
    },
    Binding {
        context: Popup,
        keys: &[Char('q')],
        label: "q",
        help: "quit",
        action: Action::Quit,
        hint: Some("quit"),
    },
    Binding {
        context: Prompt,
        keys: &[Code(KeyCode::Enter)],
        label: "Enter",
        help: "apply (a time that does not read keeps the text to mend)",
        action: Action::Open,
        hint: Some("apply"),
    },
    Binding {
        context: Prompt,
        keys: &[Code(KeyCode::Esc)],
        label: "Esc",
        help: "cancel (a filter: clear it)",
        action: Action::Back,
        hint: Some("cancel"),
    },
    Binding {
        context: Prompt,
        keys: &[Code(KeyCode::Left)],
        label: "←/→ Home/End",
        help: "move the caret",
        action: Action::Edit(Edit::Left),
        hint: Some("move"),
    },
    Binding {
        context: Prompt,
        keys: &[Code(KeyCode::Right)],
        label: "",
        help: "",
        action: Action::Edit(Edit::Right),
        hint: None,
    },
    Binding {
        context: Prompt,
        keys: &[Code(KeyCode::Home)],
        label: "",
        help: "",
        action: Action::Edit(Edit::Home),
        hint: None,
    },
    Binding {
        context: Prompt,
        keys: &[Code(KeyCode::End)],
        label: "",
        help: "",
        action: Action::Edit(Edit::End),
        hint: None,
    },
    Binding {
        context: Prompt,
        keys: &[Code(KeyCode::Backspace)],
        label: "⌫/Del",
        help: "erase before / after the caret",
        action: Action::Edit(Edit::Backspace),
        hint: Some("erase"),
    },
    Binding {
        context: Prompt,
        keys: &[Code(KeyCode::Delete)],
        label: "",
        help: "",
        action: Action::Edit(Edit::Delete),
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('p')],
        label: "p",
        help: "the plane full-screen / back (below 100 columns the plane shares the evidence panel's place)",
        action: Action::PlaneFull,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('?'), Code(KeyCode::F(1))],
        label: "?",
        help: "this help",
        action: Action::Help,
        hint: Some("help"),
    },
    Binding {
        context: Global,
        keys: &[Code(KeyCode::Esc)],
        label: "Esc",
        help: "clear a filter, stop playing (never quits: q does)",
        action: Action::Back,
        hint: None,
    },
    Binding {
        context: Global,
        keys: &[Char('q'), Ctrl('c')],
        label: "q",
        help: "quit (Ctrl-C always quits)",
        action: Action::Quit,
        hint: Some("quit"),
    },
];

fn matches(key: &KeyEvent, k: Key) -> bool {
    match k {
        Char(c) => {
            key.code == KeyCode::Char(c)
                && !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        }
        Code(code) => key.code == code,
        Ctrl(c) => key.code == KeyCode::Char(c) && key.modifiers.contains(KeyModifiers::CONTROL),
    }
}

/// Translates a key press in `context` (the focused panel, or `Popup`).
/// Key releases and repeats of non-navigation keys are ignored by the caller.
pub fn translate(key: &KeyEvent, context: Context) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    if matches(key, Ctrl('c')) {
        return Some(Action::Quit);
    }
    let lookup = |ctx: Context| {
        BINDINGS
            .iter()
            .filter(|b| b.context == ctx)
            .find(|b| b.keys.iter().any(|&k| matches(key, k)))
            .map(|b| b.action)
    };
    if context == Prompt {
        // Typed characters are text; only the prompt's own keys do anything else.
        return lookup(Prompt).or(match key.code {
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                Some(Action::Type(c))
            }
            _ => None,
        });
    }
    lookup(context).or_else(|| {
        if context == Popup {
            None
        } else {
            lookup(Global)
        }
    })
}

/// Footer hints for a context: its own hinted bindings, then the global ones.
pub fn hints(context: Context) -> Vec<(&'static str, &'static str)> {
    let own = BINDINGS.iter().filter(|b| b.context == context);
    let global = BINDINGS
        .iter()
        .filter(|b| b.context == Global && !matches!(context, Popup | Prompt));
    own.chain(global)
        .filter_map(|b| Some((b.label, b.hint?)))
        .collect()
}

/// Every documented binding, grouped by context, for the help overlay.
pub fn help() -> Vec<(Context, Vec<(&'static str, &'static str)>)> {
    [Global, Scrubber, Lists, Plane, Popup, Prompt]
        .into_iter()
        .map(|ctx| {
            let rows = BINDINGS
                .iter()
                .filter(|b| b.context == ctx && !b.label.is_empty())
                .map(|b| (b.label, b.help))
                .collect();
            (ctx, rows)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn focused_bindings_win_over_global_ones() {
        assert_eq!(
            translate(&press(KeyCode::Home), Context::Scrubber),
            Some(Action::Start)
        );
        assert_eq!(
            translate(&press(KeyCode::Home), Context::Lists),
            Some(Action::Top)
        );
        assert_eq!(
            translate(&press(KeyCode::Char('l')), Context::Lists),
            Some(Action::StepForward)
        );
        assert_eq!(
            translate(&press(KeyCode::Char('l')), Context::Popup),
            Some(Action::ScrollRight)
        );
        assert_eq!(translate(&press(KeyCode::Char('w')), Context::Popup), None);
        // In a prompt, q and Home are text editing, not quitting or jumping.
        assert_eq!(
            translate(&press(KeyCode::Char('q')), Context::Prompt),
            Some(Action::Type('q'))
        );
        assert_eq!(
            translate(&press(KeyCode::Home), Context::Prompt),
            Some(Action::Edit(Edit::Home))
        );
        assert_eq!(
            translate(&press(KeyCode::Delete), Context::Prompt),
            Some(Action::Edit(Edit::Delete))
        );
        assert_eq!(
            translate(&press(KeyCode::Esc), Context::Popup),
            Some(Action::Back)
        );
    }

    #[test]
    fn ctrl_c_always_quits_and_releases_are_ignored() {
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(translate(&ctrl_c, Context::Popup), Some(Action::Quit));
        let mut release = press(KeyCode::Char('q'));
        release.kind = KeyEventKind::Release;
        assert_eq!(translate(&release, Context::Global), None);
    }

    #[test]
    fn hints_and_help_come_from_the_table() {
        let hints = hints(Context::Lists);
        assert_eq!(hints[0], ("↑/↓ j/k", "select"));
        assert!(hints.contains(&("q", "quit")));
        assert!(
            !hints.contains(&("g/G Home/End", "start/end")),
            "list keys win in lists"
        );
        let help = help();
        let all: Vec<&str> = help
            .iter()
            .flat_map(|(_, rows)| rows.iter().map(|r| r.0))
            .collect();
        for label in [
            "←/→ h/l",
            "[/]",
            "g/G Home/End",
            "Space",
            "+/-",
            "z/Z",
            ":",
            "Tab/S-Tab",
            "/",
            "?",
            "q",
        ] {
            assert!(all.contains(&label), "help lists {label}");
        }
    }
}
