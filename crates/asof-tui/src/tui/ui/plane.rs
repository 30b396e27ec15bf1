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

use crate::tui::app::{App, Focus};
use crate::tui::plane_model::{Geometry, PlaneShape as Shape};
use crate::tui::theme::claim_glyph;
use asof_core::axis;
use asof_core::model::CloseKind;
use asof_core::text::{cut, fit};
use asof_core::time::{Micros, OPEN};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::tui::layout::{
    self, PLANE_FOOT as FOOT_ROWS, PLANE_LABEL as LABEL_WIDTH, PLANE_LEGEND as LEGEND_ROWS,
};

/// A cell of the grid: glyph, style, and the claim whose glyph it shows.
type Cell = (&'static str, Style, Option<usize>);

/// A cell showing claim `i`.
fn claim_cell(app: &App, i: usize) -> Cell {
    (claim_glyph(i), app.theme.claim(i), Some(i))
}

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

/// Draws the plane panel in `area`.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let block = block(app);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width < LABEL_WIDTH + 4 || inner.height < FOOT_ROWS + 2 {
        too_small(app, frame, inner);
        return;
    }
    let grid = layout::plane_grid(area);
    let g = Geometry::new(&app.plane.plane, grid);
    let mut canvas = Canvas::new(grid.width as usize, grid.height as usize);
    canvas.shapes(app, &g);
    canvas.diagonal(app, &g);
    let off_axis = canvas.evidence(app, &g);
    let (cx, cy) = canvas.crosshair(app, &g);

    let mut lines = canvas.rows(app, cy);
    lines.push(valid_axis(app, canvas.w, cx));
    let legend = legend(app, &canvas, off_axis, inner.width as usize);
    let [top, reading, key] = Layout::vertical([
        Constraint::Length(canvas.h as u16 + 1),
        Constraint::Length(FOOT_ROWS - 1 - LEGEND_ROWS),
        Constraint::Length(LEGEND_ROWS),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(lines), top);
    let about = if app.plane.valid_free {
        ""
    } else {
        " (valid follows the diagonal; v frees it)"
    };
    let text = Span::styled(
        format!("{}{about}", app.plane.reading.text),
        app.theme.base().add_modifier(Modifier::BOLD),
    );
    frame.render_widget(
        Paragraph::new(Line::from(text)).wrap(Wrap { trim: true }),
        reading,
    );
    frame.render_widget(Paragraph::new(legend), key);
}

/// No room to draw the plane: a pointer to the full-screen plane, then the
/// crosshair's reading (never an empty box).
fn too_small(app: &App, frame: &mut Frame, inner: Rect) {
    let theme = &app.theme;
    let lines = vec![
        Line::from(Span::styled(
            cut(
                "the plane needs more room: p shows it full-screen",
                inner.width as usize,
            ),
            theme.warning(),
        )),
        Line::from(Span::styled(
            app.plane.reading.text.clone(),
            theme.base().add_modifier(Modifier::BOLD),
        )),
    ];
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
}

/// The plane's cells, `w` × `h`, row 0 at the top (the latest recorded
/// time), painted in passes: shapes, the diagonal, evidence, the crosshair.
struct Canvas {
    cells: Vec<Cell>,
    w: usize,
    h: usize,
}

/// An empty cell.
const BLANK: Cell = (" ", Style::new(), None);

impl Canvas {
    fn new(w: usize, h: usize) -> Self {
        Canvas {
            cells: vec![BLANK; w * h],
            w,
            h,
        }
    }

    fn at(&mut self, row: usize, col: usize) -> &mut Cell {
        &mut self.cells[row * self.w + col]
    }

    /// Each version's rectangle, filled with its claim's glyph; a closing
    /// edge marked (━ superseded, ✕ retracted), an open end marked (↑ →).
    fn shapes(&mut self, app: &App, g: &Geometry) {
        let theme = &app.theme;
        for s in &app.plane.plane.shapes {
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
                    let mark = if r == r0 && s.to != OPEN && r1 - r0 >= 2 {
                        match s.closed {
                            Some(CloseKind::Retracted) => Some("✕"),
                            _ => Some("━"),
                        }
                    } else if r == r0 && c == c0 && s.to == OPEN && r0 == 0 {
                        Some("↑")
                    } else if c == c1 - 1 && s.valid.to == OPEN && c1 as usize == self.w {
                        Some("→")
                    } else {
                        None
                    };
                    *self.at(r as usize, c as usize) = match mark {
                        Some(glyph) => (glyph, style, None),
                        None => (claim_glyph(s.claim_index), style, Some(s.claim_index)),
                    };
                }
            }
        }
    }

    /// The diagonal valid = recorded.
    fn diagonal(&mut self, app: &App, g: &Geometry) {
        for c in 0..self.w {
            if let Some(r) = g.row_of(g.valid_at(c as u16)) {
                let cell = self.at(r as usize, c);
                let style = if cell.0 == " " {
                    app.theme.muted()
                } else {
                    cell.1
                };
                *cell = ("╱", style, None);
            }
        }
    }

    /// Evidence at (observed, recorded); evidence observed off the valid
    /// axis is marked at its edge (◂ ▸). Whether any was.
    fn evidence(&mut self, app: &App, g: &Geometry) -> bool {
        let plane = &app.plane.plane;
        let mut off_axis = false;
        for p in &plane.points {
            let Some(r) = g.row_of(p.recorded) else {
                continue;
            };
            let (c, glyph) = match g.col_of(p.observed) {
                Some(c) => (c, "✦"),
                None if p.observed < plane.valid_view.0 => (0, "◂"),
                None => (self.w as i64 - 1, "▸"),
            };
            off_axis |= glyph != "✦";
            *self.at(r as usize, c as usize) =
                (glyph, app.theme.late().remove_modifier(Modifier::DIM), None);
        }
        off_axis
    }

    /// The crosshair, and its column and row where they fall on the plane.
    /// Its row and column show what was held at exactly the cursor's
    /// instants (not at their cells' centres), so the cell under the
    /// crosshair and the reading always agree.
    fn crosshair(&mut self, app: &App, g: &Geometry) -> (Option<i64>, Option<i64>) {
        let plane = &app.plane.plane;
        let theme = &app.theme;
        let (w, h) = (self.w, self.h);
        let cx = g.col_of(app.valid_at());
        let cy = g.row_of(app.cursor);
        let held = |valid: Micros, recorded: Micros| -> Option<&Shape> {
            plane.shapes.iter().rev().find(|s| {
                s.valid.from <= valid && valid < s.valid.to && s.from <= recorded && recorded < s.to
            })
        };
        if let Some(cy) = cy {
            for c in 0..w {
                let shape = held(g.valid_at(c as u16), app.cursor);
                *self.at(cy as usize, c) = shape.map_or(BLANK, |s| claim_cell(app, s.claim_index));
            }
        }
        if let Some(cx) = cx {
            for r in 0..h {
                let shape = held(app.valid_at(), g.recorded_at(r as u16));
                *self.at(r, cx as usize) = shape.map_or(BLANK, |s| claim_cell(app, s.claim_index));
            }
            for r in 0..h {
                let cell = self.at(r, cx as usize);
                *cell = if cell.0 == " " || cell.0 == "╱" {
                    ("│", theme.cursor(), None)
                } else {
                    (cell.0, theme.cursor(), cell.2)
                };
            }
        }
        if let Some(cy) = cy {
            for c in 0..w {
                let cell = self.at(cy as usize, c);
                let crossing = Some(c as i64) == cx;
                // At the crossing, the reading's claim (the authority), else nothing.
                let (glyph, claim) = match (crossing, app.plane.reading.claim_index) {
                    (true, Some(i)) => (claim_glyph(i), Some(i)),
                    (true, None) => ("┼", None),
                    _ if cell.0 == " " || cell.0 == "╱" => ("─", None),
                    _ => (cell.0, cell.2),
                };
                *cell = (glyph, theme.cursor(), claim);
            }
            // A valid cursor off the plane (following the diagonal) is marked at the edge.
            if cx.is_none() && w > 0 {
                let edge = if app.valid_at() < plane.valid_view.0 {
                    0
                } else {
                    w - 1
                };
                *self.at(cy as usize, edge) =
                    (if edge == 0 { "◀" } else { "▶" }, theme.cursor(), None);
            }
        }
        (cx, cy)
    }

    /// The cells as lines, each with its recorded-time label on the left,
    /// dated when the axis spans days; the crosshair's row is labelled with
    /// the cursor's own instant.
    fn rows(&self, app: &App, cy: Option<i64>) -> Vec<Line<'static>> {
        let plane = &app.plane.plane;
        let h = self.h;
        let rdated = axis::dated(plane.recorded_view.1 - plane.recorded_view.0);
        let (rstep, rticks) =
            axis::row_ticks(plane.recorded_view.0, plane.recorded_view.1, h as i64);
        let mut left = vec![String::new(); h];
        for (cell, t) in rticks {
            let row = h as i64 - 1 - cell;
            if (0..h as i64).contains(&row) {
                left[row as usize] = axis::tick_label(t, rstep, rdated);
            }
        }
        if let Some(cy) = cy {
            left[cy as usize] = instant_label(app.cursor, LABEL_WIDTH as usize - 1, rdated);
        }
        let mut lines: Vec<Line> = Vec::with_capacity(h + 1);
        for (r, label) in left.iter().enumerate() {
            let style = if Some(r as i64) == cy {
                app.theme.cursor()
            } else {
                app.theme.muted()
            };
            let mut spans = vec![
                Span::styled(fit(label, LABEL_WIDTH as usize - 1), style),
                Span::raw(" "),
            ];
            spans.extend(
                self.cells[r * self.w..(r + 1) * self.w]
                    .iter()
                    .map(|(glyph, style, _)| Span::styled(*glyph, *style)),
            );
            lines.push(Line::from(spans));
        }
        lines
    }
}

/// The valid-time labels under the plane, dated when the axis spans days;
/// the crosshair's column (`cx`) carries the valid cursor's own instant.
fn valid_axis(app: &App, w: usize, cx: Option<i64>) -> Line<'static> {
    let plane = &app.plane.plane;
    let theme = &app.theme;
    let vspan = plane.valid_view.1 - plane.valid_view.0;
    let vdated = axis::dated(vspan);
    let (vstep, vticks) = axis::ticks(plane.valid_view.0, plane.valid_view.1, w as i64, vdated);
    let mut labels = vec![' '; w];
    let mut reserved = None;
    if let Some(cx) = cx {
        let label = instant_label(app.valid_at(), w, vdated);
        let len = label.chars().count() as i64;
        let start = cx.min(w as i64 - len).max(0);
        for (i, ch) in label.chars().enumerate() {
            labels[start as usize + i] = ch;
        }
        reserved = Some((start, start + len));
    }
    let mut free_from = 0i64;
    for (col, t) in vticks {
        let label = axis::tick_label(t, vstep, vdated);
        let len = label.chars().count() as i64;
        let clashes = reserved.is_some_and(|(a, b)| col < b + 1 && a < col + len + 1);
        if col >= free_from && col + len <= w as i64 && !clashes {
            for (i, ch) in label.chars().enumerate() {
                labels[col as usize + i] = ch;
            }
            free_from = col + len + 1;
        }
    }
    let mut axis_spans = vec![Span::raw(" ".repeat(LABEL_WIDTH as usize))];
    match reserved {
        Some((a, b)) => {
            let text: Vec<char> = labels;
            let part = |r: std::ops::Range<i64>| r.map(|i| text[i as usize]).collect::<String>();
            axis_spans.push(Span::styled(part(0..a), theme.muted()));
            axis_spans.push(Span::styled(part(a..b), theme.cursor()));
            axis_spans.push(Span::styled(part(b..w as i64), theme.muted()));
        }
        None => axis_spans.push(Span::styled(
            labels.into_iter().collect::<String>(),
            theme.muted(),
        )),
    }
    Line::from(axis_spans)
}

/// The legend: every claim glyph drawn, with its claim (cut evenly when they
/// do not all fit, then `+N`), then the marks drawn, in `room` columns.
fn legend(app: &App, canvas: &Canvas, off_axis: bool, room: usize) -> Vec<Line<'static>> {
    let plane = &app.plane.plane;
    // The claims whose glyph shows somewhere, in the legend's order.
    let mut shown = vec![false; plane.legend.len()];
    for &(_, _, claim) in &canvas.cells {
        if let Some(slot) =
            claim.and_then(|i| plane.legend.binary_search_by_key(&i, |(j, _)| *j).ok())
        {
            shown[slot] = true;
        }
    }
    let marks: Vec<&str> = [
        ("✦", "✦ evidence"),
        ("◂", "◂▸ off the axis"),
        ("╱", "╱ valid=recorded"),
        ("━", "━ superseded"),
        ("✕", "✕ retracted"),
    ]
    .into_iter()
    .filter(|(g, _)| canvas.cells.iter().any(|(c, _, _)| c == g) || (*g == "◂" && off_axis))
    .map(|(_, text)| text)
    .collect();
    let claims: Vec<(usize, &str)> = plane
        .legend
        .iter()
        .zip(&shown)
        .filter(|(_, shown)| **shown)
        .map(|((i, c), _)| (*i, c.as_str()))
        .collect();
    legend_lines(app, &claims, &marks, room, LEGEND_ROWS as usize)
}

/// An instant as the plane labels the crosshair: the cursor's own time,
/// whole, in `room` columns. When it cannot fit, the date goes only on an
/// axis within one day (`dated` false: the day is the axis's); on a dated
/// axis the label is cut visibly (`03-03 …`) rather than lose its day.
fn instant_label(t: Micros, room: usize, dated: bool) -> String {
    let full = asof_core::time::format_short(t);
    if asof_core::text::width(&full) <= room || dated {
        return cut(&full, room);
    }
    let clock = full
        .split_once(' ')
        .map_or(full.clone(), |(_, c)| c.to_owned());
    cut(&clock, room)
}

/// The legend: `x valid → · y recorded ↑`, each drawn claim's glyph and
/// claim, then the marks drawn, packed into `rows` lines of `room` columns
/// (a line breaks between items, never inside one). Claims are cut evenly
/// (to no fewer than 8 columns) until everything fits; when even that does
/// not fit, the legend is split into pages that `n` turns (`n ▸ 2/3` says
/// which shows), so every glyph drawn is named on one of them.
fn legend_lines<'a>(
    app: &App,
    claims: &[(usize, &str)],
    marks: &[&str],
    room: usize,
    rows: usize,
) -> Vec<Line<'a>> {
    let theme = &app.theme;
    let items = |per_claim: usize| -> Vec<Vec<Span<'a>>> {
        let mut items = vec![vec![Span::styled(
            "x valid → · y recorded ↑",
            theme.muted(),
        )]];
        for &(i, claim) in claims {
            items.push(vec![
                Span::styled(format!("{} ", claim_glyph(i)), theme.claim(i)),
                Span::raw(cut(claim, per_claim)),
            ]);
        }
        for m in marks {
            items.push(vec![Span::styled((*m).to_owned(), theme.muted())]);
        }
        items
    };
    let longest = claims
        .iter()
        .map(|(_, c)| asof_core::text::width(c))
        .max()
        .unwrap_or(0);
    let most = longest.min(room * rows);
    if let Some(per_claim) = asof_core::text::largest_fitting(8.min(most), most, |n| {
        legend_pages(items(n), room, rows, 0).len() == 1
    }) {
        return legend_pages(items(per_claim), room, rows, 0)
            .swap_remove(0)
            .into_iter()
            .map(Line::from)
            .collect();
    }
    // Pages: claims keep more of their words than a one-page squeeze would.
    let per_claim = longest.min(room / 3).max(8);
    let tag = |page: usize, pages: usize| format!("  n ▸ {page}/{pages}");
    let mut pages = legend_pages(items(per_claim), room, rows, 0);
    let reserve = asof_core::text::width(&tag(pages.len(), pages.len())) + 2;
    pages = legend_pages(items(per_claim), room, rows, reserve);
    let count = pages.len();
    let page = app.plane.legend_page % count;
    let mut lines = pages.swap_remove(page);
    if let Some(last) = lines.last_mut() {
        last.push(Span::styled(tag(page + 1, count), theme.muted()));
    }
    lines.into_iter().map(Line::from).collect()
}

/// Packs legend items into pages of `rows` lines of `room` columns, two
/// spaces between items; the last line of every page keeps `reserve`
/// columns free (for the page tag). An item wider than a line gets a line
/// of its own (cut by the terminal), so packing always ends.
fn legend_pages<'a>(
    items: Vec<Vec<Span<'a>>>,
    room: usize,
    rows: usize,
    reserve: usize,
) -> Vec<Vec<Vec<Span<'a>>>> {
    let mut pages: Vec<Vec<Vec<Span<'a>>>> = vec![vec![Vec::new()]];
    let mut used = 0;
    for item in items {
        let w: usize = item.iter().map(Span::width).sum();
        let page = pages.last_mut().expect("one page at least");
        let cap = if page.len() == rows {
            room.saturating_sub(reserve)
        } else {
            room
        };
        if used > 0 && used + 2 + w > cap {
            if page.len() == rows {
                pages.push(vec![Vec::new()]);
            } else {
                page.push(Vec::new());
            }
            used = 0;
        }
        let line = pages
            .last_mut()
            .and_then(|p| p.last_mut())
            .expect("one line at least");
        if used > 0 {
            line.push(Span::raw("  "));
            used += 2;
        }
        used += w;
        line.extend(item);
    }
    pages
}

#[cfg(test)]
mod tests {
    use super::instant_label;

    #[test]
    fn a_crosshair_label_never_loses_its_day_on_a_dated_axis() {
        let t = asof_core::time::parse("2026-03-03T12:10:05Z").unwrap_or_default();
        assert_eq!(instant_label(t, 14, true), "03-03 12:10:05");
        assert_eq!(instant_label(t, 11, true), "03-03 …");
        assert_eq!(instant_label(t, 11, false), "12:10:05");
    }
}
