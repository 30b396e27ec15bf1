//! The plane: x = valid time (what a belief is about), y = recorded time (when
//! the agent held it, later is higher). One rectangle per version filled with
//! its claim's glyph, the diagonal valid = recorded, evidence as points at
//! (observed, recorded) — late evidence stands far above the diagonal — and a
//! crosshair whose reading is written underneath.
//!
//! ```text
//! ┌ ▶ Plane · root-cause · triage ─────────────────────────────────────┐
//! │03-12 ▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲→           ╱               │
//! │03-06 ▲▲━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━      ✦ ╱                │
//! │03-03 ◆◆◆◆◆◆◆◆┼───────────────────────────────  ╱                    │
//! │      03-02      03-04      03-06      03-08      03-10               │
//! │At 03-03 12:10 triage believed about 03-02 09:30: Bad deploy … (0.70) │
//! │x valid → · y recorded ↑  ● Payments DB…  ▲ Expired TLS…  ✦ evidence │
//! └─────────────────────────────────────────────────────────────────────┘
//! ```
//! The rectangles were built when the topic or agent changed; drawing only maps
//! them onto cells, O(shapes + cells).

use super::axis;
use crate::model::CloseKind;
use crate::time::{Micros, OPEN};
use crate::tui::app::{App, Focus};
use crate::tui::plane::{Geometry, PlaneShape as Shape};
use crate::tui::text::fit;
use crate::tui::theme::claim_glyph;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::tui::layout::{self, PLANE_FOOT as FOOT_ROWS, PLANE_LABEL as LABEL_WIDTH};

fn block(app: &App) -> Block<'static> {
    let focused = app.focus == Focus::Plane;
    let topic = app
        .timeline
        .header
        .topics
        .get(app.plane.plane.topic)
        .map(|t| t.id.as_str())
        .unwrap_or("-");
    let agent = app.plane.plane.agent.as_deref().unwrap_or("no agent");
    super::panel(app, focused, format!("Plane · {topic} · {agent}"))
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let block = block(app);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width < LABEL_WIDTH + 4 || inner.height < FOOT_ROWS + 2 {
        frame.render_widget(Paragraph::new(app.plane.reading.text.clone()), inner);
        return;
    }
    let grid = layout::plane_grid(area);
    let plane = &app.plane.plane;
    let g = Geometry::new(plane, grid);
    let (w, h) = (grid.width as usize, grid.height as usize);

    // Paint the shapes onto a cell grid: (glyph, style).
    let mut cells: Vec<(&str, Style)> = vec![(" ", Style::new()); w * h];
    for s in &plane.shapes {
        let (c0, c1) = g.cols(s.valid.from, s.valid.to);
        let (r0, r1) = g.rows(s.from, s.to);
        if c0 >= c1 || r0 >= r1 {
            continue;
        }
        let mut style = theme.claim(s.claim_index);
        if s.split {
            style = style.add_modifier(Modifier::DIM);
        }
        for r in r0..r1 {
            for c in c0..c1 {
                // The closing edge is marked when the shape is tall enough to keep
                // its claim visible too.
                let glyph = if r == r0 && s.to != OPEN && r1 - r0 >= 2 {
                    match s.closed {
                        Some(CloseKind::Retracted) => "✕",
                        _ => "━",
                    }
                } else if r == r0 && c == c0 && s.to == OPEN && r0 == 0 {
                    "↑"
                } else if c == c1 - 1 && s.valid.to == OPEN && c1 as usize == w {
                    "→"
                } else {
                    claim_glyph(s.claim_index)
                };
                cells[r as usize * w + c as usize] = (glyph, style);
            }
        }
    }
    // The diagonal valid = recorded.
    for c in 0..w {
        if let Some(r) = g.row_of(g.valid_at(c as u16)) {
            let cell = &mut cells[r as usize * w + c];
            let style = if cell.0 == " " { theme.muted() } else { cell.1 };
            *cell = ("╱", style);
        }
    }
    // Evidence at (observed, recorded).
    for p in &plane.points {
        if let (Some(c), Some(r)) = (g.col_of(p.observed), g.row_of(p.recorded)) {
            cells[r as usize * w + c as usize] = ("✦", theme.late().remove_modifier(Modifier::DIM));
        }
    }
    // The crosshair. Its row and column show what was held at exactly the
    // cursor's instants (not at their cells' centres), so the cell under the
    // crosshair and the reading always agree.
    let cx = g.col_of(app.valid_at());
    let cy = g.row_of(app.cursor);
    let at = |valid: Micros, recorded: Micros| -> Option<&Shape> {
        plane.shapes.iter().rev().find(|s| {
            s.valid.from <= valid && valid < s.valid.to && s.from <= recorded && recorded < s.to
        })
    };
    if let Some(cy) = cy {
        for c in 0..w {
            let shape = at(g.valid_at(c as u16), app.cursor);
            cells[cy as usize * w + c] = shape.map_or((" ", Style::new()), |s| {
                (claim_glyph(s.claim_index), theme.claim(s.claim_index))
            });
        }
    }
    if let Some(cx) = cx {
        for r in 0..h {
            let shape = at(app.valid_at(), g.recorded_at(r as u16));
            cells[r * w + cx as usize] = shape.map_or((" ", Style::new()), |s| {
                (claim_glyph(s.claim_index), theme.claim(s.claim_index))
            });
        }
    }
    if let Some(cx) = cx {
        for r in 0..h {
            let cell = &mut cells[r * w + cx as usize];
            *cell = (
                if cell.0 == " " || cell.0 == "╱" {
                    "│"
                } else {
                    cell.0
                },
                theme.cursor(),
            );
        }
    }
    if let Some(cy) = cy {
        for c in 0..w {
            let cell = &mut cells[cy as usize * w + c];
            let crossing = Some(c as i64) == cx;
            // At the crossing, the reading's claim (the authority), else nothing.
            let glyph = match (crossing, app.plane.reading.claim_index) {
                (true, Some(i)) => claim_glyph(i),
                (true, None) => "┼",
                _ if cell.0 == " " || cell.0 == "╱" => "─",
                _ => cell.0,
            };
            *cell = (glyph, theme.cursor());
        }
        // A valid cursor off the plane (following the diagonal) is marked at the edge.
        if cx.is_none() && w > 0 {
            let edge = if app.valid_at() < plane.valid_view.0 {
                0
            } else {
                w - 1
            };
            cells[cy as usize * w + edge] = (if edge == 0 { "◀" } else { "▶" }, theme.cursor());
        }
    }

    // Recorded-time labels on the left.
    let (rstep, rticks) = axis::ticks(plane.recorded_view.0, plane.recorded_view.1, h as i64, 1);
    let mut left = vec![String::new(); h];
    for (cell, t) in rticks {
        let row = h as i64 - 1 - cell;
        if (0..h as i64).contains(&row) {
            left[row as usize] = axis::tick_label(t, rstep);
        }
    }
    let mut lines: Vec<Line> = Vec::with_capacity(inner.height as usize);
    for (r, label) in left.iter().enumerate() {
        let mut spans = vec![Span::styled(
            fit(label, LABEL_WIDTH as usize),
            theme.muted(),
        )];
        spans.extend(
            cells[r * w..(r + 1) * w]
                .iter()
                .map(|(glyph, style)| Span::styled(*glyph, *style)),
        );
        lines.push(Line::from(spans));
    }
    // Valid-time labels underneath.
    let (vstep, vticks) = axis::ticks(
        plane.valid_view.0,
        plane.valid_view.1,
        w as i64,
        axis::label_cells(plane.valid_view.1 - plane.valid_view.0, w as i64),
    );
    let mut labels = vec![' '; w];
    let mut free_from = 0i64;
    for (col, t) in vticks {
        let label = axis::tick_label(t, vstep);
        let len = label.chars().count() as i64;
        if col >= free_from && col + len <= w as i64 {
            for (i, ch) in label.chars().enumerate() {
                labels[col as usize + i] = ch;
            }
            free_from = col + len + 1;
        }
    }
    lines.push(Line::from(vec![
        Span::raw(" ".repeat(LABEL_WIDTH as usize)),
        Span::styled(labels.into_iter().collect::<String>(), theme.muted()),
    ]));
    let about = if app.plane.valid_free {
        ""
    } else {
        " (valid follows the diagonal; v frees it)"
    };
    let mut legend = vec![Span::styled("x valid → · y recorded ↑  ", theme.muted())];
    for (i, claim) in &plane.legend {
        legend.push(Span::styled(
            format!("{} ", claim_glyph(*i)),
            theme.claim(*i),
        ));
        legend.push(Span::raw(format!("{}  ", fit(claim, 22).trim_end())));
    }
    legend.push(Span::styled(
        "✦ evidence  ╱ valid = recorded  ━ superseded  ✕ retracted  → ↑ open",
        theme.muted(),
    ));
    let [top, reading, key] = Layout::vertical([
        Constraint::Length(h as u16 + 1),
        Constraint::Length(FOOT_ROWS - 2),
        Constraint::Length(1),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(lines), top);
    let text = Span::styled(
        format!("{}{about}", app.plane.reading.text),
        theme.base().add_modifier(Modifier::BOLD),
    );
    frame.render_widget(
        Paragraph::new(Line::from(text)).wrap(Wrap { trim: true }),
        reading,
    );
    frame.render_widget(Paragraph::new(Line::from(legend)), key);
}
