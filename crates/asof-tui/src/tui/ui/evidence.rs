//! The evidence panel: every item with kind, source, observed and recorded times,
//! lag (late items marked `!` and in the late style), what cites it, and its
//! verification state at the cursor (design.md §4); items recorded after the cursor
//! are dimmed.
//!
//! ```text
//! ┌ Evidence · 33 items · 14 known at the cursor ─────────────────────────┐
//! │ID   KIND    SOURCE     OBSERVED     RECORDED     LAG       CITED BY    VERIFIED  │
//! │E14  log     loki       03-02 09:05  03-03 10:10  !1d 1h    B18,B21,B24 candidate │
//! └───────────────────────────────────────────────────────────────────────┘
//! ```
//! Columns are as wide as their widest value (within bounds); the summary takes
//! the rest. INFLUENCE, once computed, is the parent's: while a fork is shown
//! the column says so.

use crate::tui::app::{App, Focus};
use crate::tui::layout;
use crate::tui::state::evidence::EvidenceState;
use asof_core::model::VerifyState;
use asof_core::text::fit;
use asof_core::time::{self, format_short};
use asof_store::query::{EvidenceItem, LATE};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::sync::Arc;

/// The fewest columns the SUMMARY gets while an optional column can make room.
pub const SUMMARY_MIN: usize = 30;
/// The fewest columns SUMMARY gets on a narrow screen.
pub const SUMMARY_NARROW: usize = 20;

/// Draws the evidence panel in `area`: a header line, then the items on screen.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let state = &app.evidence;
    let focused = app.focus == Focus::Evidence;
    let block = title(app, focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let rows_area = layout::evidence_rows(area);
    let width = inner.width as usize;
    if width == 0 || inner.height == 0 {
        return;
    }
    // The rows on screen were read when the list last moved (App::prefetch);
    // drawing never reads the store.
    let shown: Vec<(usize, Arc<EvidenceItem>)> = state
        .list
        .window(rows_area.height as usize)
        .filter_map(|(pos, i)| Some((pos, app.timeline.cached_evidence(i)?)))
        .collect();
    let cols = columns(app, &shown, width);
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
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(
            header,
            theme.muted().add_modifier(Modifier::BOLD),
        ))),
        Rect { height: 1, ..inner },
    );
    let mut lines = Vec::new();
    for (pos, item) in &shown {
        let mut line = evidence_line(app, item, &cols, width);
        if focused && *pos == state.list.selected() {
            crate::tui::text::reverse(&mut line);
        }
        lines.push(line);
    }
    if state.list.is_empty() {
        let why = match state.list.is_filtered() {
            true => "nothing matches the filter",
            false => "no evidence recorded yet",
        };
        lines.push(Line::from(Span::styled(why, theme.muted())));
    }
    frame.render_widget(Paragraph::new(lines), rows_area);
}

/// The panel's frame, titled with how many items the log holds, how many
/// were known at the cursor, and the filter and its matches.
fn title(app: &App, focused: bool) -> ratatui::widgets::Block<'static> {
    let state = &app.evidence;
    let known = EvidenceState::known(&app.timeline, app.cursor);
    let filter = if state.list.is_filtered() {
        format!(
            " · filter “{}”: {}",
            state.list.filter,
            asof_core::text::count(state.list.matches(), "match", "matches")
        )
    } else {
        String::new()
    };
    super::panel(
        app,
        focused,
        format!(
            "Evidence · {} items · {known} known at the cursor{filter}",
            app.timeline.evidence_count()
        ),
    )
}

/// The columns shown in `width`, each with its width (SUMMARY last, taking
/// the rest: width 0). Every column but SUMMARY is as wide as the rows on
/// screen (`shown`) need, within its bounds; then, while SUMMARY would get
/// fewer than SUMMARY_MIN columns, the least needed go.
fn columns(
    app: &App,
    shown: &[(usize, Arc<EvidenceItem>)],
    width: usize,
) -> Vec<(&'static str, usize)> {
    let state = &app.evidence;
    let id_w = state.id_width.clamp(2, 24);
    let source_w = state.source_width.clamp(6, 16);
    let wide = width >= 100;
    // Times as wide as the rows on screen need (seconds only when they have them).
    let time_w = |f: &dyn Fn(&EvidenceItem) -> i64| {
        shown
            .iter()
            .map(|(_, item)| format_short(f(item)).chars().count())
            .max()
            .unwrap_or(11)
            .clamp(11, 23)
    };
    // The observed interval, both ends when it lasted (LAG runs from its end).
    let observed_w = shown
        .iter()
        .map(|(_, item)| {
            let e = &item.evidence;
            time::format_observed(e.observed_at, e.observed_until, true)
                .chars()
                .count()
        })
        .max()
        .unwrap_or(11)
        .clamp(11, 23);
    let recorded_w = time_w(&|item| item.evidence.recorded_at);
    let verified_w = shown
        .iter()
        .map(|(_, item)| {
            let state = app.timeline.ledger.state(&item.evidence.id, app.cursor);
            asof_core::text::width(state.as_str())
        })
        .max()
        .unwrap_or(0)
        .max("VERIFIED".len());
    // A reviewer's verdict has its own column and glyph (docs/review.md),
    // beside VERIFIED (what the agent's log said), never in it.
    let reviewed = !app.review_shown.evidence.is_empty();
    let review_w = shown
        .iter()
        .map(|(_, item)| asof_core::text::width(review_cell(app, &item.evidence.id)))
        .max()
        .unwrap_or(0)
        .max("REVIEW".len());
    let mut cols: Vec<(&str, usize)> = vec![
        ("ID", id_w),
        ("KIND", 7),
        ("SOURCE", source_w),
        ("OBSERVED", observed_w),
        ("RECORDED", recorded_w),
        ("LAG", 9),
        ("CITED BY", cited_width(app, width)),
        // The states at the cursor, as wide as the rows on screen need
        // ("claim-supported" is the longest): a verdict is never cut.
        ("VERIFIED", verified_w),
    ];
    if reviewed {
        cols.push(("REVIEW", review_w));
    }
    if !app.whatif.influence.is_empty() {
        let influence_title = if app.whatif.showing_fork {
            "INFLUENCE (parent)"
        } else {
            "INFLUENCE"
        };
        cols.push((influence_title, if wide { 18 } else { 15 }));
    }
    let taken = |cols: &[(&str, usize)]| cols.iter().map(|(_, w)| w + 1).sum::<usize>();
    // The kind says least (the source, a trace's tool name, says more; the
    // observed interval says how late the item is), so it goes first.
    for optional in ["KIND", "OBSERVED", "SOURCE"] {
        if width >= taken(&cols) + SUMMARY_MIN {
            break;
        }
        cols.retain(|(name, _)| *name != optional);
    }
    // The kind comes back when the others it made way for went anyway.
    if !cols.iter().any(|(name, _)| *name == "KIND") && width >= taken(&cols) + 8 + SUMMARY_MIN {
        cols.insert(1, ("KIND", 7));
    }
    // On a narrow screen (80 columns with INFLUENCE shown), KIND and then LAG
    // go too while SUMMARY would get fewer than SUMMARY_NARROW columns: the
    // details popup (Enter) shows both.
    for optional in ["KIND", "LAG"] {
        if width >= taken(&cols) + SUMMARY_NARROW {
            break;
        }
        cols.retain(|(name, _)| *name != optional);
    }
    cols.push(("SUMMARY", 0));
    cols
}

/// CITED BY's width in a panel `width` columns wide.
fn cited_width(app: &App, width: usize) -> usize {
    app.evidence
        .cited_width
        .clamp(8, if width >= 150 { 20 } else { 12 })
}

/// A reviewer's verdict on the item `id`, as its REVIEW cell shows it.
fn review_cell<'a>(app: &'a App, id: &str) -> &'a str {
    app.review_shown.evidence.get(id).map_or("", String::as_str)
}

/// One item's row in `cols`: dimmed when recorded after the cursor, its lag
/// marked when late, its citations and verdict as known at the cursor.
fn evidence_line(
    app: &App,
    item: &EvidenceItem,
    cols: &[(&str, usize)],
    width: usize,
) -> Line<'static> {
    let theme = &app.theme;
    let e = &item.evidence;
    let future = e.recorded_at > app.cursor;
    let late = e.lag() >= LATE;
    let base = if future { theme.future() } else { theme.base() };
    let lag = format!(
        "{}{}",
        if late { "!" } else { "" },
        time::format_duration(e.lag())
    );
    // Only the citations recorded by the cursor: the rest were not known then.
    let cited = asof_core::text::id_list(item.cited_by_at(app.cursor), cited_width(app, width));
    let (observed, recorded) = (
        time::format_observed(e.observed_at, e.observed_until, true),
        format_short(e.recorded_at),
    );
    let verdict = app.timeline.ledger.state(&e.id, app.cursor);
    let verified_style = match verdict {
        VerifyState::Rejected | VerifyState::Conflicted | VerifyState::Stale => theme.warning(),
        VerifyState::DirectRead | VerifyState::ClaimSupported => theme.good(),
        VerifyState::Candidate => theme.muted(),
    };
    let verified_style = if future { base } else { verified_style };
    let summary = e.summary_shown();
    let reviewed_cell = review_cell(app, &e.id);
    let mut spans = Vec::new();
    for (name, w) in cols {
        let (text, style) = match *name {
            "ID" => (e.id.as_str(), base.add_modifier(Modifier::BOLD)),
            "KIND" => (e.kind.as_str(), base),
            "SOURCE" => (e.source.as_str(), base),
            "OBSERVED" => (observed.as_str(), base),
            "RECORDED" => (recorded.as_str(), base),
            "LAG" => (lag.as_str(), if late { theme.late() } else { base }),
            "CITED BY" => (cited.as_str(), base),
            "VERIFIED" => (verdict.as_str(), verified_style),
            "REVIEW" => (reviewed_cell, theme.key()),
            "SUMMARY" => (summary.as_ref(), base),
            _ => {
                let text = app.whatif.influence.get(&e.id).map_or("", String::as_str);
                (
                    text,
                    if text.starts_with("shift -") {
                        theme.warning()
                    } else {
                        base
                    },
                )
            }
        };
        let used: usize = spans.iter().map(Span::width).sum();
        spans.push(Span::styled(
            if *w == 0 {
                // The summary takes the rest, cut visibly, on one line.
                asof_core::text::cut(text, width.saturating_sub(used))
            } else {
                fit(text, *w) + " "
            },
            style,
        ));
    }
    Line::from(spans)
}
