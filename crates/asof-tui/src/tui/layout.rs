//! Where everything goes, as pure functions of the terminal size: the panels,
//! the rows of each list, the scrubber's lanes, the plane's grid, the popups.
//! State (paging, hit-testing, keeping a selection on screen) and the views
//! (drawing) both ask here, so they cannot disagree.
//!
//! ```text
//! ≥ 100×30                                 below (compact)
//! ┌ header (3) ───────────────────────┐    ┌ header (1) ─────────────┐
//! ├ timeline scrubber (7) ────────────┤    ├ timeline scrubber (6) ──┤
//! ├ beliefs ───────────┬ plane ───────┤    ├ beliefs ────────────────┤
//! │                    │              │    ├ evidence, or the plane  │
//! ├ evidence ──────────┴──────────────┤    │ while it has focus      │
//! └ footer (1) ───────────────────────┘    └ footer (1) ─────────────┘
//! ```
//! With the plane full-screen (`p`), it takes the beliefs', evidence's and its
//! own place.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Block, Borders};

/// The scrubber's lane labels ("evidence ").
pub const SCRUBBER_LABEL: u16 = 9;
/// The plane's recorded-time labels at the left of its grid.
pub const PLANE_LABEL: u16 = 12;
/// The plane's rows under its grid: the axis labels, the reading (three), the legend (two).
pub const PLANE_FOOT: u16 = 6;
/// The plane's legend rows.
pub const PLANE_LEGEND: u16 = 2;

/// Inside a panel's border.
pub fn inner(area: Rect) -> Rect {
    Block::default().borders(Borders::ALL).inner(area)
}

/// Rows under the beliefs list that show the selected row whole (wrapped),
/// when the panel is tall enough to spare them (one in a short panel).
pub const BELIEF_DETAIL: u16 = 2;

fn belief_detail_rows(inside: Rect) -> u16 {
    match inside.height {
        8.. => BELIEF_DETAIL,
        5..8 => 1,
        _ => 0,
    }
}

/// The rows of the beliefs list: inside its panel, above the selected row's detail.
pub fn belief_rows(area: Rect) -> Rect {
    let inside = inner(area);
    Rect {
        height: inside.height - belief_detail_rows(inside),
        ..inside
    }
}

/// Where the selected belief is shown whole, if the panel has room.
pub fn belief_detail(area: Rect) -> Option<Rect> {
    let inside = inner(area);
    let rows = belief_detail_rows(inside);
    (rows > 0).then(|| Rect {
        y: inside.bottom() - rows,
        height: rows,
        ..inside
    })
}

/// The rows of the evidence list: inside its panel, under the column header.
pub fn evidence_rows(area: Rect) -> Rect {
    let inside = inner(area);
    Rect {
        y: inside.y + 1.min(inside.height),
        height: inside.height.saturating_sub(1),
        ..inside
    }
}

/// How many list rows a rectangle holds.
pub fn rows(area: Option<Rect>) -> usize {
    area.map_or(0, |a| a.height as usize)
}

/// Whether the scrubber's inside is wide enough for its lane labels.
pub fn scrubber_labels_shown(inside: Rect) -> bool {
    inside.width >= 60
}

/// The scrubber's columns that map to time (inside the border, right of the
/// lane labels when they fit).
pub fn scrubber_lanes(area: Rect) -> Rect {
    let inside = inner(area);
    if scrubber_labels_shown(inside) {
        Rect {
            x: inside.x + SCRUBBER_LABEL,
            width: inside.width - SCRUBBER_LABEL,
            ..inside
        }
    } else {
        inside
    }
}

/// The plane's cells that map to time: inside the border, right of the recorded
/// labels, above the footer rows.
pub fn plane_grid(area: Rect) -> Rect {
    let inside = inner(area);
    Rect {
        x: inside.x + PLANE_LABEL.min(inside.width),
        y: inside.y,
        width: inside.width.saturating_sub(PLANE_LABEL),
        height: inside.height.saturating_sub(PLANE_FOOT),
    }
}

/// What a mouse position is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// The scrubber (its panel).
    Scrubber(Rect),
    /// The plane's grid.
    Plane(Rect),
    /// A beliefs row: how far below the first row on screen (`None`: the border).
    Beliefs(Option<usize>),
    /// An evidence row: how far below the first row on screen (`None`: the border).
    Evidence(Option<usize>),
    /// Nothing a click acts on.
    Nothing,
}

/// What is at (`x`, `y`); `plane_shown` when the plane is on screen where it
/// shares its place with the evidence.
pub fn hit(areas: &Areas, plane_shown: bool, x: u16, y: u16) -> Hit {
    let at = (x, y).into();
    let row = |rows: Rect| rows.contains(at).then(|| (y - rows.y) as usize);
    let plane = areas
        .plane
        .filter(|_| !areas.plane_shares_evidence || plane_shown);
    if areas.scrubber.contains(at) {
        Hit::Scrubber(areas.scrubber)
    } else if let Some(p) = plane.filter(|p| p.contains(at)) {
        Hit::Plane(plane_grid(p))
    } else if let Some(b) = areas.beliefs.filter(|b| b.contains(at)) {
        Hit::Beliefs(row(belief_rows(b)))
    } else if let Some(e) = areas.evidence.filter(|e| e.contains(at)) {
        Hit::Evidence(row(evidence_rows(e)))
    } else {
        Hit::Nothing
    }
}

/// A rectangle of at most `width`×`height`, centred in `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// A text popup for `lines` lines at most `widest` columns wide: its frame, and
/// the rows inside it. It never leaves the screen; what does not fit scrolls.
pub fn text_popup(screen: Rect, widest: usize, lines: usize) -> (Rect, Rect) {
    let width = (widest as u16).saturating_add(4).max(40);
    let height = (lines as u16).saturating_add(2);
    let outer = centered(screen, width, height);
    (outer, inner(outer))
}

/// The compare view's frame.
pub fn compare_popup(screen: Rect) -> Rect {
    centered(
        screen,
        screen.width.saturating_sub(4),
        screen.height.saturating_sub(2),
    )
}

/// The one-line prompt's frame.
pub fn prompt_popup(screen: Rect) -> Rect {
    centered(screen, 76, 4)
}

/// The smallest screen the panels are drawn on; a smaller one gets a note saying so.
pub const MIN_WIDTH: u16 = 60;
/// The smallest height, likewise.
pub const MIN_HEIGHT: u16 = 16;

/// Where each part of the screen goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Areas {
    /// The header's lines.
    pub header: Rect,
    /// The timeline strip.
    pub scrubber: Rect,
    /// The beliefs panel, when it shows.
    pub beliefs: Option<Rect>,
    /// The evidence panel, when it shows.
    pub evidence: Option<Rect>,
    /// The plane, when it shows.
    pub plane: Option<Rect>,
    /// Compact: the plane and the evidence share one area (the focused one shows).
    pub plane_shares_evidence: bool,
    /// The footer's line.
    pub footer: Rect,
    /// The screen is below [`MIN_WIDTH`] × [`MIN_HEIGHT`].
    pub too_small: bool,
    /// A screen below 100 × 30: one line of header, and panels that share their area.
    pub compact: bool,
}

/// The areas of a screen of `size`.
pub fn areas(size: Rect) -> Areas {
    areas_with(size, false)
}

/// The panels, with the plane full-screen when `plane_full`.
pub fn areas_with(size: Rect, plane_full: bool) -> Areas {
    if size.width < MIN_WIDTH || size.height < MIN_HEIGHT {
        return Areas {
            header: Rect::default(),
            scrubber: Rect::default(),
            beliefs: None,
            evidence: None,
            plane: None,
            plane_shares_evidence: false,
            footer: Rect::default(),
            too_small: true,
            compact: true,
        };
    }
    let compact = size.width < 100 || size.height < 30;
    let (header_h, scrubber_h) = if compact { (1, 6) } else { (3, 7) };
    let [header, scrubber, body, footer] = Layout::vertical([
        Constraint::Length(header_h),
        Constraint::Length(scrubber_h),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(size);
    if plane_full {
        return Areas {
            header,
            scrubber,
            beliefs: None,
            evidence: None,
            plane: Some(body),
            plane_shares_evidence: false,
            footer,
            too_small: false,
            compact,
        };
    }
    if compact {
        let [beliefs, evidence] =
            Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(body);
        return Areas {
            header,
            scrubber,
            beliefs: Some(beliefs),
            evidence: Some(evidence),
            plane: Some(evidence),
            plane_shares_evidence: true,
            footer,
            too_small: false,
            compact,
        };
    }
    let [middle, evidence] =
        Layout::vertical([Constraint::Percentage(62), Constraint::Percentage(38)]).areas(body);
    let [beliefs, plane] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(middle);
    Areas {
        header,
        scrubber,
        beliefs: Some(beliefs),
        evidence: Some(evidence),
        plane: Some(plane),
        plane_shares_evidence: false,
        footer,
        too_small: false,
        compact,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panels_fit_inside_the_screen_at_every_size() {
        for w in 0..=250u16 {
            for h in 0..=80u16 {
                let size = Rect::new(0, 0, w, h);
                for full in [false, true] {
                    let a = areas_with(size, full);
                    for r in [
                        Some(a.header),
                        Some(a.scrubber),
                        a.beliefs,
                        a.evidence,
                        a.plane,
                        Some(a.footer),
                    ]
                    .into_iter()
                    .flatten()
                    {
                        assert!(r.right() <= w && r.bottom() <= h, "{r:?} inside {w}x{h}");
                    }
                    assert_eq!(a.too_small, w < MIN_WIDTH || h < MIN_HEIGHT);
                }
            }
        }
    }
}
