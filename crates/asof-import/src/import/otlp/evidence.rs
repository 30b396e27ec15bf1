//! Passes 4 and 6a of `import otlp` (design.md §7): the evidence the traces
//! found (trace.rs: every tool result one item — its call id, else its order,
//! never its content —, every user or system message, every medium, memory
//! record and retrieved document, each recorded when a model call first
//! showed it) numbered `T1, T2, …` in recorded order across the run, and
//! written as events, kept whole.

use super::*;

/// The evidence ids (`T1`, `T2` … in recorded order across the run's
/// traces) and the order itself.
pub(super) struct Numbered {
    /// (trace, item) in recorded order.
    pub(super) order: Vec<(usize, usize)>,
    /// Each trace's items' ranks from 0.
    ranks: Vec<Vec<usize>>,
    /// Each trace's items' ids.
    ids: Vec<Vec<String>>,
}

impl Numbered {
    /// Pass 4.
    pub(super) fn of(traces: &[TraceOut]) -> Numbered {
        let mut order: Vec<(usize, usize)> = traces
            .iter()
            .enumerate()
            .flat_map(|(t, out)| (0..out.items.len()).map(move |n| (t, n)))
            .collect();
        order.sort_by_key(|&(t, n)| {
            let e = &traces[t].items[n];
            (e.recorded, e.observed, e.met)
        });
        let mut ranks: Vec<Vec<usize>> = traces.iter().map(|o| vec![0; o.items.len()]).collect();
        let mut ids: Vec<Vec<String>> = traces
            .iter()
            .map(|o| vec![String::new(); o.items.len()])
            .collect();
        for (rank, &(t, n)) in order.iter().enumerate() {
            ranks[t][n] = rank;
            ids[t][n] = format!("T{}", rank + 1);
        }
        Numbered { order, ranks, ids }
    }

    /// The id of item `n` of trace `t`.
    pub(super) fn id(&self, t: usize, n: usize) -> &str {
        &self.ids[t][n]
    }

    /// Its rank from 0: its place in the order.
    pub(super) fn rank(&self, t: usize, n: usize) -> usize {
        self.ranks[t][n]
    }

    /// The item numbered `id`: `T` and its rank from 1, written as
    /// [`Numbered::of`] writes it (no sign, no leading zero).
    pub(super) fn item(&self, id: &str) -> Option<(usize, usize)> {
        let digits = id.strip_prefix('T')?;
        if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let rank: usize = digits.parse().ok()?;
        self.order.get(rank.checked_sub(1)?).copied()
    }
}

/// The dataset's events so far, where each came from, and the agents and
/// topics they name (in first-seen order).
pub(super) struct Built {
    pub(super) events: Vec<RawEvent>,
    pub(super) origins: Vec<Location>,
    /// Each event's recorded instant.
    pub(super) recorded: Vec<Micros>,
    pub(super) agents: Vec<String>,
    pub(super) topics: Vec<String>,
    /// The event id (`B…`, `R…`) each thing said became, by trace and its
    /// index there.
    pub(super) said_ids: Vec<Vec<Option<String>>>,
}

impl Built {
    /// Puts the events in recorded order, evidence before what was said at
    /// one instant, each kind in its own order otherwise (a stable merge of
    /// two runs already in recorded order). So what a trace adds later lands
    /// at the end of the log unless it was recorded earlier: a store that
    /// follows a growing trace rewrites only the events from the first one
    /// that changed (design.md §7, "Live ingestion").
    pub(super) fn in_recorded_order(&mut self) {
        let mut order: Vec<usize> = (0..self.events.len()).collect();
        order.sort_by_key(|&i| self.recorded[i]);
        let mut events: Vec<Option<RawEvent>> = self.events.drain(..).map(Some).collect();
        let mut origins: Vec<Option<Location>> = self.origins.drain(..).map(Some).collect();
        for &i in &order {
            self.events.extend(events[i].take());
            self.origins.extend(origins[i].take());
        }
        self.recorded = order.iter().map(|&i| self.recorded[i]).collect();
    }
}

/// Pass 6a: one evidence event per item, in recorded order.
///
/// Takes each item's content when `content` says nothing reads it after.
pub(super) fn evidence_events(
    traces: &mut [TraceOut],
    numbered: &Numbered,
    content: merge::Content,
    report: &mut ImportReport,
) -> Built {
    let said: usize = traces.iter().map(|o| o.said.len()).sum();
    let all = numbered.order.len() + said;
    let mut events: Vec<RawEvent> = Vec::with_capacity(all);
    let mut origins: Vec<Location> = Vec::with_capacity(all);
    let mut recorded: Vec<Micros> = Vec::with_capacity(all);
    for &(t, n) in &numbered.order {
        let e = &mut traces[t].items[n];
        let mut locator = e.locator.clone();
        if let Some(id) = &e.call_id {
            locator.push_str(&format!(" tool call {id}"));
        }
        let summary: String = if e.content.is_empty() {
            format!("{} result (content not captured in the trace)", e.source)
        } else {
            asof_core::text::first_chars(&e.content, SUMMARY_CHARS).to_owned()
        };
        events.push(RawEvent::Evidence(RawEvidence {
            id: numbered.id(t, n).to_owned(),
            kind: e.kind.into(),
            source: e.source.clone(),
            locator,
            observed_at: RawTime::at(e.observed),
            observed_until: None,
            recorded_at: RawTime::at(e.recorded),
            reliability: None,
            content: crate::import::whole_content(
                match content {
                    merge::Content::Take => std::mem::take(&mut e.content),
                    merge::Content::Keep => e.content.clone(),
                },
                &summary,
                report,
            ),
            summary,
        }));
        origins.push(Location::record("evidence", events.len()));
        recorded.push(e.recorded);
    }
    Built {
        events,
        origins,
        recorded,
        agents: Vec::new(),
        topics: Vec::new(),
        said_ids: Vec::new(),
    }
}
