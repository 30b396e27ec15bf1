//! Styles. With `NO_COLOR` set, meaning is carried by modifiers and glyphs alone:
//! reverse video for selection and the cursor, dim for the future, crossed-out
//! for superseded beliefs, bold for late evidence.

use ratatui::style::{Color, Modifier, Style};

/// Distinct glyphs per claim, so claims stay apart without colour.
pub const CLAIM_GLYPHS: [&str; 8] = ["●", "■", "▲", "◆", "★", "▼", "✱", "♠"];
const CLAIM_COLORS: [Color; 8] = [
    Color::Cyan,
    Color::Yellow,
    Color::Magenta,
    Color::Green,
    Color::LightRed,
    Color::LightBlue,
    Color::LightGreen,
    Color::LightMagenta,
];

/// The styles of every element, coloured or (`NO_COLOR`) not: with no colour, emphasis is bold, dim
/// and reversed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Whether to use colour.
    pub color: bool,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set to a non-empty value (no-color.org).
    pub fn from_env() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme { color: !no_color }
    }

    fn fg(&self, color: Color) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }

    /// Plain text.
    pub fn base(&self) -> Style {
        Style::new()
    }

    /// A title.
    pub fn title(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// What matters less: dark grey, or dim.
    pub fn muted(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }

    /// A panel's border, brighter when focused.
    pub fn border(&self, focused: bool) -> Style {
        match (focused, self.color) {
            (true, true) => Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            (true, false) => Style::new().add_modifier(Modifier::BOLD),
            (false, _) => self.muted(),
        }
    }

    /// A selected row.
    pub fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    /// The cursor and crosshair.
    pub fn cursor(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Yellow)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    /// A key in the footer and the help; a reviewer's mark.
    pub fn key(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// A version no longer held: muted and struck through.
    pub fn superseded(&self) -> Style {
        self.muted().add_modifier(Modifier::CROSSED_OUT)
    }

    /// Late-arriving evidence.
    pub fn late(&self) -> Style {
        self.fg(Color::LightRed).add_modifier(Modifier::BOLD)
    }

    /// What was recorded after the cursor (not known then).
    pub fn future(&self) -> Style {
        self.muted()
    }

    /// A warning.
    pub fn warning(&self) -> Style {
        self.fg(Color::LightRed).add_modifier(Modifier::BOLD)
    }

    /// Something that holds up (verified, right).
    pub fn good(&self) -> Style {
        self.fg(Color::Green)
    }

    /// Claim `index`'s colour (the glyph tells claims apart without colour).
    pub fn claim(&self, index: usize) -> Style {
        self.fg(CLAIM_COLORS[index % CLAIM_COLORS.len()])
    }

    /// A timeline mark of `kind`.
    pub fn mark(&self, kind: asof_store::query::timeline::MarkKind) -> Style {
        use asof_store::query::timeline::MarkKind::*;
        match kind {
            Evidence => self.fg(Color::Blue),
            Assertion => self.fg(Color::Green),
            Reconfirmation => self.fg(Color::Cyan),
            Retraction => self.fg(Color::LightRed),
            Verification => self.fg(Color::Magenta),
        }
    }
}

/// Claim `index`'s glyph within its topic.
pub fn claim_glyph(index: usize) -> &'static str {
    CLAIM_GLYPHS[index % CLAIM_GLYPHS.len()]
}
