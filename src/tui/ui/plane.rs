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
use super::text::fit;
use crate::model::CloseKind;
use crate::time::{Micros, OPEN};
use crate::tui::app::{App, Focus};
use crate::tui::plane::Plane;
use crate::tui::theme::claim_glyph;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

const LABEL_WIDTH: u16 = 6;
/// Rows under the grid: valid-time labels, the reading (two), the legend.
const FOOT_ROWS: u16 = 4;

fn block(app: &App) -> Block<'static> {
    let focused = app.focus == Focus::Plane;
    let topic = app
        .timeline
        .header
        .topics
        .get(app.plane.topic)
        .map(|t| t.id.as_str())
        .unwrap_or("-");
    let agent = app.plane.agent.as_deref().unwrap_or("no agent");
    super::panel(app, focused, format!("Plane · {topic} · {agent}"))
}

/// The cells that map to time, inside the border, right of the recorded labels,
/// above the footer rows.
pub fn grid_area(area: Rect) -> Rect {
    let inner = Block::default().borders(Borders::ALL).inner(area);
    Rect {
        x: inner.x + LABEL_WIDTH.min(inner.width),
        y: inner.y,
        width: inner.width.saturating_sub(LABEL_WIDTH),
        height: inner.height.saturating_sub(FOOT_ROWS),
    }
}

/// The (valid, recorded) instants at a screen cell of the plane, if it is on the grid.
pub fn time_at(plane: &Plane, area: Rect, x: u16, y: u16) -> Option<(Micros, Micros)> {
    let grid = grid_area(area);
    if grid.width == 0
        || grid.height == 0
        || x < grid.x
        || y < grid.y
        || x >= grid.right()
        || y >= grid.bottom()
    {
        return None;
    }
    let g = Geometry::new(plane, grid);
    Some((g.valid_at(x - grid.x), g.recorded_at(y - grid.y)))
}

/// Maps between instants and grid cells; cells are sampled at their centres.
struct Geometry {
    v0: f64,
    vspan: f64,
    r1: f64,
    rspan: f64,
    w: f64,
    h: f64,
}

impl Geometry {
    fn new(plane: &Plane, grid: Rect) -> Self {
        let (v0, v1) = plane.valid_view;
        let (r0, r1) = plane.recorded_view;
        Geometry {
            v0: v0 as f64,
            vspan: (v1 - v0).max(1) as f64,
            r1: r1 as f64,
            rspan: (r1 - r0).max(1) as f64,
            w: grid.width as f64,
            h: grid.height as f64,
        }
    }

    fn valid_at(&self, col: u16) -> Micros {
        (self.v0 + (col as f64 + 0.5) * self.vspan / self.w) as Micros
    }

    fn recorded_at(&self, row: u16) -> Micros {
        (self.r1 - (row as f64 + 0.5) * self.rspan / self.h) as Micros
    }

    /// Columns whose centre lies in `[from, to)`.
    fn cols(&self, from: Micros, to: Micros) -> (i64, i64) {
        let x = |t: Micros| ((t as f64 - self.v0) * self.w / self.vspan - 0.5).ceil();
        let lo = x(from).max(0.0);
        let hi = if to == OPEN {
            self.w
        } else {
            x(to).min(self.w)
        };
        (lo as i64, hi as i64)
    }

    /// Rows whose centre lies in `[from, to)` (row 0 is the latest recorded time).
    fn rows(&self, from: Micros, to: Micros) -> (i64, i64) {
        let y = |t: Micros| (self.r1 - t as f64) * self.h / self.rspan - 0.5;
        let lo = if to == OPEN {
            0.0
        } else {
            (y(to).floor() + 1.0).max(0.0)
        };
        let hi = (y(from).floor() + 1.0).min(self.h);
        (lo as i64, hi as i64)
    }

    fn col_of(&self, t: Micros) -> Option<i64> {
        let c = ((t as f64 - self.v0) * self.w / self.vspan).floor();
        (c >= 0.0 && c < self.w).then_some(c as i64)
    }

    fn row_of(&self, t: Micros) -> Option<i64> {
        let r = ((self.r1 - t as f64) * self.h / self.rspan).floor();
        (r >= 0.0 && r < self.h).then_some(r as i64)
    }
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let block = block(app);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width < LABEL_WIDTH + 4 || inner.height < FOOT_ROWS + 2 {
        frame.render_widget(Paragraph::new(app.reading.text.clone()), inner);
        return;
    }
    let grid = grid_area(area);
    let plane = &app.plane;
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
    // The crosshair.
    let cx = g.col_of(app.valid_at());
    let cy = g.row_of(app.cursor);
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
            let glyph = match (crossing, app.reading.claim_index) {
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
    let about = if app.valid_free {
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
        Constraint::Length(2),
        Constraint::Length(1),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(lines), top);
    let text = Span::styled(
        format!("{}{about}", app.reading.text),
        theme.base().add_modifier(Modifier::BOLD),
    );
    frame.render_widget(
        Paragraph::new(Line::from(text)).wrap(Wrap { trim: true }),
        reading,
    );
    frame.render_widget(Paragraph::new(Line::from(legend)), key);
}
