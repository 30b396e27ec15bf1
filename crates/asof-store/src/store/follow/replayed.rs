//! The replay a follow carries from batch to batch, and what each batch
//! derives from it: the versions (from the replay as it stands, from a kept
//! replay before the batch's first instant, or from nothing), the truths,
//! the scrub index and the version pages. A JSON Lines follow's batch appends
//! events; a trace follow's batch may also change or remove the events at the
//! end of the log (what a trace adds later can change what an earlier span
//! meant). Either way the store is, at the commit, what a fresh load of the
//! log gives.

use super::rewind::{Snapshots, undo_from};
use super::truths::Truths;
use crate::store::derive::{Sliced, Write, delete_held, replay_log};

/// How many replayed events (assertions, retractions, verifications:
/// evidence is not replayed) a follow's replay takes between the instants it
/// keeps a replay before. A batch that goes back — a run's last span names
/// the agent of every call the run made, so the log is written again from
/// the run's start — replays again from the latest kept at or before its
/// first instant, so kept ones must lie close together near the end of the
/// log. A load's slice (65,536) left none between a run's start and the end
/// of a fleet's log, where most events are evidence: every such batch
/// replayed the whole log again and computed its scrub index afresh. Each
/// kept replay is a clone of the replay's state: kept every 256 events, a
/// followed fleet held more (514 MB against 474 MB at 900,000 events) for
/// no shorter delay; every 4,096, less (366 MB) for a longer one.
const CUT: usize = 1 << 10;
use crate::store::Seqs;
use crate::store::scrub::{Growing, Rewrote};
use asof_core::model::{Header, IdSet};
use asof_core::time::Micros;
use rusqlite::Transaction;

/// What a batch did to the log, as the replay needs to know it.
#[derive(Debug, Clone)]
pub(super) struct Change {
    /// The earliest recorded instant among the replayed events (all but
    /// evidence) the batch added, changed or removed; `None`: evidence only.
    pub(super) first: Option<Micros>,
    /// Events already stored were changed or removed, not only appended
    /// after them (their seqs are written again).
    pub(super) rewrote: Option<Rewrote>,
    /// The whole log must be replayed again.
    pub(super) whole: bool,
    /// The latest recorded instant replayed in the log after the batch.
    pub(super) last: Option<Micros>,
}

/// The state a follow carries between batches.
pub(super) struct Replayed {
    pub(super) header: Header,
    pub(super) replay: Sliced,
    /// The replay as it was before some instants, to replay again from.
    snapshots: Snapshots,
    /// The last recorded instant replayed (evidence is not replayed).
    pub(super) last: Option<Micros>,
    /// The claims of the stored log, in code order.
    pub(super) claims: IdSet<String>,
    /// The scrub index and truths as committed (`None` after a batch that
    /// failed: the next computes them afresh).
    scrub: Option<Growing>,
    truths: Option<Truths>,
}

/// What a batch derived, kept once its transaction commits.
pub(super) struct Derived {
    scrub: Growing,
    truths: Truths,
    /// The batch went back before the last instant replayed.
    pub(super) late: bool,
}

impl Replayed {
    /// The state of the log stored in `tx`: replayed again for the held
    /// versions and the kept replays, the rest read.
    pub(super) fn read(tx: &Transaction, header: Header) -> rusqlite::Result<Replayed> {
        let last: Option<Micros> = tx.query_row(
            "SELECT max(recorded_at) FROM events WHERE kind <> 'evidence'",
            [],
            |r| r.get(0),
        )?;
        let mut snapshots = Snapshots::starting(&header);
        let replay = replay_log(tx, &header, CUT, Write::Not, None, |bound, state| {
            snapshots.keep(bound, state)
        })?;
        let claims = {
            let mut stmt = tx.prepare("SELECT text FROM claims ORDER BY code")?;
            stmt.query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<IdSet<String>>>()?
        };
        let scrub = Growing::stored(tx, &header)?;
        let truths = Truths::read(tx, &header)?;
        Ok(Replayed {
            header,
            replay,
            snapshots,
            last,
            claims,
            scrub: Some(scrub),
            truths: Some(truths),
        })
    }

    /// Derives what the batch `change` did, from the log as `tx` now holds
    /// it: replays from the replay as it stands when the batch only appended
    /// after every instant replayed; from a kept replay at or before its
    /// first instant when it went back; from nothing when it must. Then the
    /// truths, the scrub index and the pages. Keep the result with
    /// [`Replayed::committed`] once `tx` commits.
    pub(super) fn apply(&mut self, tx: &Transaction, change: Change) -> rusqlite::Result<Derived> {
        let Change {
            first,
            rewrote,
            whole,
            last,
        } = change;
        let late = matches!((first, self.last), (Some(first), Some(last)) if first < last);
        let log = written_seqs(&rewrote, whole, self.scrub.as_ref());
        // Replays only after every instant replayed before (as an appending
        // writer's batch does): the scrub index grows instead of being
        // computed afresh.
        let appends = !whole
            && rewrote.is_none()
            && first.is_some_and(|first| self.last.is_none_or(|l| first > l));
        // Where the replay goes on from: after the last instant applied, the
        // replay as it is; at or before it, a kept replay from before an
        // instant no later than the batch's first; else the whole log again,
        // as a fresh load replays it.
        let start = match first {
            _ if whole => Some(None),
            // Evidence only: nothing to replay.
            None => None,
            Some(first) if appends => Some(Some((first, self.replay.clone()))),
            Some(first) => Some(self.snapshots.rewind(first)),
        };
        // Which versions were written again: none (no replay), those closed
        // since the replay's first instant and those held, or all.
        let mut rewritten = Rewritten::Kept;
        match start {
            None => {}
            Some(Some((from, state))) => {
                rewritten = Rewritten::Since(from);
                // The held rows stay, and each is written over as it is
                // closed or changes. After every instant replayed before,
                // only they reach past `from`; otherwise what closed since
                // goes, and so do the held rows of versions recorded since,
                // which the replay makes again (maybe under other ids).
                let again = match appends {
                    true => None,
                    false => {
                        undo_from(tx, from)?;
                        delete_held(tx, self.replay.held_since(from))?;
                        Some(from)
                    }
                };
                let kept = &mut self.snapshots;
                let replay = replay_log(
                    tx,
                    &self.header,
                    CUT,
                    Write::OverHeld,
                    Some((from, state)),
                    |b, s| kept.keep(b, s),
                )?;
                (replay.held_changed_from(&self.replay, again)).write_over_held(tx)?;
                self.replay = replay;
            }
            Some(None) => {
                rewritten = Rewritten::All;
                tx.execute_batch(
                    "DELETE FROM versions; DELETE FROM outcomes; DELETE FROM reconfirmations;",
                )?;
                let kept = &mut self.snapshots;
                *kept = Snapshots::starting(&self.header);
                self.replay = replay_log(tx, &self.header, CUT, Write::Rows, None, |b, s| {
                    kept.keep(b, s)
                })?;
                self.replay.held().write(tx)?;
            }
        }
        self.last = last;
        let since = match rewritten {
            Rewritten::Kept => None,
            Rewritten::Since(from) => Some(from),
            Rewritten::All => Some(Micros::MIN),
        };
        let truths = match self.truths.take() {
            Some(mut truths) => {
                truths.write(tx, &self.header, since)?;
                truths
            }
            None => {
                let truths = Truths::read(tx, &self.header)?;
                truths.rewrite(tx, &self.header)?;
                truths
            }
        };
        let mut scrub = match (&rewritten, self.scrub.take()) {
            // Stored events written again: their marks, and what was
            // replayed again, taken again.
            (Rewritten::Kept | Rewritten::Since(_), Some(growing)) if let Some(r) = &rewrote => {
                growing.rewritten(tx, &self.header, (first, since), r)?
            }
            (Rewritten::Kept, Some(growing)) => growing.grow(tx, &self.header, None)?,
            (Rewritten::Since(from), Some(growing)) if appends => {
                growing.grow(tx, &self.header, Some(*from))?
            }
            (Rewritten::Since(from), Some(growing)) => growing.rewound(tx, &self.header, *from)?,
            _ => Growing::compute(tx, &self.header)?,
        };
        let rows = scrub.store(tx)?;
        crate::store::batches::record(tx, &log, &rows)?;
        match rewritten {
            Rewritten::Kept => {}
            Rewritten::Since(from) => crate::store::pages::patch_since(tx, from)?,
            Rewritten::All => crate::store::pages::write(tx)?,
        }
        Ok(Derived {
            scrub,
            truths,
            late,
        })
    }

    /// Takes `header` in place of the one replayed: what is derived is
    /// derived afresh by the next [`Replayed::apply`] (which must replay the
    /// whole log: its `Change` is `whole`; trace.rs `rewrite_suffix` does
    /// both).
    pub(super) fn header_changed(&mut self, header: Header) {
        self.header = header;
        self.scrub = None;
        self.truths = None;
    }

    /// Keeps what a batch derived, its transaction committed.
    pub(super) fn committed(&mut self, derived: Derived) {
        self.scrub = Some(derived.scrub);
        self.truths = Some(derived.truths);
    }

    /// Lets go what is kept of the stored events through seq `seq`, the
    /// last recorded at `instant`, which later batches are not expected to
    /// write again: the scrub index's marks (`Growing::let_go_through`) and
    /// the replays kept from before it but the latest
    /// (`Snapshots::let_go_before`).
    pub(super) fn let_go_through(&mut self, seq: u64, instant: Option<Micros>) {
        if let Some(scrub) = &mut self.scrub {
            scrub.let_go_through(seq);
        }
        if let Some(instant) = instant {
            self.snapshots.let_go_before(instant);
        }
    }
}

/// The log's events a batch wrote: those it wrote again (`rewrote`) and
/// those after the last seq stored before it, which the scrub index kept
/// last saw (`scrub`; none kept, or a `whole` batch: every event).
fn written_seqs(rewrote: &Option<Rewrote>, whole: bool, scrub: Option<&Growing>) -> Seqs {
    let Some(scrub) = scrub.filter(|_| !whole) else {
        return Seqs::all();
    };
    let after_last = u64::try_from(scrub.last_seq.saturating_add(1)).unwrap_or(0);
    match rewrote {
        Some(Rewrote {
            after, only: None, ..
        }) => Seqs {
            from: after.saturating_add(1).min(after_last),
            only: Vec::new(),
        },
        Some(Rewrote {
            only: Some(only), ..
        }) => Seqs {
            from: after_last,
            only: only.clone(),
        },
        None => Seqs {
            from: after_last,
            only: Vec::new(),
        },
    }
}

/// How a batch changed the stored versions, for what is derived from them
/// (the pages, the truths, the scrub index).
enum Rewritten {
    /// Not at all (evidence only).
    Kept,
    /// Those closed at or after this instant, and those still held, may
    /// have changed (replayed from it); the others did not.
    Since(Micros),
    /// All were written again.
    All,
}

#[cfg(test)]
mod tests {
    use super::{CUT, Replayed};
    use crate::testing::store_of;
    use asof_synth::GenConfig;

    /// A batch that goes back a little (a run's end rewrites the log from
    /// the run's start) finds a replay kept a little before it, from the
    /// first reading of the store on: not the whole log replayed again.
    #[test]
    fn a_replay_is_kept_close_before_any_instant_near_the_end() {
        let store = store_of(GenConfig {
            events: 4000,
            topics: 6,
            agents: 3,
            seed: 11,
        });
        let header = store.header().clone();
        let tx = store
            .connection()
            .unchecked_transaction()
            .expect("transaction");
        let instants: Vec<i64> = {
            let mut stmt = tx
                .prepare("SELECT recorded_at FROM events WHERE kind <> 'evidence' ORDER BY recorded_at, seq")
                .expect("query");
            stmt.query_map([], |r| r.get(0))
                .expect("rows")
                .collect::<rusqlite::Result<_>>()
                .expect("instants")
        };
        assert!(instants.len() > 1000, "{} replayed events", instants.len());
        for back in [1, 100, 400, 1000] {
            let mut replayed = Replayed::read(&tx, header.clone()).expect("read");
            let instant = instants[instants.len() - back];
            let (bound, _) = replayed
                .snapshots
                .rewind(instant)
                .unwrap_or_else(|| panic!("no replay kept before the {back}th last event"));
            let between = instants
                .iter()
                .filter(|&&t| t >= bound && t < instant)
                .count();
            assert!(
                bound <= instant && between <= CUT,
                "{back} back: replayed again from {between} events before"
            );
        }
    }
}
