//! The plane's topic and agent follow the beliefs' selection; play advances
//! the cursor one event per interval.

use super::{App, TICK_MS};
use crate::tui::state::beliefs;
use std::collections::HashMap;

impl App {
    /// The (topic, agent) the plane should show: the beliefs selection's topic and
    /// agent, or the first agent holding versions on that topic.
    pub(super) fn plane_target(&self) -> (usize, Option<String>) {
        let row = self.beliefs.selected();
        let topic = row.map_or(0, |r| r.topic);
        let agent = match row {
            Some(r) if r.belief.is_some() => Some(beliefs::agent_of(&self.timeline, r).to_owned()),
            _ => {
                let tl = &self.timeline;
                let positions = tl.topic_positions(topic);
                (0..tl.header.agents.len())
                    .find(|&a| positions.iter().any(|&i| tl.topic_agent(i as usize).1 == a))
                    .map(|a| tl.header.agents[a].id.clone())
            }
        };
        (topic, agent)
    }

    pub(super) fn sync_plane(&mut self, force: bool) {
        let target = self.plane_target();
        let empty = HashMap::new();
        let claims = self.claim_index.get(target.0).unwrap_or(&empty);
        self.plane
            .sync(&self.timeline, claims, target, self.cursor, force);
    }

    pub(super) fn tick(&mut self) -> bool {
        if self.whatif.busy.is_some() {
            self.whatif.spinner = self.whatif.spinner.wrapping_add(1);
        }
        if !self.playing {
            return self.whatif.busy.is_some();
        }
        self.play_elapsed += TICK_MS;
        if self.play_elapsed < self.play_interval_ms() {
            return false;
        }
        self.play_elapsed = 0;
        match self.timeline.next_event(self.cursor) {
            Some(t) => self.move_cursor(t),
            None => self.playing = false,
        }
        true
    }
}
