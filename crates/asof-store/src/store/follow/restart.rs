//! A whole-file follow started again on its store (serve restarted): the
//! lines the store applied are fed again — the importer's state has to be
//! carried on from them — a few megabytes at a time, and what they convert
//! to is compared with what the store holds as it settles, so that neither
//! the import of the whole archive nor its log is held at once.
//!
//! ```text
//!   lines the store applied ──a few MB──▶ Growth::feed, Growth::grow (the log
//!        from the first entry the lines changed), Growth::taken (the runs
//!        that are over let go)
//!                                             │ the log and the model calls
//!                                             │ before Growth::settled: no
//!                                             ▼ later lines change them
//!   the stored events and rows, read in seq order from where the last run
//!   of lines left off, compared with them and let go (only the store's
//!   replay state, 16 bytes an event, is kept)
//! ```
//!
//! At the end what was not settled yet is compared as a follow's first
//! batch compares it (trace.rs, `take_up`), and only what differs is
//! written. A batch that gives again entries already compared (the import
//! converted every line again) has them compared again with the store.

use super::Stop;
use super::trace::{Grown, Growth, Suffix, Written};
use crate::store::{read, write};
use asof_core::model::{Event, EventBody, IdSet, ModelCall};
use rusqlite::Connection;

/// What a restart found the store to hold of what the lines it applied
/// convert to, so far.
pub(super) struct CatchUp {
    /// The stored events found as the conversion gives them, in order.
    pub(super) written: Written,
    /// The place of the first event making each claim among them (in the
    /// order the log first makes them, which is their codes' order).
    pub(super) first: Vec<usize>,
    known: IdSet<String>,
    /// The conversion's log after the events found (`written`), and
    /// whether the first of it was found to differ from the store (until a
    /// batch gives it again).
    pub(super) pending: Vec<Event>,
    differs: bool,
    /// The conversion's model calls after the first `calls_kept`, found as
    /// stored; whether the first of them differs (until given again).
    pub(super) calls_kept: usize,
    pub(super) calls: Vec<ModelCall>,
    calls_differ: bool,
    /// The last batch's suffix, its events and calls taken out: its
    /// header, meta and skipped records are those of every line fed.
    pub(super) last: Option<Suffix>,
    /// The conversion is taken only whole (the growth gives no suffix).
    pub(super) whole: bool,
}

impl CatchUp {
    /// Nothing compared yet with the store `conn` holds.
    pub(super) fn new(conn: &Connection) -> Result<CatchUp, Stop> {
        Ok(CatchUp {
            written: Written::new(read::header(conn)?),
            first: Vec::new(),
            known: IdSet::default(),
            pending: Vec::new(),
            differs: false,
            calls_kept: 0,
            calls: Vec::new(),
            calls_differ: false,
            last: None,
            whole: false,
        })
    }

    /// Takes what the lines just fed to `growth` changed, lets the runs
    /// that are over go, and compares what settled with the store.
    pub(super) fn fed(&mut self, conn: &Connection, growth: &mut impl Growth) -> Result<(), Stop> {
        if self.whole {
            return Ok(());
        }
        match growth.grow()? {
            Grown::From(suffix) => self.take(conn, suffix)?,
            Grown::Whole(_) => {
                self.whole = true;
                (self.pending, self.calls) = (Vec::new(), Vec::new());
                return Ok(());
            }
        }
        growth.taken();
        let (entries, calls) = growth.settled();
        if !self.differs {
            let n = entries.saturating_sub(self.written.len());
            self.compare(conn, n)?;
        }
        if !self.calls_differ {
            let n = calls.saturating_sub(self.calls_kept).min(self.calls.len());
            let same = same_calls(conn, self.calls_kept, &self.calls[..n])?;
            self.calls.drain(..same);
            self.calls_kept += same;
            self.calls_differ = same < n;
        }
        Ok(())
    }

    /// Compares the first `n` pending events (at most) with the events
    /// stored after those found, taking those found as the store holds
    /// them (the rest stays pending); a difference stops the comparing.
    pub(super) fn compare(&mut self, conn: &Connection, n: usize) -> Result<(), Stop> {
        let n = n.min(self.pending.len());
        if n == 0 {
            return Ok(());
        }
        let (written, first, known) = (&mut self.written, &mut self.first, &mut self.known);
        let after = written.len();
        let same = as_stored(conn, after, &self.pending[..n], |e| {
            written.extend(std::slice::from_ref(&e));
            if let EventBody::Believe(a) = e.body
                && known.insert(a.claim)
            {
                first.push(written.len() - 1);
            }
        })?;
        self.pending.drain(..same);
        self.differs = same < n;
        Ok(())
    }

    /// Takes `suffix` (the log from its `keep` on, the calls from its
    /// `calls_from` on) as what the lines fed so far convert to.
    fn take(&mut self, conn: &Connection, mut suffix: Suffix) -> Result<(), Stop> {
        let mut events = std::mem::take(&mut suffix.events);
        for (j, e) in events.iter_mut().enumerate() {
            e.seq = (suffix.keep + j + 1) as u64;
        }
        // A first pending entry found to differ, given again, is compared
        // again: what the import said settled it may change after all, once
        // a span falls into a run it let go (it converts every line again).
        let (keep, found) = (suffix.keep, self.written.len());
        let again = take_given(
            found,
            keep,
            events,
            &mut self.pending,
            &mut self.differs,
            |e| as_stored(conn, keep, e, |_| {}),
        )?;
        if let Some(same) = again {
            self.back_to(conn, same)?;
        }
        let calls = std::mem::take(&mut suffix.calls);
        let (from, kept) = (suffix.calls_from, self.calls_kept);
        let again = take_given(
            kept,
            from,
            calls,
            &mut self.calls,
            &mut self.calls_differ,
            |c| same_calls(conn, from, c),
        )?;
        if let Some(same) = again {
            (self.calls_kept, self.calls_differ) = (same, true);
        }
        self.last = Some(suffix);
        Ok(())
    }

    /// Takes only the first `found` events as found; those after differ.
    fn back_to(&mut self, conn: &Connection, found: usize) -> Result<(), Stop> {
        // A restart's comparison lets nothing go.
        let last = self.written.replayed_by(found).flatten();
        self.written.truncate(found, last);
        self.first
            .truncate(self.first.partition_point(|&at| at < found));
        // The claims of the events found are the first stored, by code.
        let claims: Vec<String> = conn
            .prepare("SELECT text FROM claims ORDER BY code LIMIT ?1")?
            .query_map([self.first.len() as i64], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        self.known = claims.into_iter().collect();
        self.differs = true;
        Ok(())
    }
}

/// Takes `given` (a batch's items from place `from` on) after the first
/// `found` items found as stored, into `pending` (the items after those):
/// given from after them, they replace the pending ones from there; given
/// from before, those found again are compared once more (`as_stored` of
/// the items given again: how many are as stored) and the rest is pending.
/// Returns the place of the first found item now found to differ, if one
/// is (the items found are only those before it). A first pending item
/// found to differ (`differs`) is compared again once it is given again.
fn take_given<T>(
    found: usize,
    from: usize,
    mut given: Vec<T>,
    pending: &mut Vec<T>,
    differs: &mut bool,
    as_stored: impl FnOnce(&[T]) -> rusqlite::Result<usize>,
) -> rusqlite::Result<Option<usize>> {
    *differs &= from > found;
    match from.checked_sub(found) {
        Some(after) => {
            pending.truncate(after);
            pending.extend(given);
            Ok(None)
        }
        None => {
            let again = found - from;
            let same = as_stored(&given[..again.min(given.len())])?;
            given.drain(..same);
            *pending = given;
            Ok((same < again).then_some(from + same))
        }
    }
}

/// How many of `events` (the conversion's log after its first `after`) are
/// as stored, from the first on; each of them, as stored, handed to `found`.
fn as_stored(
    conn: &Connection,
    after: usize,
    events: &[Event],
    mut found: impl FnMut(Event),
) -> rusqlite::Result<usize> {
    let mut same = 0;
    if events.is_empty() {
        return Ok(0);
    }
    read::each_event_after(conn, after as i64, |e| {
        if events.get(same) != Some(&e) {
            return false;
        }
        found(e);
        same += 1;
        same < events.len()
    })?;
    Ok(same)
}

/// How many of `calls` (the model calls after the first `after`) are as
/// their stored rows, from the first on.
pub(super) fn same_calls(
    conn: &Connection,
    after: usize,
    calls: &[ModelCall],
) -> rusqlite::Result<usize> {
    let mut same = 0;
    if calls.is_empty() {
        return Ok(0);
    }
    read::each_model_call_row_after(conn, after as i64, |row| {
        if write::call_row(&calls[same]).ok().as_deref() != Some(row) {
            return false;
        }
        same += 1;
        same < calls.len()
    })?;
    Ok(same)
}

#[cfg(test)]
mod tests {
    use super::CatchUp;
    use crate::store::follow::{Converted, Grown, Growth, Stop, Suffix};
    use crate::testing::store_of;
    use asof_core::model::{Event, EventBody, Header, ModelCall};
    use asof_synth::GenConfig;

    /// One scripted batch: the log's first `n` events from `keep` on (the
    /// `changed`-th with another confidence) and `settled` said settled;
    /// the same of the model calls (the changed one of another model).
    #[derive(Clone, Copy, Default)]
    struct Step {
        keep: usize,
        n: usize,
        changed: Option<usize>,
        settled: usize,
        calls_from: usize,
        calls: usize,
        changed_call: Option<usize>,
        calls_settled: usize,
    }

    struct Given {
        header: Header,
        log: Vec<Event>,
        calls: Vec<ModelCall>,
        steps: Vec<Step>,
        at: usize,
    }

    impl Growth for Given {
        fn feed(&mut self, _: &[u8]) -> Result<(), Stop> {
            Ok(())
        }
        type Ahead = ();
        fn ahead(_: &[u8]) {}
        fn feed_ahead(&mut self, _: &[u8], (): ()) -> Result<(), Stop> {
            Ok(())
        }
        fn convert(&mut self) -> Result<Converted, Stop> {
            Err(Stop::File("a script converts nothing whole".into()))
        }
        fn grow(&mut self) -> Result<Grown, Stop> {
            let step = self.steps[self.at];
            let mut events = self.log[step.keep..step.n].to_vec();
            if let Some(e) = step.changed.and_then(|c| events.get_mut(c - step.keep))
                && let EventBody::Believe(a) = &mut e.body
            {
                a.confidence = 0.125;
            }
            let mut calls = self.calls[step.calls_from..step.calls].to_vec();
            if let Some(c) = step
                .changed_call
                .and_then(|c| calls.get_mut(c - step.calls_from))
            {
                c.model = Some("another".into());
            }
            self.at += 1;
            Ok(Grown::From(Suffix {
                keep: step.keep,
                header: self.header.clone(),
                events,
                meta: Vec::new(),
                skipped: 0,
                calls_from: step.calls_from,
                calls,
            }))
        }
        fn settled(&self) -> (usize, usize) {
            let step = self.steps[self.at - 1];
            (step.settled, step.calls_settled)
        }
    }

    /// What an import said settled may change after all (a span that falls
    /// into a run it let go: it converts every line again): an entry or a
    /// model call found to differ from the store is compared again once a
    /// batch gives it again, and what follows it is let go as it settles —
    /// not held to the end.
    #[test]
    fn an_entry_found_to_differ_is_compared_again_when_given_again() {
        let store = store_of(GenConfig {
            events: 300,
            topics: 3,
            agents: 2,
            seed: 7,
        });
        let conn = store.connection();
        let log = crate::store::read::events(conn).expect("the log");
        let calls: Vec<ModelCall> = (1..=20)
            .map(|n| ModelCall {
                n,
                agent: "a".into(),
                trace: "t".into(),
                span: format!("s{n}"),
                started: n as i64,
                ended: n as i64,
                model: Some("m".into()),
                read_new: Vec::new(),
                said: Vec::new(),
                tool_calls: Vec::new(),
            })
            .collect();
        let tx = conn.unchecked_transaction().expect("a transaction");
        crate::store::write::write_calls(&tx, 0, &calls).expect("calls written");
        tx.commit().expect("committed");
        let changed = (40..).find(|&i| matches!(log[i].body, EventBody::Believe(_)));
        // A belief and a call changed before they settle; the log and the
        // calls given again from their start, as stored; then on.
        let steps = vec![
            Step {
                n: 100,
                changed,
                settled: 100,
                calls: 10,
                changed_call: Some(4),
                calls_settled: 10,
                ..Step::default()
            },
            Step {
                n: 150,
                settled: 150,
                calls: 15,
                calls_settled: 15,
                ..Step::default()
            },
            Step {
                keep: 150,
                n: 250,
                settled: 200,
                calls_from: 15,
                calls: 18,
                calls_settled: 16,
                ..Step::default()
            },
        ];
        let mut given = Given {
            header: store.header().clone(),
            log,
            calls,
            steps,
            at: 0,
        };
        let mut caught = CatchUp::new(conn).expect("caught up");
        let found = |c: &CatchUp| {
            (
                c.written.len(),
                c.pending.len(),
                c.calls_kept,
                c.calls.len(),
            )
        };
        caught.fed(conn, &mut given).expect("fed");
        let first = changed.expect("a belief");
        assert_eq!(
            found(&caught),
            (first, 100 - first, 4, 6),
            "up to the changes"
        );
        caught.fed(conn, &mut given).expect("fed");
        assert_eq!(found(&caught), (150, 0, 15, 0));
        caught.fed(conn, &mut given).expect("fed");
        assert_eq!(found(&caught), (200, 50, 16, 2));
    }
}
