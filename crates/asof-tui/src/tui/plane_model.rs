//! The plane's model: one topic and agent's versions as
//! rectangles (built when the topic or agent changes, never per frame), the
//! plane's own zoom on both axes, and the crosshair's reading in words.
//!
//! The reading comes from `Timeline::believed(recorded, about valid)` — the
//! same answer as `asof believed --at … --about …`.

use asof_core::model::{CloseKind, Origin};
use asof_core::time::{self, Interval, Micros, OPEN, format_short};
use asof_store::query::Filter;
use asof_store::query::timeline::Timeline;
use ratatui::layout::Rect;
use std::collections::HashMap;

/// One version as a rectangle: `valid` × `[from, to)` in recorded time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaneShape {
    /// The valid time it is about.
    pub valid: Interval,
    /// When it started being held.
    pub from: Micros,
    /// `OPEN` while still held.
    pub to: Micros,
    /// Its claim's index (glyph and colour).
    pub claim_index: usize,
    /// A split piece (drawn dim).
    pub split: bool,
    /// How it ended, if it did.
    pub closed: Option<CloseKind>,
    /// The version's id.
    pub version: u64,
}

/// Evidence drawn as a point at (observed_at, recorded_at).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanePoint {
    /// When what it says happened (valid time).
    pub observed: Micros,
    /// When the agent had it.
    pub recorded: Micros,
    /// The item's id.
    pub id: String,
}

/// One topic's plane for one agent: its rectangles, evidence points, legend and view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plane {
    /// The topic's header position.
    pub topic: usize,
    /// The agent drawn (`None`: the topic has no beliefs).
    pub agent: Option<String>,
    /// One rectangle per version.
    pub shapes: Vec<PlaneShape>,
    /// One point per evidence item the agent's events on the topic cite.
    pub points: Vec<PlanePoint>,
    /// (claim index, claim), by index.
    pub legend: Vec<(usize, String)>,
    /// The valid time shown, `[from, to)`.
    pub valid_view: (Micros, Micros),
    /// The recorded time shown.
    pub recorded_view: (Micros, Micros),
    valid_extent: (Micros, Micros),
    recorded_extent: (Micros, Micros),
}

/// The narrowest span an axis zooms to: 10 ms (an agent run may last seconds).
const MIN_SPAN: i64 = 10_000;

impl Plane {
    /// A plane with nothing on it (before the first topic is chosen).
    pub fn empty() -> Plane {
        Plane {
            topic: usize::MAX,
            agent: None,
            shapes: Vec::new(),
            points: Vec::new(),
            legend: Vec::new(),
            valid_view: (0, MIN_SPAN),
            recorded_view: (0, MIN_SPAN),
            valid_extent: (0, MIN_SPAN),
            recorded_extent: (0, MIN_SPAN),
        }
    }

    /// The plane of one topic as one agent saw it; `agent: None` draws nothing.
    pub fn build(
        timeline: &Timeline,
        claims: &HashMap<String, usize>,
        topic: usize,
        agent: Option<&str>,
    ) -> Plane {
        let mut shapes = Vec::new();
        let versions = match agent {
            Some(a) => timeline.topic_versions(topic, Some(a)),
            None => Vec::new(),
        };
        for b in &versions {
            let v = &b.version;
            shapes.push(PlaneShape {
                valid: v.valid,
                from: v.recorded_at,
                to: v.superseded_at,
                claim_index: claims.get(&*v.claim).copied().unwrap_or(0),
                split: v.origin == Origin::Split,
                closed: v.closed.as_ref().map(|c| c.kind),
                version: v.id,
            });
        }
        // The evidence the pair's events cite, each item once, in recorded order.
        let marks = match agent {
            Some(a) => timeline.topic_marks(topic, Some(a), |_| true),
            None => Vec::new(),
        };
        let mut cited: Vec<(usize, std::sync::Arc<asof_store::query::EvidenceItem>)> = Vec::new();
        for id in marks.iter().flat_map(|m| m.cites.iter()) {
            if !cited.iter().any(|(_, e)| e.evidence.id == *id)
                && let Some(found) = timeline.evidence_by_id(id)
            {
                cited.push(found);
            }
        }
        cited.sort_by_key(|(i, _)| *i);
        let points = cited
            .iter()
            .map(|(_, e)| PlanePoint {
                observed: e.evidence.observed_at,
                recorded: e.evidence.recorded_at,
                id: e.evidence.id.clone(),
            })
            .collect();
        let mut legend: Vec<(usize, String)> =
            claims.iter().map(|(c, &i)| (i, c.clone())).collect();
        legend.sort();
        // Each axis spans what its topic needs. Recorded time: from the first
        // version to the end of the log. Valid time: the valid intervals'
        // starts and finite ends, and the recorded range too (the valid cursor
        // follows the diagonal, so it must be on the plane); evidence observed
        // far outside is marked at the edge, never allowed to squeeze the axis.
        let finite = |t: Micros| (t != OPEN).then_some(t);
        let recorded_lo = shapes.iter().map(|s| s.from).min();
        let recorded_hi = shapes
            .iter()
            .flat_map(|s| [Some(s.from), finite(s.to)])
            .flatten()
            .max();
        let last_event = timeline.span().map(|(_, last)| last);
        let valid_lo = shapes.iter().map(|s| s.valid.from).chain(recorded_lo).min();
        let valid_hi = shapes
            .iter()
            .flat_map(|s| [Some(s.valid.from), finite(s.valid.to)])
            .flatten()
            .chain(
                recorded_hi
                    .max(last_event)
                    .filter(|_| recorded_lo.is_some()),
            )
            .max();
        let fallback = timeline.span().unwrap_or_else(|| {
            let now = time::now();
            (now - 3_600_000_000, now + 3_600_000_000)
        });
        let valid_extent = padded(valid_lo.zip(valid_hi).unwrap_or(fallback), 12, MIN_SPAN);
        let recorded_hi = recorded_hi.max(last_event);
        let (lo, hi) = padded(
            recorded_lo.zip(recorded_hi).unwrap_or(fallback),
            25,
            MIN_SPAN,
        );
        // Headroom above the last event, so beliefs still held reach the top edge.
        let recorded_extent = (lo, hi + (hi - lo) / 5);
        Plane {
            topic,
            agent: agent.map(str::to_owned),
            shapes,
            points,
            legend,
            valid_view: valid_extent,
            recorded_view: recorded_extent,
            valid_extent,
            recorded_extent,
        }
    }

    /// ←/→ in the plane: about a fiftieth of the visible valid range, readable.
    pub fn valid_step(&self) -> i64 {
        asof_core::time::readable_step((self.valid_view.1 - self.valid_view.0) / 50)
    }

    /// ↑/↓ in the plane: about a twentieth of the visible recorded range, readable.
    pub fn recorded_step(&self) -> i64 {
        asof_core::time::readable_step((self.recorded_view.1 - self.recorded_view.0) / 20)
    }

    /// Zooms both axes around the crosshair.
    pub fn zoom(&mut self, factor: f64, valid: Micros, recorded: Micros) {
        let valid = valid.clamp(self.valid_view.0, self.valid_view.1);
        self.valid_view = zoom_range(self.valid_view, self.valid_extent, factor, valid);
        self.recorded_view = zoom_range(self.recorded_view, self.recorded_extent, factor, recorded);
    }

    /// Pans both axes just enough to keep the crosshair in view, whether the
    /// valid cursor is free or follows the diagonal.
    pub fn follow(&mut self, valid: Micros, recorded: Micros) {
        self.valid_view = pan_to(self.valid_view, valid);
        self.recorded_view = pan_to(self.recorded_view, recorded);
    }
}

/// `(lo, hi)` widened by a `1/fraction` margin on each side, at least `min_pad`.
fn padded((lo, hi): (Micros, Micros), fraction: i64, min_pad: i64) -> (Micros, Micros) {
    let (lo, hi) = if hi <= lo {
        (lo - MIN_SPAN, lo + MIN_SPAN)
    } else {
        (lo, hi)
    };
    let pad = ((hi - lo) / fraction).max(min_pad);
    (lo - pad, hi + pad)
}

fn zoom_range(
    view: (Micros, Micros),
    extent: (Micros, Micros),
    factor: f64,
    at: Micros,
) -> (Micros, Micros) {
    let full = (extent.1 - extent.0).max(MIN_SPAN);
    let width =
        (((view.1 - view.0) as f64 * factor) as i64).clamp(MIN_SPAN, full.max(view.1 - view.0));
    let share = if view.1 > view.0 {
        ((at - view.0) as f64 / (view.1 - view.0) as f64).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let from = at - (width as f64 * share) as i64;
    (from, from + width)
}

fn pan_to(view: (Micros, Micros), at: Micros) -> (Micros, Micros) {
    let width = view.1 - view.0;
    if at < view.0 {
        (at - width / 10, at - width / 10 + width)
    } else if at >= view.1 {
        (at + width / 10 - width, at + width / 10)
    } else {
        view
    }
}

/// What the agent believed at the crosshair, in words, with the versions read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reading {
    /// The reading, in words.
    pub text: String,
    /// The versions read (held at the crosshair), by id.
    pub versions: Vec<u64>,
    /// The claim index of the first version read (drawn at the crosshair).
    pub claim_index: Option<usize>,
}

/// What `agent` believed about `topic` at the crosshair (recorded `at`, valid `about`), read
/// from `timeline`.
pub fn reading(
    timeline: &Timeline,
    claims: &HashMap<String, usize>,
    topic: usize,
    agent: Option<&str>,
    at: Micros,
    about: Micros,
) -> Reading {
    let Some(agent) = agent else {
        return Reading {
            text: "no agent holds beliefs on this topic".into(),
            ..Reading::default()
        };
    };
    let topic_id = timeline.header.topics.get(topic).map(|t| t.id.clone());
    let filter = Filter {
        agent: Some(agent.to_owned()),
        topic: topic_id,
    };
    let found = timeline.believed(at, Some(about), &filter);
    let head = format!(
        "At {} {agent} believed about {}",
        format_short(at),
        format_short(about)
    );
    if found.is_empty() {
        return Reading {
            text: format!("{head}: nothing"),
            ..Reading::default()
        };
    }
    let parts: Vec<String> = found
        .iter()
        .map(|b| {
            let v = &b.version;
            let support = if b.supported_by.is_empty() {
                "no evidence".to_owned()
            } else {
                b.supported_by.join(", ")
            };
            format!(
                "{} ({:.2}), since {}, supported by {support}",
                v.claim,
                v.confidence,
                format_short(v.recorded_at)
            )
        })
        .collect();
    Reading {
        text: format!("{head}: {}", parts.join("; ")),
        versions: found.iter().map(|b| b.version.id).collect(),
        claim_index: found
            .first()
            .and_then(|b| claims.get(&*b.version.claim).copied()),
    }
}

/// The (valid, recorded) instants at a screen cell of the plane's `grid`
/// (`layout::plane_grid`), if the cell is on it.
pub fn time_at(plane: &Plane, grid: Rect, x: u16, y: u16) -> Option<(Micros, Micros)> {
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
pub struct Geometry {
    v0: f64,
    vspan: f64,
    r1: f64,
    rspan: f64,
    w: f64,
    h: f64,
}

impl Geometry {
    /// The plane's geometry in `grid` (its cells, without the labels).
    pub fn new(plane: &Plane, grid: Rect) -> Self {
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

    /// The valid instant at the centre of column `col`.
    pub fn valid_at(&self, col: u16) -> Micros {
        (self.v0 + (col as f64 + 0.5) * self.vspan / self.w) as Micros
    }

    /// The recorded instant at the centre of row `row`.
    pub fn recorded_at(&self, row: u16) -> Micros {
        (self.r1 - (row as f64 + 0.5) * self.rspan / self.h) as Micros
    }

    /// Columns whose centre lies in `[from, to)`.
    pub fn cols(&self, from: Micros, to: Micros) -> (i64, i64) {
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
    pub fn rows(&self, from: Micros, to: Micros) -> (i64, i64) {
        let y = |t: Micros| (self.r1 - t as f64) * self.h / self.rspan - 0.5;
        let lo = if to == OPEN {
            0.0
        } else {
            (y(to).floor() + 1.0).max(0.0)
        };
        let hi = (y(from).floor() + 1.0).min(self.h);
        (lo as i64, hi as i64)
    }

    /// The column holding valid instant `t`, if it is on the plane.
    pub fn col_of(&self, t: Micros) -> Option<i64> {
        let c = ((t as f64 - self.v0) * self.w / self.vspan).floor();
        (c >= 0.0 && c < self.w).then_some(c as i64)
    }

    /// The row holding recorded instant `t`, if it is on the plane.
    pub fn row_of(&self, t: Micros) -> Option<i64> {
        let r = ((self.r1 - t as f64) * self.h / self.rspan).floor();
        (r >= 0.0 && r < self.h).then_some(r as i64)
    }
}
