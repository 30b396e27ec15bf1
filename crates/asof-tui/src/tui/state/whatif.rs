//! The what-if state: the fork a worker made (and the timeline not on screen),
//! whether the panels show it, background work in progress, and the influence
//! ranking once computed.

use crate::tui::fork_worker::ForkResult;
use asof_core::time;
use asof_store::query::timeline::Timeline;
use std::collections::HashMap;

/// The what-if's state: the fork once made, which store the panels show, and work in progress.
#[derive(Debug, Default)]
pub struct WhatIfState {
    /// The last what-if fork, once a worker has finished it.
    pub fork: Option<ForkResult>,
    /// The evidence item selected before the panels changed store, when the
    /// store now shown lacks it (the fork's removed item): selected again
    /// when the panels change back.
    pub kept_selection: Option<String>,
    /// The timeline not on screen (the parent while the fork is shown, or the fork).
    pub other: Option<Timeline>,
    /// The panels show the fork.
    pub showing_fork: bool,
    /// Background work in progress (spinner text).
    pub busy: Option<String>,
    /// The spinner's frame.
    pub spinner: usize,
    /// What to fork without, for the event loop to hand to a worker.
    pub request: Option<crate::tui::fork_worker::ForkRequest>,
    /// The fork's store and where `s` saves it, for the event loop.
    pub save: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// The report `e` asked for, for the event loop.
    pub export: Option<crate::tui::Report>,
    /// Evidence id → its influence in the parent, once computed in the background.
    pub influence: HashMap<String, String>,
    /// Another run compared with this one (`asof tui A --compare B`).
    pub runs: Option<crate::tui::compare_view::TwoRuns>,
}

impl WhatIfState {
    /// The influence ranking arrived: one short text per evidence item.
    pub fn influence_ready(&mut self, ranking: Vec<asof_store::fork::influence::Influence>) {
        self.influence = ranking
            .into_iter()
            .map(|i| {
                let text = if i.truth_shift_ms != 0 {
                    format!("shift {}", time::format_duration(i.truth_shift_ms * 1000))
                } else if i.divergence_ms != 0 {
                    format!("diverge {}", time::format_duration(i.divergence_ms * 1000))
                } else {
                    "none".to_owned()
                };
                (i.evidence, text)
            })
            .collect();
    }

    /// The influence of an evidence item, and whether it is the parent's while
    /// the fork is shown.
    pub fn influence_of(&self, id: &str) -> Option<(&str, bool)> {
        self.influence
            .get(id)
            .map(|s| (s.as_str(), self.showing_fork))
    }

    /// Whether a fork may start now; the status line's reason when not.
    pub fn may_fork(&self) -> Result<(), &'static str> {
        if self.busy.is_some() {
            Err("a fork is already running")
        } else if self.showing_fork {
            Err("press c to return to the parent before forking again")
        } else {
            Ok(())
        }
    }
}
