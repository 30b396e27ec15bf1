//! Marking evidence (design.md §4): `m` on the evidence list asks for a state and a
//! note, and the verification recorded at the cursor goes to the review file
//! (one JSON line, appended) and into the view's ledger — never into the
//! loaded store. `asof load DATASET --review FILE` makes a store with them.

use super::{App, Focus};
use crate::model::{Verification, VerifyState};
use crate::time;
use crate::tui::state::popup::{Popup, Prompt, PromptKind};
use std::io::Write;

impl App {
    /// `m`: the mark prompt for the selected evidence.
    pub(super) fn ask_mark(&mut self) {
        let selected = self.evidence.list.selected_item();
        match (self.focus, selected, &self.review) {
            (_, _, None) => {
                self.status =
                    Some("marking needs a review file (asof tui SOURCE --review FILE)".into())
            }
            (Focus::Evidence, Some(i), Some(_)) => {
                let item = self.timeline.evidence_item(i);
                let e = &item.evidence;
                if e.recorded_at > self.cursor {
                    self.status = Some(format!(
                        "{} is recorded at {}, after the cursor: a mark is recorded no earlier than its evidence",
                        e.id,
                        time::format_short(e.recorded_at)
                    ));
                    return;
                }
                let subject = format!(
                    "Mark {} ({}, {}) at {} as:",
                    e.id,
                    e.kind.as_str(),
                    e.source,
                    time::format_short(self.cursor)
                );
                self.popup = Some(Popup::Prompt(Prompt {
                    subject: Some(subject),
                    ..Prompt::new(PromptKind::Verify(i), String::new())
                }));
            }
            _ => {
                self.status =
                    Some("select an evidence item first (Tab to the evidence list), then m".into())
            }
        }
    }

    /// Records `state` for evidence item `i` at the cursor: appended to the
    /// review file, then shown. Errors leave everything as it was.
    pub(super) fn mark(
        &mut self,
        i: usize,
        state: VerifyState,
        note: Option<String>,
    ) -> Result<(), String> {
        let Some(path) = self.review.clone() else {
            return Err("no review file".into());
        };
        let evidence = self.timeline.evidence_item(i).evidence.id.clone();
        let taken = |id: &str| self.timeline.has_event(id) || self.timeline.ledger.has_verdict(id);
        let mut n = self.review_marks + 1;
        while taken(&format!("RV{n}")) {
            n += 1;
        }
        let v = Verification {
            id: format!("RV{n}"),
            evidence: evidence.clone(),
            state,
            by: std::env::var("ASOF_REVIEWER").unwrap_or_else(|_| "reviewer".into()),
            recorded_at: self.cursor,
            note,
        };
        let line = crate::dataset::review::line(&v);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| writeln!(f, "{line}"))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        self.review_marks = n;
        let at = v.recorded_at;
        // After every event of the log at the same instant.
        self.timeline
            .ledger
            .add_verification(v, u64::MAX - 1_000_000 + n as u64);
        self.timeline.ledger.seal();
        // The status repeats the line written, so what was marked is never a guess.
        self.status = Some(format!(
            "{evidence} marked {} at {} · wrote to {}: {line} (the store is unchanged)",
            state.as_str(),
            time::format_short(at),
            path.display()
        ));
        self.move_cursor(self.cursor);
        Ok(())
    }
}
