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
/// Each is a copy of the replay's state (its held versions: about 2.5 MB at
/// a million events of a fleet's trace), so they are few.
const KEPT: usize = 16;

/// How much the kept replays may hold in all ([`Sliced::size`]: versions,
/// claims and assertions, a few hundred bytes each — about 25 MB): the
/// replay's state grows with the log (a scope keeps a version for each
/// stretch of valid time it was told of), and sixteen copies of it were
/// the largest part of a receiver's memory after a few minutes (49 MB of
/// 219 at 540,000 spans). Past it fewer are kept, thinned as many are —
/// spread out towards the start, so that a batch reaching back replays from
/// a little further back, not from the start — but never fewer than
/// [`KEPT_FEWEST`].
const KEPT_SIZE: usize = 1 << 16;
const KEPT_FEWEST: usize = 4;

/// How many replays are kept when each holds `size`.
fn kept_at_most(size: usize) -> usize {
    (KEPT_SIZE / size.max(1)).clamp(KEPT_FEWEST, KEPT)
}

/// Replays kept from before recorded instants: `(bound, the replay of every
/// event recorded before bound)`, in bound order.
#[derive(Default)]
pub(super) struct Snapshots(Vec<(Micros, Sliced)>);

impl Snapshots {
    /// The replay of nothing kept, from before every instant: a batch that
    /// goes back before every other kept replays again from the start
    /// through the same steps as any other (and the scrub index is patched,
    /// not computed afresh).
    pub(super) fn starting(header: &asof_core::model::Header) -> Snapshots {
        Snapshots(vec![(Micros::MIN, Sliced::new(header))])
    }

    /// The replay kept from before `instant`, or from before the latest kept
    /// instant before it, and that instant. Later ones are dropped: what they
    /// hold goes stale once events recorded at or after `instant` arrive.
    pub(super) fn rewind(&mut self, instant: Micros) -> Option<(Micros, Sliced)> {
        self.0.retain(|(bound, _)| *bound <= instant);
        self.0.last().map(|(bound, state)| (*bound, state.clone()))
    }

    /// Keeps `state`, the replay of the events recorded before `bound`.
    pub(super) fn keep(&mut self, bound: Micros, state: &Sliced) {
        // The replay before an instant is one state: kept once.
        if self.0.last().is_some_and(|(last, _)| *last >= bound) {
            return;
        }
        self.0.push((bound, state.clone()));
        // Each thinning lets go of a quarter (at least one: more than
        // `KEPT_FEWEST` are kept, so the older half holds two or more).
        let most = kept_at_most(state.size());
        while self.0.len() > most {
            let half = self.0.len() / 2;
            let mut i = 0;
            self.0.retain(|_| {
                i += 1;
                i > half || i % 2 == 1
            });
        }
    }
}

/// Deletes what replaying the events recorded at or after `from` derived:
/// the versions those events closed or created (held rows included) and the
/// events' outcomes and reconfirmations.
pub(super) fn undo_from(tx: &Transaction, from: Micros) -> rusqlite::Result<()> {
    // One range of the table's key per lifespan: the work of the rows
    // deleted, not a scan of the table.
    let mut delete =
        tx.prepare("DELETE FROM versions WHERE lifespan = ?1 AND superseded_at >= ?2")?;
    for lifespan in 1..=64i64 {
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
        assert_eq!(kept.0.len(), 3, "an instant is kept once");
        assert_eq!(kept.rewind(25).map(|(b, _)| b), Some(20));
        assert_eq!(kept.0.iter().map(|(b, _)| *b).collect::<Vec<_>>(), [10, 20]);
        assert_eq!(kept.rewind(20).map(|(b, _)| b), Some(20));
        assert_eq!(kept.rewind(5).map(|(b, _)| b), None);
        assert!(kept.0.is_empty());
    }

    #[test]
    fn the_larger_the_replay_the_fewer_are_kept_but_never_fewer_than_four() {
        assert_eq!(kept_at_most(0), KEPT);
        assert_eq!(kept_at_most(KEPT_SIZE / KEPT), KEPT);
        assert_eq!(kept_at_most(KEPT_SIZE / 8), 8);
        assert_eq!(kept_at_most(KEPT_SIZE), KEPT_FEWEST);
        assert_eq!(kept_at_most(usize::MAX), KEPT_FEWEST);
    }

    #[test]
    fn past_the_limit_the_older_half_thins_and_the_newest_stay() {
        let mut kept = Snapshots::default();
        for bound in 0..200 {
            kept.keep(bound, &state());
        }
        let bounds: Vec<Micros> = kept.0.iter().map(|(b, _)| *b).collect();
        assert!(bounds.len() <= KEPT, "{bounds:?}");
        assert_eq!(bounds.last(), Some(&199));
        assert_eq!(bounds.first(), Some(&0), "the start stays reachable");
        assert!(bounds.windows(2).all(|w| w[0] < w[1]));
        // Consecutive at the end, spread out towards the start.
        assert_eq!(bounds[bounds.len() - 2], 198);
        assert!(bounds[1] - bounds[0] > 1, "{bounds:?}");
    }
}
