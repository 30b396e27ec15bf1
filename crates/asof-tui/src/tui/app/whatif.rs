//! What-if routing: a fork asked for, handed to a worker, received, compared,
//! and shown in place of the parent (`c` cycles).

use super::{App, Focus};
use crate::tui::fork_worker::ForkResult;
use crate::tui::state::evidence::EvidenceState;
use crate::tui::state::list::FilteredList;
use crate::tui::state::popup::Popup;

impl App {
    /// What a worker should fork without, if the user asked (taken once).
    pub fn take_fork_request(&mut self) -> Option<crate::tui::fork_worker::ForkRequest> {
        self.whatif.request.take()
    }

    /// A worker finished the fork: keep it and open the compare view.
    pub fn fork_finished(
        &mut self,
        result: Result<ForkResult, asof_store::fork::whatif::WhatIfError>,
    ) {
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

    /// What the compare view shows: the what-if fork against this run when
    /// there is one, else the other run of `--compare`.
    pub fn compare_view(&self) -> Option<crate::tui::compare_view::View<'_>> {
        use crate::tui::compare_view::View;
        match (&self.whatif.fork, &self.whatif.runs) {
            (Some(fork), _) => Some(View::of_fork(fork)),
            (None, Some(runs)) => Some(View::of_runs(runs)),
            (None, None) => None,
        }
    }

    /// Where the loop should save the fork, if the user asked (taken once).
    pub fn take_save_request(&mut self) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
        self.whatif.save.take()
    }

    /// `s`: save the what-if fork as a store, beside the current directory's
    /// files, under a name that says what it left out.
    pub(super) fn save_fork(&mut self) {
        let Some(fork) = &self.whatif.fork else {
            self.status = Some("no fork to save yet: select evidence and press w".into());
            return;
        };
        let parent = if self.whatif.showing_fork {
            self.whatif
                .other
                .as_ref()
                .map_or("store", |t| t.label.as_str())
        } else {
            self.timeline.label.as_str()
        };
        let to = free_name(parent, &fork.removed);
        self.status = Some(format!("saving the what-if fork to {}…", to.display()));
        self.whatif.save = Some((fork.path.clone(), to));
    }

    /// The report the loop should write, if the user asked (taken once).
    pub fn take_export_request(&mut self) -> Option<crate::tui::Report> {
        self.whatif.export.take()
    }

    /// `e` read a format: the report of what is shown (the fork's store while
    /// the fork is in the panels), to `file` or `STEM.report.EXT` here.
    pub(super) fn export(&mut self, html: bool, file: Option<String>) {
        let fork = self
            .whatif
            .fork
            .as_ref()
            .filter(|_| self.whatif.showing_fork)
            .map(|f| f.path.clone());
        let ext = if html { "html" } else { "md" };
        let to = file.map(std::path::PathBuf::from).unwrap_or_else(|| {
            let stem = stem_of(&self.timeline.label);
            let stem = match &self.whatif.fork {
                Some(f) if self.whatif.showing_fork => format!("{stem}-without-{}", f.removed),
                _ => stem,
            };
            std::path::PathBuf::from(format!("{stem}.report.{ext}"))
        });
        self.status = Some(format!("writing the report to {}…", to.display()));
        let review = (fork.is_none() && self.timeline.review.announce().is_some())
            .then(|| (*self.timeline.review).clone());
        self.whatif.export = Some(crate::tui::Report {
            fork,
            html,
            to,
            review,
        });
    }

    /// A worker finished writing a report.
    pub fn report_written(&mut self, result: Result<std::path::PathBuf, String>) {
        self.status = Some(match result {
            Ok(path) => format!("wrote the report to {}", path.display()),
            Err(e) => format!("could not write the report: {e}"),
        });
    }

    /// A worker finished saving the fork.
    pub fn fork_saved(&mut self, result: Result<std::path::PathBuf, String>) {
        self.status = Some(match result {
            Ok(path) => format!(
                "saved the what-if fork as {} (a store: asof diff, asof export, asof tui read it)",
                path.display()
            ),
            Err(e) => format!("could not save the fork: {e}"),
        });
    }

    /// The influence ranking arrived from the background.
    pub fn influence_ready(&mut self, ranking: Vec<asof_store::fork::influence::Influence>) {
        self.whatif.influence_ready(ranking);
    }

    /// Shows the other timeline (parent ↔ fork) in every panel.
    pub(super) fn swap_timelines(&mut self) {
        let Some(mut other) = self.whatif.other.take() else {
            return;
        };
        // The selected item, by id: the same item stays selected in the other
        // store (its position may differ), so `m` or Enter never lands on
        // another one.
        let selected = self.whatif.kept_selection.take().or_else(|| {
            self.evidence
                .list
                .selected_item()
                .map(|i| self.timeline.evidence_item(i).evidence.id.clone())
        });
        std::mem::swap(&mut self.timeline, &mut other);
        self.whatif.other = Some(other);
        self.review_changed();
        self.whatif.showing_fork = !self.whatif.showing_fork;
        let filter = std::mem::take(&mut self.evidence.list.filter);
        self.evidence = EvidenceState::new(&self.timeline);
        let rows = self.list_rows().1;
        self.evidence.set_filter(&self.timeline, filter, rows);
        self.cursor_moved();
        if let Some(id) = selected {
            let position = self
                .timeline
                .evidence_by_id(&id)
                .and_then(|(i, _)| self.evidence.list.items().iter().position(|&x| x == i));
            match position {
                Some(p) => self.evidence.list.select(p, rows),
                None => {
                    self.status = Some(format!(
                        "{id} is not in the fork (the replay left it out); the selection moved to the latest item known at the cursor"
                    ));
                    self.whatif.kept_selection = Some(id);
                }
            }
        }
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
                self.whatif.request = Some(crate::tui::fork_worker::ForkRequest::without(&id));
            }
            _ => {
                self.status =
                    Some("select an evidence item (Tab to the evidence panel), then w".into())
            }
        }
    }
}

impl App {
    /// `W`: a what-if without every evidence item the review rejects (its
    /// latest verdict on the item), labelled as the review's.
    pub(super) fn fork_review(&mut self) {
        if let Err(why) = self.whatif.may_fork() {
            self.status = Some(why.into());
            return;
        }
        let review = &self.timeline.review;
        let rejected: Vec<asof_store::fork::Rejected> = review
            .rejected_evidence()
            .iter()
            .filter_map(|id| review.evidence_verdict(id))
            .filter_map(|f| {
                Some(asof_store::fork::Rejected {
                    evidence: f.target.id.clone()?,
                    verification: f.id.clone(),
                    since: f.made_at,
                    by: f.reviewer.clone(),
                    note: f.note.clone(),
                })
            })
            .collect();
        if rejected.is_empty() {
            self.status = Some(match review.announce_short() {
                Some(_) => "the review rejects no evidence: W forks without what it rejects".into(),
                None => "no review is read: W forks without what a review rejects (asof tui SOURCE --review FILE)".into(),
            });
            return;
        }
        let named: Vec<String> = review
            .sources
            .iter()
            .filter(|s| !s.missing)
            .map(|s| asof_store::fork::label::review_named(&s.name(), &s.sha256))
            .collect();
        let request = crate::tui::fork_worker::ForkRequest {
            evidence: rejected.iter().map(|r| r.evidence.clone()).collect(),
            rejected,
            review: Some(named.join(" + ")),
        };
        self.whatif.busy = Some(format!(
            "replaying without {}, what the review rejected",
            request.removed()
        ));
        self.whatif.request = Some(request);
    }
}

/// `STEM-without-E15.db` in the current directory, STEM from the parent's
/// label (its file's stem), numbered on when that file exists.
fn free_name(parent: &str, removed: &str) -> std::path::PathBuf {
    let stem = stem_of(parent);
    let name = |n: usize| {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        std::path::PathBuf::from(format!("{stem}-without-{removed}{suffix}.db"))
    };
    (1..)
        .map(name)
        .find(|p| !p.exists())
        .unwrap_or_else(|| name(1))
}

/// The file stem of a label's first word (`payment-outage.yaml (bundled
/// demo)` → `payment-outage`).
fn stem_of(label: &str) -> String {
    let first = label.split_whitespace().next().unwrap_or("store");
    std::path::Path::new(first)
        .file_stem()
        .map_or_else(|| "store".to_owned(), |s| s.to_string_lossy().into_owned())
}
