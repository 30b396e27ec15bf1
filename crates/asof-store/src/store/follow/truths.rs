//! The `truths` table as a follow keeps it: each (agent, topic) pair of a
//! topic with a resolution, its versions' stints and answer steps in memory,
//! so a batch reads only the versions it wrote again (those closed at or
//! after its first replayed instant, and those still held), recomputes the
//! steps of the pairs whose stints changed, and writes only the rows whose
//! truth changed. Every pair's truth is taken again from its steps, because
//! the log's span grows with every batch and a wrong answer's time wrong
//! with it. The result is the same `truths` table [`super::super::derive`]
//! computes for a fresh load, topic by topic; the follow tests compare the two.

use super::super::derive::Piece;
use super::super::read;
use super::super::write::write_truths;
use asof_core::engine::answers::{self, Steps, Truth};
use asof_core::model::{Header, Names};
use asof_core::time::Micros;
use rusqlite::{Transaction, params};
use std::collections::HashMap;

/// One pair's stints in closing order (those still held last), its answer
/// steps, and its stored truth.
#[derive(Default, PartialEq)]
struct Pair {
    /// Sorted by [`closing`]: a batch replaces a tail of them.
    pieces: Vec<Piece>,
    steps: Steps,
    truth: Option<Truth>,
}

/// Every pair's stints and truth, by (topic, agent) header positions.
#[derive(Default)]
pub(super) struct Truths {
    pairs: HashMap<(usize, usize), Pair>,
    names: Names,
}

impl Truths {
    /// The truths of the stored versions, from nothing; writes none.
    pub(super) fn read(tx: &Transaction, header: &Header) -> rusqlite::Result<Truths> {
        let mut truths = Truths::default();
        truths.update(tx, header, Some(i64::MIN), false)?;
        Ok(truths)
    }

    /// Writes the `truths` table afresh from these truths.
    pub(super) fn rewrite(&self, tx: &Transaction, header: &Header) -> rusqlite::Result<()> {
        tx.execute("DELETE FROM truths", [])?;
        let rows: Vec<_> = self
            .pairs
            .iter()
            .filter_map(|(&(topic, agent), pair)| {
                let (t, a) = (header.topics.get(topic)?, header.agents.get(agent)?);
                Some(((a.id.clone(), t.id.clone()), pair.truth?))
            })
            .collect();
        write_truths(tx, &rows)
    }

    /// Brings the `truths` table up to date after a batch replayed from
    /// `since`: every version closed at or after it, and every one still
    /// held, is as the batch left it; `None`: the versions did not change,
    /// but the span may have.
    pub(super) fn write(
        &mut self,
        tx: &Transaction,
        header: &Header,
        since: Option<Micros>,
    ) -> rusqlite::Result<()> {
        self.update(tx, header, since, true)
    }

    fn update(
        &mut self,
        tx: &Transaction,
        header: &Header,
        since: Option<Micros>,
        write: bool,
    ) -> rusqlite::Result<()> {
        if let Some(since) = since {
            self.written_again(tx, header, since)?;
        }
        self.truths(tx, header, write)
    }

    /// Replaces each pair's stints closed at or after `since` (and those
    /// still held) with those stored now, and takes its steps again where
    /// they differ.
    fn written_again(
        &mut self,
        tx: &Transaction,
        header: &Header,
        since: Micros,
    ) -> rusqlite::Result<()> {
        let resolved = |topic: usize| {
            header
                .topics
                .get(topic)
                .is_some_and(|t| t.resolution.is_some())
        };
        let mut again: HashMap<(usize, usize), Vec<Piece>> = HashMap::new();
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT {} FROM versions v JOIN claims c ON c.code = v.claim
              WHERE v.lifespan = ?1 AND v.superseded_at >= ?2",
            Piece::COLUMNS
        ))?;
        for lifespan in 1..=64i64 {
            let mut rows = stmt.query(params![lifespan, since])?;
            while let Some(r) = rows.next()? {
                let (piece, topic, agent) = Piece::read(r, &mut self.names)?;
                if resolved(topic as usize) {
                    again
                        .entry((topic as usize, agent as usize))
                        .or_default()
                        .push(piece);
                }
            }
        }
        for (key, pair) in self.pairs.iter_mut() {
            // The stints closed at or after `since`, and those still held:
            // a tail of the pair's, in closing order.
            let kept = pair.pieces.partition_point(|p| p.superseded_at < since);
            let old = pair.pieces.split_off(kept);
            let mut new = again.remove(key).unwrap_or_default();
            new.sort_unstable_by_key(closing);
            let changed = old != new;
            pair.pieces.extend(new);
            if changed {
                let list: Vec<&Piece> = pair.pieces.iter().collect();
                pair.steps = answers::steps_of(&list);
            }
        }
        for (key, mut pieces) in again {
            pieces.sort_unstable_by_key(closing);
            let list: Vec<&Piece> = pieces.iter().collect();
            let steps = answers::steps_of(&list);
            self.pairs.insert(
                key,
                Pair {
                    pieces,
                    steps,
                    truth: None,
                },
            );
        }
        Ok(())
    }

    /// Every pair's truth over the log's span now; writes (if `write`) the
    /// rows that changed and deletes those of pairs left without versions.
    fn truths(&mut self, tx: &Transaction, header: &Header, write: bool) -> rusqlite::Result<()> {
        let resolved = |topic: usize| {
            header
                .topics
                .get(topic)
                .and_then(|t| t.resolution.as_deref())
        };
        let span = read::span(tx)?.unwrap_or((0, 0));
        let mut changed = Vec::new();
        let mut gone = Vec::new();
        for (&(topic, agent), pair) in self.pairs.iter_mut() {
            let (Some(resolution), Some(t), Some(a)) = (
                resolved(topic),
                header.topics.get(topic),
                header.agents.get(agent),
            ) else {
                continue;
            };
            let ids = (a.id.clone(), t.id.clone());
            if pair.pieces.is_empty() {
                if pair.truth.take().is_some() {
                    gone.push(ids);
                }
                continue;
            }
            let truth = answers::truth(&pair.steps, resolution, span);
            if pair.truth != Some(truth) {
                pair.truth = Some(truth);
                changed.push((ids, truth));
            }
        }
        self.pairs.retain(|_, pair| !pair.pieces.is_empty());
        if write {
            let mut delete =
                tx.prepare_cached("DELETE FROM truths WHERE topic = ?1 AND agent = ?2")?;
            for (agent, topic) in gone {
                delete.execute(params![topic, agent])?;
            }
            write_truths(tx, &changed)?;
        }
        Ok(())
    }
}

/// The order a pair's stints are kept in: by closing instant (held ones,
/// closed at [`asof_core::time::OPEN`], last), then by key.
fn closing(p: &Piece) -> (Micros, Micros, u64) {
    (p.superseded_at, p.recorded_at, p.id)
}

#[cfg(test)]
mod tests {
    use super::Truths;
    use crate::testing::store_of;
    use asof_synth::GenConfig;

    /// A batch replays from any instant (a late line rewinds): taking again,
    /// from an unchanged store, the stints closed at or after any instant,
    /// once or twice, leaves every pair as a fresh reading has it.
    #[test]
    fn stints_taken_again_from_any_instant_equal_a_fresh_reading() {
        let store = store_of(GenConfig {
            events: 800,
            topics: 4,
            agents: 2,
            seed: 5,
        });
        let header = store.header().clone();
        let tx = store
            .connection()
            .unchecked_transaction()
            .expect("transaction");
        let fresh = Truths::read(&tx, &header).expect("read");
        let mut closings: Vec<i64> = fresh
            .pairs
            .values()
            .flat_map(|p| p.pieces.iter().map(|s| s.superseded_at))
            .filter(|&t| t != asof_core::time::OPEN)
            .collect();
        closings.sort_unstable();
        closings.dedup();
        assert!(
            closings.len() > 20,
            "the log closes stints of resolved topics"
        );
        let step = closings.len() / 10;
        for (i, &since) in closings.iter().enumerate().step_by(step) {
            let mut again = Truths::read(&tx, &header).expect("read");
            again
                .update(&tx, &header, Some(since), false)
                .expect("update");
            assert!(again.pairs == fresh.pairs, "from {since}");
            let earlier = closings[i / 2];
            again
                .update(&tx, &header, Some(earlier), false)
                .expect("update");
            assert!(again.pairs == fresh.pairs, "from {since}, then {earlier}");
        }
    }
}
