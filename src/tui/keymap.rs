//! The one keymap. Keys become [`Action`]s here and nowhere else; the footer
//! hints and the `?` help overlay are generated from the same table.

use super::action::Action;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// Where a binding applies. Focused-panel bindings win over global ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Global,
    Scrubber,
    Lists,
    Plane,
    Popup,
}

impl Context {
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Everywhere",
            Context::Scrubber => "Timeline",
            Context::Lists => "Beliefs and evidence lists",
            Context::Plane => "Plane (valid × recorded time)",
            Context::Popup => "Popups",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Code(KeyCode),
    Ctrl(char),
}

pub struct Binding {
    pub context: Context,
    pub keys: &'static [Key],
    /// How the keys are written in hints: `←/→ h/l`.
    pub label: &'static str,
    pub help: &'static str,
    pub action: Action,
    /// The footer's word for it, when the footer shows it.
    pub hint: Option<&'static str>,
}

use Context::*;
use Key::{Char, Code, Ctrl};

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
        help: "scroll",
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
        label: "",
        help: "",
        action: Action::PageUp,
        hint: None,
    },
    Binding {
        context: Popup,
        keys: &[Code(KeyCode::PageDown)],
        label: "",
        help: "",
        action: Action::PageDown,
        hint: None,
    },
    Binding {
        context: Popup,
        keys: &[Code(KeyCode::Esc), Char('q')],
        label: "Esc/q",
        help: "close",
        action: Action::Back,
        hint: Some("close"),
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
        help: "close a popup, clear a filter, stop playing, else quit",
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
        .filter(|b| b.context == Global && context != Popup);
    own.chain(global)
        .filter_map(|b| Some((b.label, b.hint?)))
        .collect()
}

/// Every documented binding, grouped by context, for the help overlay.
pub fn help() -> Vec<(Context, Vec<(&'static str, &'static str)>)> {
    [Global, Scrubber, Lists, Plane, Popup]
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
        assert_eq!(translate(&press(KeyCode::Char('l')), Context::Popup), None);
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
