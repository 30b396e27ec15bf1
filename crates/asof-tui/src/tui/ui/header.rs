//! The header: incident, source, recorded cursor, play state, the latest event.
//!
//! ```text
//! asof │ Checkout payments failing │ payment-outage.yaml (bundled demo)
//! recorded ▸ 2026-03-03T12:10:00Z │ about = recorded │ event 27/81 │ ⏸ paused
//! last event ▸ 03-03 12:10 B19 triage believes “Bad deploy of checkout-service v4.12” (root-cause) on E15
//! ```
//! Below 100×30 it is one line, without the last event.

use crate::tui::app::App;
use asof_core::text::{cut, width};
use asof_core::time;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Draws the header in `area`: the incident, play and live state, a what-if badge, the
/// latest event and the review read (in one line when `compact`).
pub fn render(app: &App, frame: &mut Frame, area: Rect, compact: bool) {
    let theme = &app.theme;
    let sep = Span::styled(" │ ", theme.muted());
    let incident = &app.timeline.header.incident;
    let title = if incident.title.is_empty() {
        incident.id.as_str()
    } else {
        incident.title.as_str()
    };
    let play = if app.playing {
        Span::styled(
            format!("▶ playing {}", speed_label(app.play_interval_ms())),
            theme.good(),
        )
    } else {
        Span::styled("⏸ paused", theme.muted())
    };
    let (done, total) = app.event_position;
    let mut mode = Vec::new();
    if app.whatif.showing_fork {
        // The removed ids whole, a few then `+N` (a long list would push the
        // cursor's instant off a one-line header).
        let ids: Vec<&str> = app
            .whatif
            .fork
            .as_ref()
            .map_or(vec!["?"], |f| f.removed.split(',').collect());
        let removed = asof_core::text::id_list(&ids, if compact { 16 } else { 40 });
        let badge = if compact {
            format!(" WHAT-IF without {removed} ")
        } else {
            format!(" WHAT-IF without {removed}: a replay, not the record (c: back to parent) ")
        };
        mode.push(Span::styled(badge, theme.cursor()));
        mode.push(Span::raw(" "));
    }
    if let Some(busy) = &app.whatif.busy {
        const SPIN: [&str; 4] = ["⠋", "⠙", "⠸", "⠴"];
        mode.push(Span::styled(
            format!("{} {busy}… ", SPIN[app.whatif.spinner % SPIN.len()]),
            theme.good(),
        ));
    }
    let cursor = Span::styled(
        format!("recorded ▸ {}", time::format(app.cursor)),
        theme.cursor(),
    );
    let position = Span::raw(format!("event {done}/{total}"));
    let about = if app.plane.valid_free {
        Span::styled(
            format!("about ▸ {}", time::format_short(app.valid_at())),
            theme.cursor(),
        )
    } else {
        Span::styled("about = recorded", theme.muted())
    };
    if let Some(live) = live_span(app) {
        // Before the title, where a what-if badge goes: it says what the
        // screen is and must not be cut off at the right.
        mode.insert(0, Span::raw(" "));
        mode.insert(0, live);
    }
    let room = area.width as usize;
    let lines = if compact {
        // One line: the cursor's instant and the play state come first and
        // whole; then the event count, the valid cursor and the title while
        // they fit (the title cut visibly).
        let mut line: Vec<Span> = mode;
        line.extend([Span::styled("asof", theme.title()), sep.clone()]);
        line.extend([cursor, sep.clone(), play]);
        if app.review_shown.line.is_some() {
            let n = app.timeline.review.findings.len();
            line.extend([
                sep.clone(),
                Span::styled(
                    format!("{} review: {n}", crate::tui::state::beliefs::REVIEW_GLYPH),
                    theme.key(),
                ),
            ]);
        }
        for part in [position, about] {
            if spans_width(&line) + 3 + part.width() <= room {
                line.extend([sep.clone(), part]);
            }
        }
        let left = room.saturating_sub(spans_width(&line) + 3);
        if left >= 6 {
            line.extend([sep, Span::raw(cut(title, left))]);
        }
        vec![Line::from(line)]
    } else {
        let mut first: Vec<Span> = mode;
        first.extend([Span::styled("asof", theme.title()), sep.clone()]);
        // A review read beside the record says so on every screen
        // (docs/review.md): it keeps up to half the line, cut visibly.
        let review = app.review_shown.line.as_deref();
        let review_w = review.map_or(0, |r| width(r).min(room * 3 / 5) + 3);
        let left = room.saturating_sub(spans_width(&first) + review_w);
        let title = cut(title, left.saturating_sub(3).max(left / 2));
        first.push(Span::styled(title, theme.title()));
        let left = room.saturating_sub(spans_width(&first) + 3 + review_w);
        first.extend([
            sep.clone(),
            Span::styled(cut(&app.timeline.label, left), theme.muted()),
        ]);
        if let Some(review) = review {
            let left = room.saturating_sub(spans_width(&first) + 3);
            first.extend([sep.clone(), Span::styled(cut(review, left), theme.key())]);
        }
        let second = vec![cursor, sep.clone(), about, sep.clone(), position, sep, play];
        let prefix = "last event ▸ ";
        let third = vec![
            Span::styled(prefix, theme.muted()),
            Span::raw(cut(&app.latest, room.saturating_sub(width(prefix)))),
        ];
        vec![Line::from(first), Line::from(second), Line::from(third)]
    };
    frame.render_widget(Paragraph::new(lines), area);
}

fn spans_width(spans: &[Span]) -> usize {
    spans.iter().map(Span::width).sum()
}

/// `● live · newest 4s ago` while following (`pinned` once the cursor was
/// moved back from the newest event; End follows again), `○ follow stopped`
/// once it stopped (the status line says why).
fn live_span(app: &App) -> Option<Span<'static>> {
    let live = app.live.as_ref()?;
    let theme = &app.theme;
    if live.stopped.is_some() {
        return Some(Span::styled("○ follow stopped", theme.warning()));
    }
    let pinned = if app.following() {
        ""
    } else {
        "pinned, End follows · "
    };
    let age = if live.age.is_empty() {
        "no events yet".to_owned()
    } else {
        format!("newest {} ago", live.age)
    };
    // The store behind its file (a receiver's under load): what is on
    // screen is not yet all that was received.
    if live.behind > 0 {
        return Some(Span::styled(
            format!(
                "● live · {pinned}{age} · store {} behind",
                asof_core::text::count(live.behind as usize, "line", "lines")
            ),
            theme.warning(),
        ));
    }
    Some(Span::styled(
        format!("● live · {pinned}{age}"),
        theme.good(),
    ))
}

fn speed_label(ms: u64) -> String {
    if ms >= 1000 {
        format!("1 event/{}s", ms / 1000)
    } else {
        format!("{} events/s", 1000 / ms)
    }
}
