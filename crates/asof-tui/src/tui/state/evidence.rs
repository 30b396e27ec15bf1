//! The evidence panel's state: which items match the filter, which is
//! selected, and the list following the cursor (the latest item known then)
//! while the panel does not have focus.

use super::list::FilteredList;
use asof_core::time::Micros;
use asof_store::query::timeline::Timeline;

/// The evidence panel: its items in recorded order, the filter over them, and column widths.
#[derive(Debug, Clone, Default)]
pub struct EvidenceState {
    /// Which items show (the filter) and which is selected.
    pub list: FilteredList,
    /// The widest evidence id, for the ID column.
    pub id_width: usize,
    /// The widest source among the matching items, measured when the filter
    /// changes (never while drawing).
    pub source_width: usize,
    /// The widest cited-by list among them, likewise.
    pub cited_width: usize,
}

impl EvidenceState {
    /// The panel over `timeline`'s evidence, unfiltered.
    pub fn new(timeline: &Timeline) -> EvidenceState {
        let mut state = EvidenceState {
            id_width: (0..timeline.evidence_count())
                .map(|i| usize::from(timeline.evidence_widths(i).id))
                .max()
                .unwrap_or(2),
            ..EvidenceState::default()
        };
        state.list.set_items(state.matching(timeline), 0);
        state.measure(timeline);
        state
    }

    /// Column widths of the matching items (from the store's scrub index:
    /// no item is read).
    fn measure(&mut self, timeline: &Timeline) {
        let widest = |f: &dyn Fn(usize) -> u16| {
            self.list
                .items()
                .iter()
                .map(|&i| usize::from(f(i)))
                .max()
                .unwrap_or(0)
        };
        self.source_width = widest(&|i| timeline.evidence_widths(i).source);
        self.cited_width = widest(&|i| timeline.evidence_widths(i).cited);
    }

    /// Every item, or with a filter the items whose id, kind, source, summary
    /// or citing ids contain it (which reads every item once).
    fn matching(&self, timeline: &Timeline) -> Vec<usize> {
        let needle = self.list.filter.to_lowercase();
        if needle.is_empty() {
            return (0..timeline.evidence_count()).collect();
        }
        timeline.evidence_matching(&needle)
    }

    /// A new filter: the list shows its first match at the top.
    pub fn set_filter(&mut self, timeline: &Timeline, filter: String, rows: usize) {
        self.list.filter = filter;
        let items = self.matching(timeline);
        self.list.refiltered(items);
        self.list.keep_visible(rows);
        self.measure(timeline);
    }

    /// How many items are known (recorded) at `cursor`.
    pub fn known(timeline: &Timeline, cursor: Micros) -> usize {
        timeline.evidence_known(cursor)
    }

    /// Selects the latest item known at `cursor`, the items known then filling
    /// the panel from the top, with the next (not yet recorded) one in sight.
    pub fn follow(&mut self, timeline: &Timeline, cursor: Micros, rows: usize) {
        let known = self
            .list
            .items()
            .partition_point(|&i| timeline.evidence_recorded(i) <= cursor);
        self.list
            .show_at_top_or_fit(known.saturating_sub(1), rows.saturating_sub(1));
        self.list.keep_visible(rows);
    }
}
