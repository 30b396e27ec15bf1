//! The header: incident, source, recorded cursor, play state, the latest event.
//!
//! ```text
//! asof │ Checkout payments failing │ payment-outage.yaml (bundled demo)
//! recorded ▸ 2026-03-03T12:10:00Z │ event 27/81 │ ▶ playing 1/s │ 03-03 12:10 B19 triage believes …
//! ```

use crate::time;
use crate::tui::app::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

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
    if app.showing_fork {
        let removed = app.fork.as_ref().map_or("?", |f| f.removed.as_str());
        mode.push(Span::styled(
            format!(
                " WHAT-IF without {removed}: a replay, not a causal model (c: back to parent) "
            ),
            theme.cursor(),
        ));
        mode.push(Span::raw(" "));
    }
    if let Some(busy) = &app.busy {
        const SPIN: [&str; 4] = ["⠋", "⠙", "⠸", "⠴"];
        mode.push(Span::styled(
            format!("{} {busy}… ", SPIN[app.spinner % SPIN.len()]),
            theme.good(),
        ));
    }
    let cursor = Span::styled(
        format!("recorded ▸ {}", time::format(app.cursor)),
        theme.cursor(),
    );
    let position = Span::raw(format!("event {done}/{total}"));
    let lines = if compact {
        vec![Line::from(
            mode.into_iter()
                .chain([
                    Span::styled("asof", theme.title()),
                    sep.clone(),
                    cursor,
                    sep.clone(),
                    position,
                    sep.clone(),
                    play,
                    sep,
                    Span::raw(title.to_owned()),
                ])
                .collect::<Vec<_>>(),
        )]
    } else {
        vec![
            Line::from(
                mode.into_iter()
                    .chain([
                        Span::styled("asof", theme.title()),
                        sep.clone(),
                        Span::styled(title.to_owned(), theme.title()),
                        sep.clone(),
                        Span::styled(app.timeline.label.clone(), theme.muted()),
                    ])
                    .collect::<Vec<_>>(),
            ),
            Line::from(vec![
                cursor,
                sep.clone(),
                position,
                sep.clone(),
                play,
                sep,
                Span::raw(app.latest.clone()),
            ]),
        ]
    };
    frame.render_widget(Paragraph::new(lines), area);
}

fn speed_label(ms: u64) -> String {
    if ms >= 1000 {
        format!("1 event/{}s", ms / 1000)
    } else {
        format!("{} events/s", 1000 / ms)
    }
}
