//! The evidence panel: every item with kind, source, observed and recorded times,
//! lag (late items marked `!` and in the late style), and what cites it; items
//! recorded after the cursor are dimmed.
//!
//! ```text
//! ┌ Evidence · 33 items · 14 known at the cursor ─────────────────────────┐
//! │ID   KIND    SOURCE     OBSERVED     RECORDED     LAG       CITED BY    │
//! │E14  log     loki       03-02 09:05  03-03 10:10  !1d 1h    B18,B21,B24 │
//! └───────────────────────────────────────────────────────────────────────┘
//! ```

use super::text::fit;
use crate::tui::app::{App, Focus};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let focused = app.focus == Focus::Evidence;
    let known = app
        .timeline
        .evidence
        .partition_point(|item| item.evidence.recorded_at <= app.cursor);
    let filter = if app.evidence_filter.is_empty() {
        String::new()
    } else {
        format!(" · filter “{}”", app.evidence_filter)
    };
    let block = super::panel(
        app,
        focused,
        format!(
            "Evidence · {} items · {known} known at the cursor{filter}",
            app.timeline.evidence.len()
        ),
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    if width == 0 || inner.height == 0 {
        return;
    }
    let wide = width >= 90;
    let id_w = app.evidence_id_width.clamp(2, 10);
    let mut cols: Vec<(&str, usize)> = if wide {
        vec![
            ("ID", id_w),
            ("KIND", 7),
            ("SOURCE", 11),
            ("OBSERVED", 11),
            ("RECORDED", 11),
            ("LAG", 9),
            ("CITED BY", 14),
        ]
    } else {
        vec![
            ("ID", id_w),
            ("KIND", 7),
            ("RECORDED", 11),
            ("LAG", 9),
            ("CITED BY", 12),
        ]
    };
    if !app.influence.is_empty() {
        cols.push(("INFLUENCE", 16));
    }
    cols.push(("SUMMARY", 0));
    let header: String = cols
        .iter()
        .map(|(name, w)| {
            if *w == 0 {
                (*name).to_owned()
            } else {
                fit(name, *w) + " "
            }
        })
        .collect();
    let mut lines = vec![Line::from(Span::styled(
        header,
        theme.muted().add_modifier(Modifier::BOLD),
    ))];
    let rows = inner.height.saturating_sub(1) as usize;
    for (pos, &i) in app
        .evidence_visible
        .iter()
        .enumerate()
        .skip(app.evidence_offset)
        .take(rows)
    {
        let Some(r) = app.evidence_row(i) else {
            continue;
        };
        let future = r.recorded_at > app.cursor;
        let base = if future { theme.future() } else { theme.base() };
        let lag = if r.late {
            format!("!{}", r.lag)
        } else {
            r.lag.clone()
        };
        let mut spans = Vec::new();
        for (name, w) in &cols {
            let (text, style) = match *name {
                "ID" => (r.id, base.add_modifier(Modifier::BOLD)),
                "KIND" => (r.kind, base),
                "SOURCE" => (r.source, base),
                "OBSERVED" => (r.observed.as_str(), base),
                "RECORDED" => (r.recorded.as_str(), base),
                "LAG" => (lag.as_str(), if r.late { theme.late() } else { base }),
                "CITED BY" => (r.cited_by.as_str(), base),
                "INFLUENCE" => {
                    let text = app.influence.get(r.id).map_or("", String::as_str);
                    let style = if text.starts_with("shift -") {
                        theme.warning()
                    } else {
                        base
                    };
                    (text, style)
                }
                _ => (r.summary, base),
            };
            let text = if *w == 0 {
                text.to_owned()
            } else {
                fit(text, *w) + " "
            };
            spans.push(Span::styled(text, style));
        }
        let mut line = Line::from(spans);
        if focused && pos == app.evidence_selected {
            super::text::reverse(&mut line);
        }
        lines.push(line);
    }
    if app.evidence_visible.is_empty() {
        lines.push(Line::from(Span::styled(
            "nothing matches the filter",
            theme.muted(),
        )));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
