//! The beliefs panel: per topic, what each agent holds at the recorded cursor.
//!
//! ```text
//! ┌ ▶ Beliefs held at 03-03 12:10 ──────────────────────────────────────────┐
//! │root-cause — What is causing checkout payment failures?  ⚠ agents disagree│
//! │  ■ triage Bad deploy of checkout-service v4.12  0.70  [03-02 09:05, ∞) … │
//! │  ● triage Expired TLS certificate on the card-… 0.50  [03-02 09:05, ∞) ✗…│
//! │▸ triage: Expired TLS certificate on the card-network gateway · 0.50 ·    │
//! │  valid [03-02 09:05, ∞) · since 03-03 10:30 · superseded by B19          │
//! └──────────────────────────────────────────────────────────────────────────┘
//! ```
//! The claim takes the width there is; the valid interval is shown whenever a
//! topic has more than one row (it tells "held at once" from "contradicts");
//! the selected row is repeated whole, wrapped, under the list. Only the rows on
//! screen are drawn; their text was formatted when the cursor moved.

use crate::tui::app::{App, Focus};
use crate::tui::layout;
use crate::tui::state::beliefs::{
    BeliefCells, BeliefRow, BeliefRowKind, agent_of, claim_of, fit_conflict,
};
use crate::tui::theme::claim_glyph;
use asof_core::engine::quality::Freshness;
use asof_core::text::{cut, fit, id_list, wrap};
use asof_core::time;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The claim's columns when a note needs the rest of the row.
const CLAIM_ROOM: usize = 14;
/// The most the evidence column asks of a row's width before the claim gets
/// what is left: a few whole ids then `+N` (`T9,T10 +4`).
const EVIDENCE_ROOM: usize = 10;

/// Draws the beliefs panel in `area`: the rows held at the cursor, a glyph legend on its border,
/// and the selected row's detail; `plane_elsewhere` says in the title where the plane went.
pub fn render(app: &App, frame: &mut Frame, area: Rect, plane_elsewhere: bool) {
    let theme = &app.theme;
    let state = &app.beliefs;
    let focused = app.focus == Focus::Beliefs;
    frame.render_widget(title(app, focused, plane_elsewhere), area);
    let rows_area = layout::belief_rows(area);
    if rows_area.width == 0 || rows_area.height == 0 {
        return;
    }
    let columns = Columns::of(app, rows_area);
    let mut lines = Vec::with_capacity(rows_area.height as usize);
    for (n, (pos, i)) in state.list.window(rows_area.height as usize).enumerate() {
        let row = &state.rows[i];
        let blank = BeliefCells::default();
        let cells = state.cells.get(n).unwrap_or(&blank);
        let mut line = match &row.kind {
            BeliefRowKind::Topic { conflict } => topic_line(app, row, *conflict, columns.width),
            BeliefRowKind::Empty => Line::from(Span::styled(
                format!("    {}", claim_of(&app.timeline, row)),
                theme.muted(),
            )),
            BeliefRowKind::Held | BeliefRowKind::ClosedNow => {
                belief_line(app, row, cells, &columns)
            }
        };
        if focused && pos == state.list.selected() {
            line = line.style(Style::new().add_modifier(Modifier::REVERSED));
            crate::tui::text::reverse(&mut line);
        }
        lines.push(line);
    }
    if state.list.is_empty() {
        let why = match state.list.is_filtered() {
            true => "  nothing matches the filter",
            // A store with no topic yet (a receiver's before its first belief).
            false => "  no topics yet: no belief is recorded",
        };
        lines.push(Line::from(Span::styled(why, theme.muted())));
    }
    let legend = glyph_legend(&lines);
    frame.render_widget(Paragraph::new(lines), rows_area);
    // The glyphs the rows use, named on the panel's bottom border.
    if !legend.is_empty() && area.height > 2 && area.width > 4 {
        let text = format!(" {legend} ");
        let room = usize::from(area.width - 4);
        if asof_core::text::width(&text) <= room {
            let border = Rect::new(area.x + 2, area.bottom() - 1, area.width - 4, 1);
            frame.render_widget(Paragraph::new(Span::styled(text, theme.muted())), border);
        }
    }
    if let Some(detail) = layout::belief_detail(area) {
        render_detail(app, frame, detail);
    }
}

/// The panel's frame, titled with the cursor's instant, the filter and its
/// matches, and where the plane is when it is not beside the rows.
fn title(app: &App, focused: bool, plane_elsewhere: bool) -> ratatui::widgets::Block<'static> {
    let state = &app.beliefs;
    let filter = if state.list.is_filtered() {
        format!(
            " · filter “{}”: {}",
            state.list.filter,
            asof_core::text::count(state.matches(), "match", "matches")
        )
    } else {
        String::new()
    };
    let plane_note = if plane_elsewhere {
        " · plane: Tab to it, or p"
    } else {
        ""
    };
    super::panel(
        app,
        focused,
        format!(
            "Beliefs held at {}{filter}{plane_note}",
            time::format_short(app.cursor)
        ),
    )
}

/// The widths of a belief row's columns: glyph, agent (as wide as the
/// widest, up to 20), claim (the rest), confidence, the valid interval when
/// the width allows or a topic needs it, `since` when there is room, then the
/// row's note or its evidence.
struct Columns {
    width: usize,
    /// One agent: the column would say the same on every row (the plane's
    /// title and the detail line name it).
    one_agent: bool,
    agent_w: usize,
    claim_w: usize,
    conf_w: usize,
    /// Whether any row is marked right (✓).
    marks: bool,
    show_valid: bool,
    valid_w: usize,
    show_since: bool,
}

impl Columns {
    fn of(app: &App, rows_area: Rect) -> Columns {
        let state = &app.beliefs;
        let width = rows_area.width as usize;
        let one_agent = app.timeline.header.agents.len() == 1;
        let agent_w = if one_agent {
            0
        } else {
            state.agent_width.clamp(5, 20)
        };
        let longest = state.claim_width.max(10);
        let marks = state.any_right;
        // Confidence: "0.70", or "0.70→0.21 ⌛" once decay and staleness show.
        let conf_w = state
            .cells
            .iter()
            .map(|c| asof_core::text::width(&c.confidence))
            .max()
            .unwrap_or(4)
            .max(4);
        let fixed =
            2 + 2 + agent_w + usize::from(!one_agent) + 2 + conf_w + if marks { 2 } else { 0 };
        let widest_valid = state
            .cells
            .iter()
            .map(|c| asof_core::text::width(&c.valid))
            .max()
            .unwrap_or(0);
        let show_valid = state.any_several || width >= fixed + 16 + widest_valid + 2 + 12;
        let valid_w = if show_valid {
            widest_valid.max(8) + 2
        } else {
            0
        };
        // The claim first (up to its longest), then `since`, then the note or
        // evidence in what is left; the selected row is repeated whole below.
        let avail = width.saturating_sub(fixed + valid_w);
        // The note (or evidence) column of belief rows (a heading's conflict
        // has its own line), in the short forms ("✗ by B19") the claims make room for.
        let brief = state
            .list
            .window(rows_area.height as usize)
            .zip(&state.cells)
            .filter(|((_, i), _)| state.rows[*i].belief.is_some())
            .map(|((_, i), c)| {
                let r = &state.rows[i];
                // Evidence lists end in `+N` when cut, so they yield to the
                // claim beyond the first few ids (EVIDENCE_ROOM).
                2 + if r.note.is_empty() {
                    id_list_width(&c.evidence).min(EVIDENCE_ROOM)
                } else {
                    asof_core::text::width(&r.note.short)
                }
            })
            .max()
            .unwrap_or(4);
        // The claims first, leaving the notes room for their short forms (a
        // note is shown whole where its row leaves room for it); never fewer than
        // CLAIM_ROOM columns for the claim.
        let claim_w = longest
            .min(avail.saturating_sub(brief).max(CLAIM_ROOM))
            .min(avail);
        let note_w = avail.saturating_sub(claim_w);
        Columns {
            width,
            one_agent,
            agent_w,
            claim_w,
            conf_w,
            marks,
            show_valid,
            valid_w,
            show_since: avail >= claim_w + 13 + note_w,
        }
    }
}

/// A topic's heading: its id whole, then (when agents differ) every agent's
/// claim, then the question and resolution in what is left.
fn topic_line(app: &App, row: &BeliefRow, conflict: bool, width: usize) -> Line<'static> {
    let theme = &app.theme;
    let topic = app.timeline.header.topics.get(row.topic);
    let id = topic.map_or("", |t| t.id.as_str());
    let mut spans = vec![Span::styled(id.to_owned(), theme.title())];
    let mut room = width.saturating_sub(asof_core::text::width(id));
    if conflict {
        let note = fit_conflict(&row.conflict, room.saturating_sub(2));
        room = room.saturating_sub(2 + asof_core::text::width(&note));
        spans.push(Span::styled(format!("  {note}"), theme.warning()));
    }
    let mut rest = format!(" — {}", topic.map_or("", |t| t.question.as_str()));
    if let Some(truth) = topic.and_then(|t| t.resolution.as_deref()) {
        rest.push_str(&format!("  · resolution: {truth}"));
    }
    spans.push(Span::styled(cut(&rest, room), theme.base()));
    Line::from(spans)
}

/// A held (or just closed) belief's row in `columns`.
fn belief_line(
    app: &App,
    row: &BeliefRow,
    cells: &BeliefCells,
    columns: &Columns,
) -> Line<'static> {
    let theme = &app.theme;
    let closed = row.kind == BeliefRowKind::ClosedNow;
    // Stale (design.md §4): dimmed, and ⌛ beside the confidence.
    let stale = row.quality.is_some_and(|q| q.freshness == Freshness::Stale);
    let dim = |s: Style| {
        if stale {
            s.add_modifier(Modifier::DIM)
        } else {
            s
        }
    };
    let text_style = dim(if closed {
        theme.superseded()
    } else {
        theme.base()
    });
    let agent_w = columns.agent_w;
    let mut spans = vec![
        Span::styled(if stale { "⌛" } else { "  " }, theme.warning()),
        Span::styled(
            format!("{} ", claim_glyph(row.claim_index)),
            theme.claim(row.claim_index),
        ),
        Span::styled(
            if columns.one_agent {
                String::new()
            } else if cells.agent_assumed {
                fit(&format!("{}*", agent_of(&app.timeline, row)), agent_w) + " "
            } else {
                fit(agent_of(&app.timeline, row), agent_w) + " "
            },
            theme.muted(),
        ),
        Span::styled(
            fit(claim_of(&app.timeline, row), columns.claim_w),
            if closed {
                text_style
            } else {
                dim(theme.claim(row.claim_index))
            },
        ),
        Span::styled(
            format!("  {}", fit(&cells.confidence, columns.conf_w)),
            text_style,
        ),
    ];
    if columns.marks {
        spans.push(Span::styled(
            if row.right { " ✓" } else { "  " },
            theme.good(),
        ));
    }
    if columns.show_valid {
        spans.push(Span::styled(
            format!("  {}", fit(&cells.valid, columns.valid_w - 2)),
            text_style,
        ));
    }
    if columns.show_since {
        spans.push(Span::styled(
            format!("  {}", fit(&cells.since, 11)),
            theme.muted(),
        ));
    }
    // The last cell takes what the row leaves: whole ids then
    // `+N`, a note cut before any id it cannot show whole.
    let used: usize = spans.iter().map(|s| s.width()).sum();
    let room = columns.width.saturating_sub(used + 2);
    if row.note.is_empty() {
        let mark = if cells.evidence_assumed { "*" } else { "" };
        spans.push(Span::styled(
            format!(
                "  {}{mark}",
                id_list(&cells.evidence, room.saturating_sub(mark.len()))
            ),
            theme.muted(),
        ));
    } else {
        let style = if closed || row.note.warns {
            theme.warning()
        } else {
            theme.good()
        };
        let note = if asof_core::text::width(&row.note.text) > room {
            &row.note.short
        } else {
            &row.note.text
        };
        spans.push(Span::styled(
            format!("  {}", cut(note, room)),
            style.remove_modifier(Modifier::CROSSED_OUT),
        ));
    }
    Line::from(spans)
}

/// What each note and mark glyph on the rows means, for those the rows
/// show: `⌛ stale · ✗ superseded by · ↻ reconfirmed by`.
fn glyph_legend(lines: &[Line]) -> String {
    const GLYPHS: [(char, &str); 7] = [
        ('⌛', "stale"),
        ('✓', "the resolved answer"),
        ('✗', "superseded by"),
        ('✕', "retracted by"),
        ('✂', "clipped by"),
        ('↻', "reconfirmed by"),
        ('*', "assumed by the importer"),
    ];
    let shown: String = lines
        .iter()
        .flat_map(|l| l.spans.iter().map(|s| s.content.as_ref()))
        .collect();
    GLYPHS
        .iter()
        .filter(|(g, _)| shown.contains(*g))
        .map(|(g, what)| format!("{g} {what}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The width of ids joined by commas (`-` for none), without joining them.
fn id_list_width(ids: &[String]) -> usize {
    let commas = ids.len().saturating_sub(1);
    (ids.iter()
        .map(|id| asof_core::text::width(id))
        .sum::<usize>()
        + commas)
        .max(1)
}

/// The selected row whole: agent, the full claim, confidence, valid interval,
/// since, how it ended or what supports it; wrapped over the detail rows.
fn render_detail(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let Some(row) = app.beliefs.selected() else {
        return;
    };
    // The selected row is on screen, so its version was read when the rows
    // were formatted; drawing never reads the store.
    let text = match row.belief.and_then(|i| app.timeline.cached_belief(i)) {
        Some(b) => {
            let v = &b.version;
            // Held since its origin assertion; a split piece's row was
            // recorded later, and says when.
            let since = row.since.unwrap_or(v.recorded_at);
            let mut text = format!(
                "▸ {}: {} · {:.2} · valid {} · since {}",
                v.agent,
                v.claim,
                v.confidence,
                time::format_interval_short(v.valid),
                time::format_short(since)
            );
            if since != v.recorded_at {
                text.push_str(&format!(
                    " (this row recorded {}, a split)",
                    time::format_short(v.recorded_at)
                ));
            }
            if let Some(q) = &row.quality {
                text.push_str(&format!(
                    " · effective {:.2} · {} (last support {})",
                    q.effective_confidence,
                    match q.freshness {
                        Freshness::Stale => "⌛ stale",
                        other => other.as_str(),
                    },
                    time::format_short(q.last_support)
                ));
            }
            if !row.note.is_empty() {
                text.push_str(&format!(" · {}", row.note.text));
            } else if !b.supported_by.is_empty() {
                text.push_str(&format!(" · on {}", b.supported_by.join(",")));
            }
            let assumed = app.timeline.ledger.assumed(&v.assertion);
            if !assumed.is_empty() {
                let fields: Vec<&str> = assumed.iter().map(|a| a.as_str()).collect();
                text.push_str(&format!(
                    " · assumed by the importer: {}",
                    fields.join(", ")
                ));
            }
            text
        }
        None if row.belief.is_some() => String::new(),
        None => {
            let t = &app.timeline.header.topics[row.topic];
            format!("▸ {} — {} (Enter: its history)", t.id, t.question)
        }
    };
    let lines: Vec<Line> = wrap(&text, area.width as usize)
        .into_iter()
        .take(area.height as usize)
        .map(|l| Line::from(Span::styled(l, theme.base().add_modifier(Modifier::BOLD))))
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}
