//! Replaying a followed log again from a recorded instant. A batch may hold
//! events recorded at or before the last instant applied: a writer's batch
//! often ends between two events of one instant, and some lines arrive late.
//! A slice of the replay must hold whole instants, so the follower keeps the
//! replay as it was before some instants ([`Snapshots`]); such a batch undoes
//! what was derived from the latest kept instant at or before its earliest
//! event ([`undo_from`]) and replays the stored events since
//! ([`crate::store::derive::replay_log`] from there) — the cost is the events
//! since that instant, not the log.

use crate::store::derive::Sliced;
use asof_core::time::Micros;
use rusqlite::Transaction;

/// How many replays are kept at most; past that the older half is thinned,
/// so they thin out towards the start (late lines are mostly a little late).
const KEPT: usize = 16;

/// How much the kept replays may hold in all ([`Sliced::size`]: versions,
/// claims and assertions). The replay's state grows with the log (a scope
/// keeps a version for each stretch of valid time it was told of). A copy
/// shares the versions it holds with the replay it was taken from (each
/// behind its own pointer: copied only once changed) and holds their maps
/// and the assertions' ids, about 80 bytes a unit of size — so at 2^19,
/// about 40 MB in all. Past it fewer are kept, thinned as many are — spread
/// out towards the start, so that a batch reaching back replays from a
/// little further back, not from the start — but never fewer than
/// [`KEPT_FEWEST`]. (When each copy held its versions whole, four were kept
/// by a minute of a fleet at 20,000 spans/s, and a batch going back to a
/// run's start found the nearest 3–6 s back one time in five: 90–240 ms of
/// replay for it — docs/performance-log.md, session 49.)
const KEPT_SIZE: usize = 1 << 19;
const KEPT_FEWEST: usize = 4;

/// How many replays are kept when each holds `size`.
fn kept_at_most(size: usize) -> usize {
    (KEPT_SIZE / size.max(1)).clamp(KEPT_FEWEST, KEPT)
}

/// Replays kept from before recorded instants.
#[derive(Default)]
pub(super) struct Snapshots {
    /// `(bound, the replay of every event recorded before bound)`, in bound
    /// order.
    kept: Vec<(Micros, Sliced)>,
    /// How many of the first are not thinned: the start and, once the
    /// follow says where no batch reaches ([`Snapshots::let_go_before`]),
    /// the latest kept before that.
    fixed: usize,
}

impl Snapshots {
    /// The replay of nothing kept, from before every instant: a batch that
    /// goes back before every other kept replays again from the start
    /// through the same steps as any other (and the scrub index is patched,
    /// not computed afresh).
    pub(super) fn starting(header: &asof_core::model::Header) -> Snapshots {
        Snapshots {
            kept: vec![(Micros::MIN, Sliced::new(header))],
            fixed: 1,
        }
    }

    /// The replay kept from before `instant`, or from before the latest kept
    /// instant before it, and that instant. Later ones are dropped: what they
    /// hold goes stale once events recorded at or after `instant` arrive.
    pub(super) fn rewind(&mut self, instant: Micros) -> Option<(Micros, Sliced)> {
        self.kept.retain(|(bound, _)| *bound <= instant);
        self.fixed = self.fixed.min(self.kept.len());
        self.kept
            .last()
            .map(|(bound, state)| (*bound, state.clone()))
    }

    /// Keeps `state`, the replay of the events recorded before `bound`.
    pub(super) fn keep(&mut self, bound: Micros, state: &Sliced) {
        // The replay before an instant is one state: kept once.
        if self.kept.last().is_some_and(|(last, _)| *last >= bound) {
            return;
        }
        self.kept.push((bound, state.clone()));
        // Each thinning lets go of a quarter of those not fixed (at least
        // one: it thins only four or more, so their older half holds two
        // or more).
        let most = kept_at_most(state.size());
        let fixed = self.fixed;
        while self.kept.len() > most.max(fixed + 3) {
            let half = (self.kept.len() - fixed) / 2;
            let mut i = 0;
            self.kept.retain(|_| {
                i += 1;
                i <= fixed || i - fixed > half || (i - fixed) % 2 == 1
            });
        }
    }

    /// No batch is expected to go back before `instant` (the log before it
    /// is settled: design.md §7): the replays kept between the start and
    /// the latest kept at or before it are let go, and that one is kept
    /// from then on — so that those kept thin out over what a batch may
    /// reach, not towards the start (a run's end, going back to the run's
    /// start, found a replay from long before it).
    pub(super) fn let_go_before(&mut self, instant: Micros) {
        let at = self.kept.partition_point(|(bound, _)| *bound <= instant);
        if at >= 2 {
            self.kept.drain(1..at - 1);
        }
        self.fixed = at.clamp(1, 2).min(self.kept.len());
    }
}

/// Deletes what replaying the events recorded at or after `from` derived:
/// the versions those events closed and the events' outcomes and
/// reconfirmations. Not the held rows (lifespan 64): the held versions grow
/// with the log (a stretch of valid time each), and most are held as they
/// were — the caller deletes those made again and those that changed
/// (`Sliced::held_since`, `Sliced::held_changed_from`).
pub(super) fn undo_from(tx: &Transaction, from: Micros) -> rusqlite::Result<()> {
    // One range of the table's key per lifespan: the work of the rows
    // deleted, not a scan of the table.
    let mut delete =
        tx.prepare("DELETE FROM versions WHERE lifespan = ?1 AND superseded_at >= ?2")?;
    for lifespan in 1..=63i64 {
        delete.execute(rusqlite::params![lifespan, from])?;
    }
    for table in ["outcomes", "reconfirmations"] {
        tx.execute(
            &format!(
                "DELETE FROM {table} WHERE seq IN (SELECT seq FROM events WHERE recorded_at >= ?1)"
            ),
            [from],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> Sliced {
        let header = r#"{"incident": {"id": "t", "title": "t"}, "agents": [], "topics": []}"#;
        Sliced::new(&serde_json::from_str(header).expect("a header"))
    }

    #[test]
    fn rewind_finds_the_latest_kept_instant_at_or_before_and_drops_the_later() {
        let mut kept = Snapshots::default();
        for bound in [10, 20, 30] {
            kept.keep(bound, &state());
        }
        kept.keep(30, &state());
        assert_eq!(kept.kept.len(), 3, "an instant is kept once");
        assert_eq!(kept.rewind(25).map(|(b, _)| b), Some(20));
        assert_eq!(
            kept.kept.iter().map(|(b, _)| *b).collect::<Vec<_>>(),
            [10, 20]
        );
        assert_eq!(kept.rewind(20).map(|(b, _)| b), Some(20));
        assert_eq!(kept.rewind(5).map(|(b, _)| b), None);
        assert!(kept.kept.is_empty());
    }

    #[test]
    fn the_larger_the_replay_the_fewer_are_kept_but_never_fewer_than_four() {
        assert_eq!(kept_at_most(0), KEPT);
        assert_eq!(kept_at_most(KEPT_SIZE / KEPT), KEPT);
        assert_eq!(kept_at_most(KEPT_SIZE / 8), 8);
        assert_eq!(kept_at_most(KEPT_SIZE), KEPT_FEWEST);
        assert_eq!(kept_at_most(usize::MAX), KEPT_FEWEST);
    }

    /// Once the follow says where no batch reaches, the replays kept
    /// between the start and the latest before it go; that one stays as
    /// more are kept, and those after it thin out, not towards the start.
    #[test]
    fn the_latest_before_what_no_batch_reaches_stays_and_the_rest_thin_after_it() {
        let mut kept = Snapshots {
            kept: vec![(Micros::MIN, state())],
            fixed: 1,
        };
        for bound in 0..100 {
            kept.keep(bound, &state());
        }
        kept.let_go_before(90);
        let bounds = |kept: &Snapshots| kept.kept.iter().map(|(b, _)| *b).collect::<Vec<_>>();
        let at_90 = bounds(&kept);
        assert_eq!(at_90[0], Micros::MIN, "{at_90:?}");
        let floor = at_90[1];
        assert!(floor <= 90 && at_90[2] > 90, "{at_90:?}");
        for bound in 100..400 {
            kept.keep(bound, &state());
            let now = bounds(&kept);
            assert_eq!(&now[..2], &[Micros::MIN, floor], "{now:?}");
            assert!(now.len() <= KEPT + 1, "{now:?}");
            assert_eq!(now.last(), Some(&bound));
        }
        // A batch that goes back before it (every line converted again)
        // finds the start.
        assert_eq!(kept.rewind(floor - 1).map(|(b, _)| b), Some(Micros::MIN));
        kept.keep(500, &state());
        assert_eq!(bounds(&kept), [Micros::MIN, 500]);
    }

    #[test]
    fn past_the_limit_the_older_half_thins_and_the_newest_stay() {
        let mut kept = Snapshots::default();
        for bound in 0..200 {
            kept.keep(bound, &state());
        }
        let bounds: Vec<Micros> = kept.kept.iter().map(|(b, _)| *b).collect();
        assert!(bounds.len() <= KEPT, "{bounds:?}");
        assert_eq!(bounds.last(), Some(&199));
        assert_eq!(bounds.first(), Some(&0), "the start stays reachable");
        assert!(bounds.windows(2).all(|w| w[0] < w[1]));
        // Consecutive at the end, spread out towards the start.
        assert_eq!(bounds[bounds.len() - 2], 198);
        assert!(bounds[1] - bounds[0] > 1, "{bounds:?}");
    }
}
