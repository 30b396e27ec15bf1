//! Version pages: every version row again, [`PAGE`] to a blob, in the
//! versions table's own order (lifespan, superseded_at, recorded_at, id), so
//! that `believed(T′)` for all topics steps through about a thousand blobs
//! instead of seventy thousand rows (SPEC §12: SQLite's per-row stepping and
//! column reads alone were above the 20 ms target; see docs/performance.md).
//!
//! ```text
//! pages(lifespan, last, page)     first, first_recorded, data
//!       └ key: a lifespan's pages in order; `last` is the largest superseded_at
//!         of the page, `first` the smallest, `first_recorded` the recorded_at
//!         of its first row (lifespan 64, still held, is ordered by it)
//! data  one record per version: recorded_at · superseded_at (i64 LE) ·
//!       length of the rest (LEB128) · valid_from · valid_to (i64 LE) · id ·
//!       topic · agent · claim (LEB128, the signed ones zigzagged) · the
//!       row's packed `rest`, as stored
//! ```
//!
//! A version of lifespan k held at T′ was closed in (T′, T′ + 2^k] (see the
//! versions table's schema), so [`held_at`] reads, for each lifespan, the pages
//! from the first whose `last` is after T′ up to the first whose `first` is
//! past T′ + 2^k — the rows the row path would read, plus at most a page at
//! each end.
//!
//! Like the scrub index this is derived from the stored versions and written
//! by every writer of them ([`write`]: load, rebuild, forks, follow);
//! `check` compares the stored pages with a fresh computation, page by page
//! ([`differs`]), and `rebuild` writes them afresh.

use super::read::VersionRow;
use crate::time::{Micros, OPEN};
use rusqlite::{Connection, params};

/// Versions per page.
pub const PAGE: usize = 64;

/// The lifespan of versions still held (superseded_at is [`OPEN`]).
const HELD: i64 = 64;

/// One page as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub lifespan: i64,
    pub last: i64,
    pub page: i64,
    pub first: i64,
    pub first_recorded: i64,
    pub data: Vec<u8>,
}

/// One version of a page, its packed `rest` borrowed from the page.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Record<'a> {
    id: i64,
    recorded_at: i64,
    superseded_at: i64,
    valid_from: i64,
    valid_to: i64,
    topic: i64,
    agent: i64,
    claim: i64,
    rest: &'a [u8],
}

impl Record<'_> {
    /// The held test's two instants first (fixed-width: µs since the epoch
    /// take eight bytes as varints too, and read faster so), then the length
    /// of the rest, so a reader skips a version not held without decoding it.
    fn pack(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.recorded_at.to_le_bytes());
        out.extend_from_slice(&self.superseded_at.to_le_bytes());
        let mut body = Vec::with_capacity(self.rest.len() + 24);
        body.extend_from_slice(&self.valid_from.to_le_bytes());
        body.extend_from_slice(&self.valid_to.to_le_bytes());
        unsigned(&mut body, self.id as u64);
        for n in [self.topic, self.agent, self.claim] {
            signed(&mut body, n);
        }
        body.extend_from_slice(self.rest);
        unsigned(out, body.len() as u64);
        out.extend_from_slice(&body);
    }
}

fn unsigned(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn signed(out: &mut Vec<u8>, n: i64) {
    unsigned(out, ((n << 1) ^ (n >> 63)) as u64);
}

/// Reads a page's records front to back; `None` at the end, or (through
/// `Some(None)`) where the bytes are not a record.
struct Records<'a>(&'a [u8]);

impl<'a> Records<'a> {
    fn unsigned(&mut self) -> Option<u64> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.0.split_first()?;
            self.0 = rest;
            n |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(n);
            }
        }
        None
    }

    fn word(&mut self) -> Option<i64> {
        let (word, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(i64::from_le_bytes(*word))
    }

    fn signed(&mut self) -> Option<i64> {
        let n = self.unsigned()?;
        Some(((n >> 1) as i64) ^ -((n & 1) as i64))
    }

    /// The next record's two instants and its body (undecoded).
    fn next_raw(&mut self) -> Option<(i64, i64, Records<'a>)> {
        let recorded_at = self.word()?;
        let superseded_at = self.word()?;
        let len = usize::try_from(self.unsigned()?).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (body, after) = self.0.split_at(len);
        self.0 = after;
        Some((recorded_at, superseded_at, Records(body)))
    }

    /// A record's body, read to its end (the rest is the packed `rest`).
    fn body(mut self, recorded_at: i64, superseded_at: i64) -> Option<Record<'a>> {
        let valid_from = self.word()?;
        let valid_to = self.word()?;
        let id = i64::try_from(self.unsigned()?).ok()?;
        let topic = self.signed()?;
        let agent = self.signed()?;
        let claim = self.signed()?;
        Some(Record {
            id,
            recorded_at,
            superseded_at,
            valid_from,
            valid_to,
            topic,
            agent,
            claim,
            rest: self.0,
        })
    }

    fn record(&mut self) -> Option<Record<'a>> {
        let (recorded_at, superseded_at, body) = self.next_raw()?;
        body.body(recorded_at, superseded_at)
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Option<Record<'a>>;
    fn next(&mut self) -> Option<Option<Record<'a>>> {
        if self.0.is_empty() {
            return None;
        }
        let record = self.record();
        if record.is_none() {
            self.0 = &[];
        }
        Some(record)
    }
}

/// Every page of the stored versions, in key order, handed to `each` as it
/// fills (memory: one page).
pub fn compute(
    conn: &Connection,
    mut each: impl FnMut(Page) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    // The table's own order: no sort.
    let mut stmt = conn.prepare(
        "SELECT lifespan, id, recorded_at, superseded_at, valid_from, valid_to, topic, agent,
                claim, rest
           FROM versions ORDER BY lifespan, superseded_at, recorded_at, id",
    )?;
    let mut rows = stmt.query([])?;
    let mut page: Option<Page> = None;
    let (mut count, mut number) = (0usize, 0i64);
    while let Some(r) = rows.next()? {
        let lifespan: i64 = r.get(0)?;
        let record = Record {
            id: r.get(1)?,
            recorded_at: r.get(2)?,
            superseded_at: r.get(3)?,
            valid_from: r.get(4)?,
            valid_to: r.get(5)?,
            topic: r.get(6)?,
            agent: r.get(7)?,
            claim: r.get(8)?,
            rest: r.get_ref(9)?.as_blob()?,
        };
        if page
            .as_ref()
            .is_some_and(|p| p.lifespan != lifespan || count == PAGE)
            && let Some(full) = page.take()
        {
            each(full)?;
        }
        let p = page.get_or_insert_with(|| {
            count = 0;
            number += 1;
            Page {
                lifespan,
                last: record.superseded_at,
                page: number,
                first: record.superseded_at,
                first_recorded: record.recorded_at,
                data: Vec::with_capacity(PAGE * 128),
            }
        });
        p.last = record.superseded_at;
        record.pack(&mut p.data);
        count += 1;
    }
    if let Some(last) = page {
        each(last)?;
    }
    Ok(())
}

/// Writes the pages afresh from the stored versions.
pub fn write(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM pages", [])?;
    let mut insert = conn.prepare(
        "INSERT INTO pages (lifespan, last, page, first, first_recorded, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    compute(conn, |p| {
        insert.execute(params![
            p.lifespan,
            p.last,
            p.page,
            p.first,
            p.first_recorded,
            p.data
        ])?;
        Ok(())
    })
}

/// Whether the stored pages differ from a fresh computation (compared page
/// by page, so memory stays at two pages).
pub fn differs(conn: &Connection) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare(
        "SELECT lifespan, last, page, first, first_recorded, data FROM pages
          ORDER BY lifespan, last, page",
    )?;
    let mut stored = stmt.query([])?;
    let mut differs = false;
    compute(conn, |fresh| {
        if differs {
            return Ok(());
        }
        match stored.next()? {
            Some(r) => {
                let same = r.get::<_, i64>(0)? == fresh.lifespan
                    && r.get::<_, i64>(1)? == fresh.last
                    && r.get::<_, i64>(2)? == fresh.page
                    && r.get::<_, i64>(3)? == fresh.first
                    && r.get::<_, i64>(4)? == fresh.first_recorded
                    && matches!(r.get_ref(5)?, rusqlite::types::ValueRef::Blob(d) if d == fresh.data);
                differs = !same;
            }
            None => differs = true,
        }
        Ok(())
    })?;
    Ok(differs || stored.next()?.is_some())
}

/// The versions held at recorded time `at` (`recorded_at ≤ at <
/// superseded_at`), narrowed to those valid at `about` and of agent code
/// `agent` if given, as undecoded rows (their packed fields in the buffer),
/// in no particular order.
pub fn held_at(
    conn: &Connection,
    at: Micros,
    about: Option<Micros>,
    agent: Option<i64>,
) -> rusqlite::Result<(Vec<VersionRow>, Vec<u8>)> {
    let mut stmt = conn.prepare_cached(
        "SELECT first, first_recorded, data FROM pages WHERE lifespan = ?1 AND last > ?2
          ORDER BY last, page",
    )?;
    let (mut out, mut bytes) = (Vec::new(), Vec::new());
    for lifespan in 1..=HELD {
        // Lifespan 64 is still held: its pages are in recorded order.
        let closed_by = if lifespan < HELD {
            at.saturating_add_unsigned(1u64 << lifespan)
        } else {
            OPEN
        };
        let mut pages = stmt.query(params![lifespan, at])?;
        while let Some(r) = pages.next()? {
            let (first, first_recorded): (i64, i64) = (r.get(0)?, r.get(1)?);
            if first > closed_by || (lifespan == HELD && first_recorded > at) {
                break;
            }
            let damaged = || {
                super::read::damaged(format!(
                    "a version page (lifespan {lifespan}) does not decode; run `asof rebuild`"
                ))
            };
            let mut records = Records(r.get_ref(2)?.as_blob()?);
            while !records.0.is_empty() {
                let (recorded_at, superseded_at, body) = records.next_raw().ok_or_else(damaged)?;
                if !(recorded_at <= at && at < superseded_at) {
                    continue;
                }
                let v = body.body(recorded_at, superseded_at).ok_or_else(damaged)?;
                let valid = about.is_none_or(|t| v.valid_from <= t && t < v.valid_to);
                if valid && agent.is_none_or(|a| a == v.agent) {
                    out.push(VersionRow::new(
                        [
                            v.id,
                            v.agent,
                            v.topic,
                            v.claim,
                            v.valid_from,
                            v.valid_to,
                            v.recorded_at,
                            v.superseded_at,
                        ],
                        v.rest,
                        &mut bytes,
                    )?);
                }
            }
        }
    }
    Ok((out, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_any_cut_is_refused() {
        let rest = b"packed fields";
        let record = Record {
            id: 7,
            recorded_at: -5,
            superseded_at: OPEN,
            valid_from: i64::MIN,
            valid_to: 1_700_000_000_000_000,
            topic: 3,
            agent: 0,
            claim: 129,
            rest,
        };
        let mut data = Vec::new();
        record.pack(&mut data);
        record.pack(&mut data);
        let read: Vec<_> = Records(&data).collect();
        assert_eq!(read, vec![Some(record), Some(record)]);
        let one = data.len() / 2;
        for cut in 1..one {
            let read: Vec<_> = Records(&data[..cut]).collect();
            assert_eq!(
                read,
                vec![None],
                "a record cut at byte {cut} must not decode"
            );
        }
    }

    #[test]
    fn an_overlong_varint_is_refused() {
        let data = [0xffu8; 11];
        assert_eq!(Records(&data).next(), Some(None));
    }
}
