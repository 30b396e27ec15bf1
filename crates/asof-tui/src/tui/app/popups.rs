//! Popups and filters: a popup's key goes to its state, and what it asks for
//! (close, seek, filter, show the fork) is applied here; Enter opens the popup
//! of the focused panel.

use super::{App, Focus};
use crate::tui::action::Action;
use crate::tui::state::beliefs;
use crate::tui::state::popup::{Effect, Popup, PromptKind};
use crate::tui::state::texts;
use asof_core::time;

impl App {
    /// Keys while a popup is open: the popup's state decides, the app applies.
    pub(super) fn update_popup(&mut self, action: Action) -> bool {
        let screen = self.screen();
        let compare = self.compare_view().map_or((0, 0), |v| v.size());
        let Some(popup) = &mut self.popup else {
            return false;
        };
        match popup.update(action, screen, compare, (time::now(), self.cursor)) {
            Effect::Ignored => return false,
            Effect::Handled => {}
            Effect::Close => self.popup = None,
            Effect::ShowFork => {
                self.popup = None;
                // Two runs have no fork to show: c closes their compare.
                if self.whatif.fork.is_some() {
                    self.swap_timelines();
                }
            }
            Effect::Seek(t, read_as) => {
                self.popup = None;
                self.move_cursor(t);
                if read_as.is_some() {
                    self.status = read_as;
                }
            }
            Effect::Filter(PromptKind::Filter(focus), text) => {
                if action == Action::Back {
                    self.popup = None;
                }
                self.set_filter(focus, text);
            }
            Effect::Filter(PromptKind::Jump | PromptKind::Mark(_) | PromptKind::Export, _) => {}
            Effect::Export(html, file) => {
                self.popup = None;
                self.export(html, file);
            }
            Effect::Mark(on, verdict, note) => {
                if let Err(e) = self.mark(on, verdict, note) {
                    // The text stays, to be mended (or Esc).
                    if let Some(Popup::Prompt(p)) = &mut self.popup {
                        p.error = Some(e);
                    }
                } else {
                    self.popup = None;
                }
            }
        }
        true
    }

    pub(super) fn set_filter(&mut self, focus: Focus, text: String) {
        let (belief_rows, evidence_rows) = self.list_rows();
        match focus {
            Focus::Beliefs => self.beliefs.set_filter(&self.timeline, text, belief_rows),
            Focus::Evidence => self
                .evidence
                .set_filter(&self.timeline, text, evidence_rows),
            Focus::Scrubber | Focus::Plane => {}
        }
    }

    /// Esc on a filtered list clears its filter; returns whether it did.
    pub(super) fn clear_filter(&mut self) -> bool {
        let filtered = match self.focus {
            Focus::Beliefs => self.beliefs.list.is_filtered(),
            Focus::Evidence => self.evidence.list.is_filtered(),
            _ => false,
        };
        if filtered {
            self.set_filter(self.focus, String::new());
        }
        filtered
    }

    pub(super) fn open(&mut self) {
        let view = match self.focus {
            Focus::Plane => match self.plane.reading.versions.first() {
                Some(&id) => texts::version(&self.timeline, id, self.cursor),
                None => {
                    self.status = Some("nothing is believed under the crosshair".into());
                    return;
                }
            },
            Focus::Beliefs => match self.beliefs.selected() {
                Some(row) => {
                    let agent = row
                        .belief
                        .map(|_| beliefs::agent_of(&self.timeline, row).to_owned());
                    texts::history(&self.timeline, self.cursor, row.topic, agent.as_deref())
                }
                None => return,
            },
            Focus::Evidence => match self.evidence.list.selected_item() {
                Some(i) => {
                    let item = self.timeline.evidence_item(i);
                    let influence = self.whatif.influence_of(&item.evidence.id);
                    texts::evidence(&self.timeline, self.cursor, &item, influence)
                }
                None => return,
            },
            Focus::Scrubber => texts::events(&self.timeline, self.cursor, &self.latest),
        };
        self.popup = Some(Popup::Text(view));
    }
}
