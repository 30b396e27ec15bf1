//! A live source (design.md §6): the store read again as it grows, the
//! cursor following the newest event while it is at the end, the header's
//! age of the newest event.

use super::App;
use crate::tui::state::beliefs;
use crate::tui::state::evidence::EvidenceState;
use crate::tui::state::scrubber::ScrubberState;
use asof_store::query::timeline::Timeline;

/// What the header shows of a live source.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveState {
    /// How long ago the newest event was recorded (`12s`), as of the last news.
    pub age: String,
    /// Why following stopped, once it has.
    pub stopped: Option<String>,
    /// Complete lines of the followed file the store has not taken in yet.
    pub behind: u64,
}

impl App {
    /// Marks the source as live (design.md §6): the header shows it and the age of
    /// the newest event.
    pub fn go_live(&mut self) {
        self.live = Some(LiveState::default());
        self.live_age();
    }

    /// Applies news from a live source; returns whether the screen changed.
    pub fn live_news(&mut self, news: crate::tui::live::Live) -> bool {
        use crate::tui::live::Live;
        let before = self.live.clone();
        match news {
            Live::Refreshed(timeline) => {
                self.refresh(*timeline);
                return true;
            }
            Live::Quiet => self.live_age(),
            Live::Behind(lines) => {
                if let Some(live) = self.live.as_mut() {
                    live.behind = lines;
                }
            }
            Live::Stopped(why) => {
                if let Some(live) = self.live.as_mut() {
                    live.stopped = Some(why.clone());
                }
                self.status = Some(why);
                return true;
            }
        }
        self.live != before
    }

    /// Whether the recorded cursor is at the newest event (or there is none),
    /// so a live refresh moves it on to the new newest.
    pub fn following(&self) -> bool {
        self.timeline
            .span()
            .is_none_or(|(_, last)| self.cursor >= last)
    }

    fn live_age(&mut self) {
        let newest = self.timeline.span().map(|(_, last)| last);
        if let Some(live) = self.live.as_mut() {
            live.age = newest.map_or_else(String::new, |t| {
                asof_core::time::format_duration((asof_core::time::now() - t).max(0))
            });
        }
    }

    /// Swaps in `timeline`, the same store read again after it grew (design.md §6).
    /// A cursor at the newest event follows it to the new newest; one the user
    /// moved back stays where it is. The evidence selection stays on the same
    /// item, the beliefs selection on the same belief (or agent, or topic).
    pub fn refresh(&mut self, timeline: Timeline) {
        let following = self.following();
        let evidence = self
            .evidence
            .list
            .selected_item()
            .and_then(|i| self.timeline.cached_evidence(i))
            .map(|e| e.evidence.id.clone());
        let zoomed = self.scrubber.view != self.scrubber.full;
        let view = self.scrubber.view;
        let label = std::mem::take(&mut self.timeline.label);
        // The review stays: it is not part of the log the follow re-read.
        let review = self.timeline.review.clone();
        self.timeline = timeline;
        self.timeline.label = label;
        self.timeline.review = review;
        self.scrubber = ScrubberState::new(self.timeline.span());
        if zoomed {
            self.scrubber.view = view;
        }
        self.claim_index = beliefs::claim_index(&self.timeline);
        self.looks = beliefs::looks(&self.timeline, &self.claim_index);
        self.evidence = EvidenceState::new(&self.timeline);
        let rows = self.list_rows().1;
        if let Some((i, _)) = evidence.and_then(|id| self.timeline.evidence_by_id(&id))
            && let Some(position) = self.evidence.list.items().iter().position(|&x| x == i)
        {
            self.evidence.list.select(position, rows);
        }
        let cursor = match self.timeline.span() {
            Some((_, last)) if following => last,
            _ => self.cursor,
        };
        self.move_cursor(cursor);
        self.sync_plane(true);
        self.live_age();
        self.prefetch();
    }
}
