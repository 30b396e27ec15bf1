//! Review findings (docs/review.md): `m` on the evidence list or the
//! beliefs panel asks for a verdict and a note and names its target; the
//! finding — made now, about the cursor's instant — is appended to the
//! review file and shown beside the agent's record, never in it. The loaded
//! store is never written.

use super::{App, Focus};
use crate::tui::state::popup::{MarkOn, Popup, Prompt, PromptKind};
use asof_core::review::{self, Finding, Place, Target, Verdict};
use asof_core::time;
use std::sync::Arc;

impl App {
    /// Formats the review of the timeline shown again (it was read, a
    /// finding was made, or the panels show another timeline).
    pub(super) fn review_changed(&mut self) {
        self.review_shown = ReviewShown::of(&self.timeline.review);
    }

    /// `m`: the finding prompt for the selected evidence item or belief.
    pub(super) fn ask_mark(&mut self) {
        if self.review.is_none() {
            self.status =
                Some("a finding needs a review file (asof tui SOURCE --review FILE)".into());
            return;
        }
        let on = match self.focus {
            Focus::Evidence => self.evidence.list.selected_item().map(MarkOn::Evidence),
            Focus::Beliefs => self
                .beliefs
                .selected()
                .and_then(|row| row.belief)
                .map(MarkOn::Belief),
            _ => None,
        };
        let Some(on) = on else {
            self.status =
                Some("select an evidence item or a belief first (Tab to its list), then m".into());
            return;
        };
        let (target, recorded, what) = self.target_of(on);
        if recorded > self.cursor {
            self.status = Some(format!(
                "{} is recorded at {}, after the cursor: a finding is about an instant it was known at",
                target.label(),
                time::format_short(recorded)
            ));
            return;
        }
        let subject = format!(
            "Finding on {what} about {}, as:",
            time::format_short(self.cursor)
        );
        self.popup = Some(Popup::Prompt(Prompt {
            subject: Some(subject),
            ..Prompt::new(PromptKind::Mark(on), String::new())
        }));
    }

    /// What `on` names: its target, when it was recorded, and a phrase for
    /// the prompt ("E18 (metric, grafana)", "B19: triage · root-cause “…”").
    fn target_of(&self, on: MarkOn) -> (Target, time::Micros, String) {
        match on {
            MarkOn::Evidence(i) => {
                let e = &self.timeline.evidence_item(i).evidence;
                (
                    Target::evidence(&e.id),
                    e.recorded_at,
                    format!("{} ({}, {})", e.id, e.kind.as_str(), e.source),
                )
            }
            MarkOn::Belief(i) => {
                let b = self.timeline.belief(i);
                let v = &b.version;
                (
                    Target::version(&v.assertion, &v.agent, &v.topic),
                    v.recorded_at.min(self.timeline.held_since(&b)),
                    format!("{}: {} · {} “{}”", v.assertion, v.agent, v.topic, v.claim),
                )
            }
        }
    }

    /// Makes a finding about `on`, at the cursor: appended to the review
    /// file (synced), then shown. Errors leave everything as it was.
    pub(super) fn mark(
        &mut self,
        on: MarkOn,
        verdict: Verdict,
        note: Option<String>,
    ) -> Result<(), String> {
        let Some(path) = self.review.clone() else {
            return Err("no review file".into());
        };
        let (target, _, _) = self.target_of(on);
        let finding = Finding {
            id: self.timeline.review.next_id(),
            target,
            verdict,
            note,
            reviewer: self
                .reviewer
                .clone()
                .unwrap_or_else(review::reviewer_from_env),
            made_at: time::now(),
            about: self.cursor,
        };
        review::append(&path, &finding)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let sha256 = std::fs::File::open(&path)
            .and_then(asof_store::fork::sha256_of)
            .unwrap_or_default();
        let mut updated = (*self.timeline.review).clone();
        let place = Place::File(path.clone());
        match updated.sources.iter_mut().find(|s| s.place == place) {
            Some(s) => {
                s.findings += 1;
                s.sha256 = sha256;
                s.missing = false;
            }
            None => updated.sources.push(review::Source {
                place,
                sha256,
                findings: 1,
                missing: false,
            }),
        }
        updated.findings.push(finding.clone());
        self.timeline.review = Arc::new(updated);
        self.review_changed();
        // The status says what was written and that the agent's record is untouched.
        self.status = Some(format!(
            "{} {} {} (about {}, made {} by {}) · appended to {} · the agent's record is unchanged",
            finding.id,
            finding.target.label(),
            finding.verdict,
            time::format_short(finding.about),
            time::format_with(finding.made_at, "%Y-%m-%d %H:%M:%S"),
            finding.reviewer,
            path.display()
        ));
        self.move_cursor(self.cursor);
        Ok(())
    }
}

/// The review as the panels show it: the header's line, and each evidence
/// item's REVIEW cell (`⚑ rejected`, `⚑ note`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewShown {
    /// The header's line (`⚑ review: 3 findings by ana, …`), when a review is read.
    pub line: Option<String>,
    /// Each reviewed evidence item's REVIEW cell, by id.
    pub evidence: std::collections::HashMap<String, String>,
}

impl ReviewShown {
    pub(super) fn of(review: &asof_core::review::Review) -> ReviewShown {
        let glyph = crate::tui::state::beliefs::REVIEW_GLYPH;
        let mut evidence = std::collections::HashMap::new();
        for f in &review.findings {
            let Some(id) = f.target.id.as_deref() else {
                continue;
            };
            if f.target.kind != asof_core::review::TargetKind::Evidence || evidence.contains_key(id)
            {
                continue;
            }
            let cell = match review.evidence_verdict(id) {
                Some(v) => format!("{glyph} {}", v.verdict),
                None => format!("{glyph} note"),
            };
            evidence.insert(id.to_owned(), cell);
        }
        ReviewShown {
            line: review
                .announce_short()
                .map(|line| format!("{glyph} {line}")),
            evidence,
        }
    }
}
