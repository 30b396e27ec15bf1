//! Reads what belief quality (design.md §4, [`asof_core::engine::quality`]) needs from a
//! store beyond the versions themselves (which carry their support times):
//! the topics' aging settings and the verifications, one index range.

use super::Belief;
use crate::store::{Seqs, Store};
use asof_core::engine::quality::Ledger;
use asof_core::time::Micros;

/// The ledger of a store: its topics' aging settings and every verification
/// (a version carries its own support times, so nothing else is read).
pub fn ledger(store: &Store) -> crate::store::Result<Ledger> {
    let mut ledger = Ledger::new(store.header());
    read_again(store, &mut ledger, &Seqs::all())?;
    Ok(ledger)
}

/// Brings `ledger`, read from `store` before its log's events `seqs` names
/// were written again (a follow's batches since), up to date with the store:
/// what those events added forgotten, what they add now read.
pub fn read_again(store: &Store, ledger: &mut Ledger, seqs: &Seqs) -> crate::store::Result<()> {
    ledger.forget(seqs.from, &seqs.only);
    for (seq, v) in store.verifications(seqs)? {
        ledger.add_verification(v, seq);
    }
    for (seq, id, fields) in store.assumed_by_id(seqs)? {
        ledger.add_assumed(&id, fields, seq);
    }
    ledger.seal();
    Ok(())
}

/// The end of the log: where a history reads still-held versions' quality.
pub fn end_of_log(store: &Store) -> crate::store::Result<Micros> {
    Ok(super::recorded_span(store)?.map_or(0, |(_, last)| last))
}

/// [`asof_core::engine::quality::answer`] over beliefs of one topic held at `at`.
pub fn answer_of(
    ledger: &Ledger,
    held: &[&Belief],
    cardinality: asof_core::model::Cardinality,
    at: Micros,
    about: Option<Micros>,
) -> asof_core::engine::quality::Answer {
    asof_core::engine::quality::answer(
        ledger,
        held.iter().map(|b| (&b.version, &b.supported_by[..])),
        cardinality,
        at,
        about,
    )
}
