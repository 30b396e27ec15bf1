//! Where each panel goes, as a pure function of the terminal size, so that mouse
//! hit-testing in `update` and drawing agree.
//!
//! ```text
//! ≥ 100×30                                 below (compact)
//! ┌ header (2) ───────────────────────┐    ┌ header (1) ─────────────┐
//! ├ timeline scrubber (7) ────────────┤    ├ timeline scrubber (6) ──┤
//! ├ beliefs ───────────┬ plane ───────┤    ├ beliefs ────────────────┤
//! │                    │              │    ├ evidence, or the plane  │
//! ├ evidence ──────────┴──────────────┤    │ while it has focus      │
//! └ footer (1) ───────────────────────┘    └ footer (1) ─────────────┘
//! ```

use ratatui::layout::{Constraint, Layout, Rect};

pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub header: Rect,
    pub scrubber: Rect,
    pub beliefs: Option<Rect>,
    pub evidence: Option<Rect>,
    pub plane: Option<Rect>,
    /// Compact: the plane and the evidence share one area (the focused one shows).
    pub plane_shares_evidence: bool,
    pub footer: Rect,
    pub too_small: bool,
    pub compact: bool,
}

pub fn areas(size: Rect) -> Areas {
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
    let (header_h, scrubber_h) = if compact { (1, 6) } else { (2, 7) };
    let [header, scrubber, body, footer] = Layout::vertical([
        Constraint::Length(header_h),
        Constraint::Length(scrubber_h),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(size);
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
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(middle);
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
                let a = areas(size);
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
