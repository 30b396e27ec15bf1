//! What-if routing: a fork asked for, handed to a worker, received, compared,
//! and shown in place of the parent (`c` cycles).

use super::{App, Focus};
use crate::tui::state::evidence::EvidenceState;
use crate::tui::state::list::FilteredList;
use crate::tui::state::popup::Popup;
use crate::tui::whatif::ForkResult;

impl App {
    /// The evidence id a worker should fork without, if the user asked (taken once).
    pub fn take_fork_request(&mut self) -> Option<String> {
        self.whatif.request.take()
    }

    /// A worker finished the fork: keep it and open the compare view.
    pub fn fork_finished(&mut self, result: Result<ForkResult, crate::fork::whatif::WhatIfError>) {
        self.whatif.busy = None;
        match result {
            Ok(fork) => {
                if self.whatif.showing_fork {
                    self.swap_timelines();
                }
                self.whatif.other = Some(fork.timeline.clone());
                self.status = Some(format!(
                    "what-if fork without {} ready: c cycles compare → fork → parent",
                    fork.removed
                ));
                self.whatif.fork = Some(fork);
                self.popup = Some(Popup::Compare(FilteredList::default()));
            }
            Err(e) => self.status = Some(format!("fork failed: {e}")),
        }
        self.prefetch();
    }

    /// The influence ranking arrived from the background.
    pub fn influence_ready(&mut self, ranking: Vec<crate::fork::influence::Influence>) {
        self.whatif.influence_ready(ranking);
    }

    /// Shows the other timeline (parent ↔ fork) in every panel.
    pub(super) fn swap_timelines(&mut self) {
        let Some(mut other) = self.whatif.other.take() else {
            return;
        };
        std::mem::swap(&mut self.timeline, &mut other);
        self.whatif.other = Some(other);
        self.whatif.showing_fork = !self.whatif.showing_fork;
        let filter = std::mem::take(&mut self.evidence.list.filter);
        self.evidence = EvidenceState::new(&self.timeline);
        let rows = self.list_rows().1;
        self.evidence.set_filter(&self.timeline, filter, rows);
        self.cursor_moved();
        self.sync_plane(true);
    }

    pub(super) fn fork(&mut self) {
        let selected = self
            .evidence
            .list
            .selected_item()
            .map(|i| self.timeline.evidence_item(i).evidence.id.clone());
        match (self.whatif.may_fork(), self.focus, selected) {
            (Err(why), _, _) => self.status = Some(why.into()),
            (Ok(()), Focus::Evidence, Some(id)) => {
                self.whatif.busy = Some(format!("replaying without {id}"));
                self.whatif.request = Some(id);
            }
            _ => {
                self.status =
                    Some("select an evidence item (Tab to the evidence panel), then w".into())
            }
        }
    }
}
