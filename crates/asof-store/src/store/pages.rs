//! Version pages: every version row again, grouped into blobs by where it
//! sits in the versions table's own order (lifespan, then closing instant),
//! so that `believed(T′)` for all topics steps through about a thousand blobs
//! instead of seventy thousand rows (design.md §9: SQLite's per-row stepping and
//! column reads alone were above the target; see docs/performance-log.md).
//!
//! ```text
//! page_widths(lifespan)   shift: a page of this lifespan spans 2^shift µs
//! pages(lifespan, bucket) data: the versions whose key >> shift is bucket,
//!                         key = superseded_at, in the table's order;
//!                         lifespan 64 (still held, shift 0): cut by
//!                         content, bucket = the first one's recorded_at
//! data  one record per version: recorded_at · superseded_at (i64 LE) ·
//!       length of the rest (LEB128) · valid_from · valid_to (i64 LE) · id ·
//!       topic · agent · claim (LEB128, the signed ones zigzagged) · the
//!       row's packed `rest`, as stored
//! ```
//!
//! A version of lifespan k held at T′ was closed in (T′, T′ + 2^k] (see the
//! versions table's schema), so [`held_at`] reads, for each lifespan, the
//! buckets over that range — the rows the row path would read, plus at most a
//! bucket at each end. A page's bounds are fixed by its bucket, not by how many
//! versions came before it, and the widths are fixed by the lifespan alone
//! (a lifespan-k page spans 2^(k-5) µs, see [`Widths::fixed`]), so a change to
//! some versions rewrites only the pages holding them and still equals a
//! fresh computation: a fork's replayed pairs ([`patch`]), a follow's batch
//! (the pages closing at or after its first instant, [`patch_since`]).
//!
//! Like the scrub index this is derived from the stored versions: load and
//! rebuild write it afresh ([`write`]), a fork and a follow patch it;
//! `check` compares the stored pages with a fresh computation at the stored
//! widths, page by page ([`differs`]), and `rebuild` writes them again.
//! (Stores written before the widths were fixed chose them from the versions,
//! about 64 to a page; they read and check at their stored widths, and a
//! follow writes their pages afresh once, at the fixed widths.)

use super::codec::{put_signed, put_unsigned, take_signed, take_unsigned};
use super::read::{VERSION_COLUMNS, VersionRow};
use asof_core::time::{Micros, OPEN};
use rusqlite::{Connection, OptionalExtension, params};

/// A lifespan-k page spans 2^(k - SPLIT) µs of closing instants.
const SPLIT: u32 = 5;

/// The width of the pages of versions still held: none (0). They are cut
/// by their content, not by a stretch of time: a page ends after a version
/// whose id is a cut point ([`is_cut`], one id in 256) where the next was
/// recorded later, and its bucket is its first version's recorded instant.
/// A follow's batch changes a few held versions among thousands, and all of
/// them were recorded within one page's stretch of time (the pages spanned
/// 2^40 µs, about 12.7 days, before: the one page, written whole each batch,
/// was a tenth of a follow's time at a minute of 20,000 spans/s —
/// docs/performance-log.md, session 49); cut by content, the pages are the
/// same however the versions came, and a batch writes only those that
/// changed. (A store written at a width reads and checks at it.)
const HELD_CHUNKED: u32 = 0;

/// Whether a version still held ends its page (when the next was recorded
/// later): one id in 256, spread by a multiplicative hash so that ids
/// given in order do not cut at regular places.
fn is_cut(id: i64) -> bool {
    (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56 == 0
}

/// The lifespan of versions still held (superseded_at is [`OPEN`]).
const HELD: i64 = 64;

/// One page as stored.
#[derive(Debug, Clone, PartialEq)]
struct Page {
    lifespan: i64,
    bucket: i64,
    data: Vec<u8>,
}

/// Each lifespan's page width, as a shift (index: lifespan; 0 where none).
#[derive(Debug, Clone, PartialEq)]
struct Widths([u32; 65]);

impl Widths {
    fn shift(&self, lifespan: i64) -> u32 {
        usize::try_from(lifespan)
            .ok()
            .and_then(|l| self.0.get(l))
            .copied()
            .unwrap_or(0)
    }

    /// Whether the pages of versions still held are cut by content.
    fn held_chunked(&self) -> bool {
        self.shift(HELD) == HELD_CHUNKED
    }

    /// The bucket of a version of `lifespan` recorded and closed at these
    /// instants (held pages cut by content: the version's own instant,
    /// which [`pages_of`] keeps only for the first of a page).
    fn bucket(&self, lifespan: i64, recorded_at: i64, superseded_at: i64) -> i64 {
        let key = if lifespan == HELD {
            recorded_at
        } else {
            superseded_at
        };
        key >> self.shift(lifespan)
    }

    /// The widths pages are written at, whatever the versions: a lifespan-k
    /// page spans 2^(k - [`SPLIT`]) µs, so the range a query reads for it,
    /// (T′, T′ + 2^k], covers 2^SPLIT pages and at most one more; pages of
    /// versions still held span 2^[`HELD_SHIFT`] µs of recorded time. Fixed
    /// widths let a change rewrite only the pages it touches (a fork, a
    /// follow's batch) and still equal a fresh computation.
    fn fixed() -> Widths {
        let mut widths = [0u32; 65];
        for (lifespan, w) in widths.iter_mut().enumerate().take(HELD as usize) {
            *w = (lifespan as u32).saturating_sub(SPLIT);
        }
        widths[HELD as usize] = HELD_CHUNKED;
        Widths(widths)
    }

    /// The stored widths (a lifespan not stored: 0).
    fn read(conn: &Connection) -> rusqlite::Result<Widths> {
        let mut widths = [0u32; 65];
        let mut stmt = conn.prepare_cached("SELECT lifespan, shift FROM page_widths")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let (lifespan, shift): (i64, i64) = (r.get(0)?, r.get(1)?);
            let slot = usize::try_from(lifespan)
                .ok()
                .and_then(|l| widths.get_mut(l));
            match (slot, u32::try_from(shift)) {
                (Some(w), Ok(s)) if s < 63 => *w = s,
                _ => {
                    return Err(super::read::damaged(format!(
                        "the page width of lifespan {lifespan} is {shift}; run `asof rebuild`"
                    )));
                }
            }
        }
        Ok(Widths(widths))
    }

    fn write(&self, conn: &Connection) -> rusqlite::Result<()> {
        conn.execute("DELETE FROM page_widths", [])?;
        let mut insert =
            conn.prepare("INSERT INTO page_widths (lifespan, shift) VALUES (?1, ?2)")?;
        for (lifespan, shift) in self.0.iter().enumerate().skip(1) {
            insert.execute(params![lifespan as i64, i64::from(*shift)])?;
        }
        Ok(())
    }
}

/// Appends one version's record: the held test's two instants first
/// (fixed-width: µs since the epoch take eight bytes as varints too, and read
/// faster so), then the length of the rest, so a reader skips a version not
/// held without decoding it.
fn pack(row: &VersionRow, rest: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&row.recorded_at.to_le_bytes());
    out.extend_from_slice(&row.superseded_at.to_le_bytes());
    let mut body = Vec::with_capacity(rest.len() + 24);
    body.extend_from_slice(&row.valid_from.to_le_bytes());
    body.extend_from_slice(&row.valid_to.to_le_bytes());
    put_unsigned(&mut body, row.id as u64);
    for n in [row.topic, row.agent, row.claim] {
        put_signed(&mut body, n);
    }
    body.extend_from_slice(rest);
    put_unsigned(out, body.len() as u64);
    out.extend_from_slice(&body);
}

/// Reads a page's records front to back.
struct Records<'a>(&'a [u8]);

impl<'a> Records<'a> {
    fn unsigned(&mut self) -> Option<u64> {
        take_unsigned(&mut self.0)
    }

    fn word(&mut self) -> Option<i64> {
        super::bytes::take_word(&mut self.0)
    }

    fn signed(&mut self) -> Option<i64> {
        take_signed(&mut self.0)
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

    /// A record's body, read to its end: the version's fields in the order
    /// [`VersionRow::new`] takes them, and its packed `rest`.
    fn body(mut self, recorded_at: i64, superseded_at: i64) -> Option<([i64; 8], &'a [u8])> {
        let valid_from = self.word()?;
        let valid_to = self.word()?;
        let id = i64::try_from(self.unsigned()?).ok()?;
        let topic = self.signed()?;
        let agent = self.signed()?;
        let claim = self.signed()?;
        let fields = [
            id,
            agent,
            topic,
            claim,
            valid_from,
            valid_to,
            recorded_at,
            superseded_at,
        ];
        Some((fields, self.0))
    }
}

/// The columns a page is built from (a version row as [`VersionRow::read`]
/// reads it, then its lifespan), in the versions table's order.
fn select(condition: &str) -> String {
    format!(
        "SELECT {VERSION_COLUMNS}, v.lifespan FROM versions v {condition}
          ORDER BY v.lifespan, v.superseded_at, v.recorded_at, v.id"
    )
}

/// The pages of the versions `rows` yields (selected by [`select`]), handed
/// to `each` as they fill (memory: one page).
fn pages_of(
    rows: &mut rusqlite::Rows<'_>,
    widths: &Widths,
    mut each: impl FnMut(Page) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut page: Option<Page> = None;
    let mut rest = Vec::new();
    // The last held version packed, when it may end its page: its instant.
    let mut cut_after: Option<i64> = None;
    while let Some(r) = rows.next()? {
        rest.clear();
        let row = VersionRow::read(r, &mut rest)?;
        let lifespan: i64 = r.get(9)?;
        let mut bucket = widths.bucket(lifespan, row.recorded_at, row.superseded_at);
        if lifespan == HELD && widths.held_chunked() {
            let goes_on = page.as_ref().filter(|p| p.lifespan == HELD);
            if let Some(p) = goes_on
                && cut_after.is_none_or(|last| row.recorded_at <= last)
            {
                bucket = p.bucket;
            }
            cut_after = is_cut(row.id).then_some(row.recorded_at);
        }
        if page
            .as_ref()
            .is_some_and(|p| (p.lifespan, p.bucket) != (lifespan, bucket))
            && let Some(full) = page.take()
        {
            each(full)?;
        }
        let p = page.get_or_insert_with(|| Page {
            lifespan,
            bucket,
            data: Vec::new(),
        });
        pack(&row, &rest, &mut p.data);
    }
    if let Some(last) = page {
        each(last)?;
    }
    Ok(())
}

/// Every page of the stored versions at `widths`, in key order.
fn compute(
    conn: &Connection,
    widths: &Widths,
    each: impl FnMut(Page) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    // The table's own order: no sort.
    let mut stmt = conn.prepare(&select(""))?;
    pages_of(&mut stmt.query([])?, widths, each)
}

fn inserter(conn: &Connection) -> rusqlite::Result<rusqlite::Statement<'_>> {
    conn.prepare("INSERT INTO pages (lifespan, bucket, data) VALUES (?1, ?2, ?3)")
}

/// Writes the widths and pages afresh from the stored versions.
pub(crate) fn write(conn: &Connection) -> rusqlite::Result<()> {
    write_from(conn, conn)
}

/// Writes into `into` (empty of pages, or the same store as `from`) the
/// widths and the pages of the versions `from` holds.
fn write_from(from: &Connection, into: &Connection) -> rusqlite::Result<()> {
    let widths = Widths::fixed();
    widths.write(into)?;
    into.execute("DELETE FROM pages", [])?;
    let mut insert = inserter(into)?;
    compute(from, &widths, |p| {
        insert.execute(params![p.lifespan, p.bucket, p.data])?;
        Ok(())
    })
}

/// Writes the widths and pages of the versions `from` holds into a new store
/// of their own at `to`: tables like the store's `page_widths` and `pages`,
/// nothing else. A load computes them there beside the work of its writing
/// connection, which then moves them in with [`take_apart`].
pub(crate) fn write_apart(from: &Connection, to: &std::path::Path) -> rusqlite::Result<()> {
    let apart = Connection::open(to)?;
    apart.execute_batch(&format!(
        "PRAGMA page_size = {}; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;",
        super::write::PAGE_SIZE
    ))?;
    // The very table definitions, so that SQLite can move their records whole.
    let mut tables = from.prepare(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name IN ('page_widths', 'pages')",
    )?;
    for table in tables.query_map([], |r| r.get::<_, String>(0))? {
        apart.execute_batch(&table?)?;
    }
    let tx = apart.unchecked_transaction()?;
    write_from(from, &tx)?;
    tx.commit()?;
    apart.close().map_err(|(_, e)| e)
}

/// Moves in the widths and pages [`write_apart`] wrote at `from`: into
/// empty tables of the same definitions, SQLite copies their records as
/// they are (its transfer optimisation), without decoding or sorting them.
/// `conn` must not be in a transaction (a store is attached), and must
/// accept URI file names (rusqlite's default flags).
pub(crate) fn take_apart(conn: &Connection, from: &std::path::Path) -> rusqlite::Result<()> {
    conn.execute("ATTACH DATABASE ?1 AS apart", [uri_of(from)])?;
    let moved = (|| {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(
            "DELETE FROM main.page_widths; INSERT INTO main.page_widths SELECT * FROM apart.page_widths;
             DELETE FROM main.pages; INSERT INTO main.pages SELECT * FROM apart.pages;",
        )?;
        tx.commit()
    })();
    let detached = conn.execute("DETACH DATABASE apart", []);
    moved?;
    detached.map(|_| ())
}

/// `path` as an SQLite URI file name: SQLite takes a file name to attach as
/// UTF-8 text, and a URI names any path, each byte but a letter, digit or
/// `-._~` written as `%HH` (a `/` too, so no path reads as an authority).
fn uri_of(path: &std::path::Path) -> String {
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// Brings the pages up to date after the versions closed at or after `from`
/// and some held ones were written again (a follow's batch, which replays
/// from `from`): writes again, at the stored widths, each lifespan's pages
/// from the one holding `from` on, and the pages of versions still held
/// that changed ([`held_again`]). The work is that of the versions written
/// again and a read of those held, not of the store; a store at other
/// widths is written afresh.
pub(crate) fn patch_since(conn: &Connection, from: Micros) -> rusqlite::Result<()> {
    let widths = Widths::read(conn)?;
    if widths != Widths::fixed() {
        return write(conn);
    }
    let mut delete = conn.prepare("DELETE FROM pages WHERE lifespan = ?1 AND bucket >= ?2")?;
    let mut insert = inserter(conn)?;
    let mut since = conn.prepare(&select("WHERE v.lifespan = ?1 AND v.superseded_at >= ?2"))?;
    // The closed versions' pages from the one holding `from` on; at the
    // fixed widths the held pages are cut by content.
    for lifespan in 1..HELD {
        let shift = widths.shift(lifespan);
        let bucket = from >> shift;
        delete.execute(params![lifespan, bucket])?;
        pages_of(
            &mut since.query(params![lifespan, bucket << shift])?,
            &widths,
            |p| {
                insert.execute(params![p.lifespan, p.bucket, p.data])?;
                Ok(())
            },
        )?;
    }
    held_again(conn, &widths)
}

/// Writes again, at the stored widths, the pages that held or now hold a
/// version recorded and closed at one of `changed` (recorded_at,
/// superseded_at): what a fork that replaced some versions calls.
pub(crate) fn patch(conn: &Connection, changed: &[(i64, i64)]) -> rusqlite::Result<()> {
    let widths = Widths::read(conn)?;
    let mut touched: Vec<(i64, i64)> = changed
        .iter()
        .map(|&(recorded, superseded)| {
            let lifespan = super::write::lifespan(recorded, superseded);
            (lifespan, widths.bucket(lifespan, recorded, superseded))
        })
        .collect();
    touched.sort_unstable();
    touched.dedup();
    // Held pages cut by content: compared whole, those that differ written.
    let held_too = widths.held_chunked() && touched.last().is_some_and(|t| t.0 == HELD);
    if held_too {
        touched.retain(|t| t.0 != HELD);
    }
    let mut delete = conn.prepare("DELETE FROM pages WHERE lifespan = ?1 AND bucket = ?2")?;
    let mut insert = inserter(conn)?;
    let mut closed = conn.prepare(&select(
        "WHERE v.lifespan = ?1 AND v.superseded_at BETWEEN ?2 AND ?3",
    ))?;
    let mut held = conn.prepare(&select(&format!(
        "WHERE v.lifespan = ?1 AND v.superseded_at = {OPEN} AND v.recorded_at BETWEEN ?2 AND ?3"
    )))?;
    for (lifespan, bucket) in touched {
        delete.execute(params![lifespan, bucket])?;
        let shift = widths.shift(lifespan);
        let lo = bucket << shift;
        let hi = lo.saturating_add((1i64 << shift) - 1);
        let stmt = if lifespan == HELD {
            &mut held
        } else {
            &mut closed
        };
        pages_of(&mut stmt.query(params![lifespan, lo, hi])?, &widths, |p| {
            insert.execute(params![p.lifespan, p.bucket, p.data])?;
            Ok(())
        })?;
    }
    if held_too {
        held_again(conn, &widths)?;
    }
    Ok(())
}

/// Brings the pages of versions still held, cut by content, up to date:
/// each computed again from the held versions and written only where the
/// stored page differs, and stored pages no longer computed deleted. The
/// work is a read of the held versions, not a write of all their pages.
fn held_again(conn: &Connection, widths: &Widths) -> rusqlite::Result<()> {
    let mut stored = conn.prepare_cached(&format!(
        "SELECT data FROM pages WHERE lifespan = {HELD} AND bucket = ?1"
    ))?;
    let mut put = conn.prepare_cached(
        "INSERT OR REPLACE INTO pages (lifespan, bucket, data) VALUES (?1, ?2, ?3)",
    )?;
    let mut held = conn.prepare(&select(&format!(
        "WHERE v.lifespan = {HELD} AND v.superseded_at = {OPEN}"
    )))?;
    let mut buckets = Vec::new();
    pages_of(&mut held.query([])?, widths, |p| {
        let same = stored
            .query_row([p.bucket], |r| {
                Ok(r.get_ref(0)?.as_blob()? == p.data.as_slice())
            })
            .optional()?
            .unwrap_or(false);
        if !same {
            put.execute(params![p.lifespan, p.bucket, p.data])?;
        }
        buckets.push(p.bucket);
        Ok(())
    })?;
    // The stored pages that are no longer computed (their buckets, in order).
    let mut all = conn.prepare_cached(&format!(
        "SELECT bucket FROM pages WHERE lifespan = {HELD} ORDER BY bucket"
    ))?;
    let gone: Vec<i64> = all
        .query_map([], |r| r.get(0))?
        .filter(|b| {
            b.as_ref()
                .map_or(true, |b| buckets.binary_search(b).is_err())
        })
        .collect::<rusqlite::Result<_>>()?;
    let mut delete = conn.prepare_cached(&format!(
        "DELETE FROM pages WHERE lifespan = {HELD} AND bucket = ?1"
    ))?;
    for bucket in gone {
        delete.execute([bucket])?;
    }
    Ok(())
}

/// Whether the stored pages differ from a fresh computation at the stored
/// widths (compared page by page, so memory stays at two pages).
pub(crate) fn differs(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let widths = match Widths::read(conn) {
        Err(rusqlite::Error::FromSqlConversionFailure(_, _, reason)) => {
            return Ok(Some(reason.to_string()));
        }
        read => read?,
    };
    let mut stmt =
        conn.prepare("SELECT lifespan, bucket, data FROM pages ORDER BY lifespan, bucket")?;
    let mut stored = stmt.query([])?;
    let mut differs = false;
    compute(conn, &widths, |fresh| {
        if differs {
            return Ok(());
        }
        match stored.next()? {
            Some(r) => {
                let same = r.get::<_, i64>(0)? == fresh.lifespan
                    && r.get::<_, i64>(1)? == fresh.bucket
                    && matches!(r.get_ref(2)?, rusqlite::types::ValueRef::Blob(d) if d == fresh.data);
                differs = !same;
            }
            None => differs = true,
        }
        Ok(())
    })?;
    Ok((differs || stored.next()?.is_some()).then(|| {
        "the version pages (table pages) differ from a fresh computation from the stored versions"
            .to_owned()
    }))
}

/// The versions held at recorded time `at` (`recorded_at ≤ at <
/// superseded_at`), narrowed to those valid at `about` and of agent code
/// `agent` if given, as undecoded rows (their packed fields in the buffer),
/// in no particular order.
///
/// `room`: how many rows and bytes of packed fields to make room for at once
/// (an earlier answer's size: a long answer grown by doubling copies its
/// few megabytes over again).
pub(crate) fn held_at(
    conn: &Connection,
    at: Micros,
    about: Option<Micros>,
    agent: Option<i64>,
    room: (usize, usize),
) -> rusqlite::Result<(Vec<VersionRow>, Vec<u8>)> {
    let widths = Widths::read(conn)?;
    let mut stmt = conn.prepare_cached(
        "SELECT data FROM pages WHERE lifespan = ?1 AND bucket BETWEEN ?2 AND ?3",
    )?;
    let (mut out, mut bytes) = (Vec::with_capacity(room.0), Vec::with_capacity(room.1));
    for lifespan in 1..=HELD {
        let shift = widths.shift(lifespan);
        // Lifespan 64 is still held: its pages are by recorded time.
        let (lo, hi) = if lifespan < HELD {
            (
                at.saturating_add(1),
                at.saturating_add_unsigned(1u64 << lifespan),
            )
        } else {
            (i64::MIN, at)
        };
        let mut pages = stmt.query(params![lifespan, lo >> shift, hi >> shift])?;
        while let Some(r) = pages.next()? {
            let damaged = || {
                super::read::damaged(format!(
                    "a version page (lifespan {lifespan}) does not decode; run `asof rebuild`"
                ))
            };
            let mut records = Records(r.get_ref(0)?.as_blob()?);
            while !records.0.is_empty() {
                let (recorded_at, superseded_at, body) = records.next_raw().ok_or_else(damaged)?;
                if !(recorded_at <= at && at < superseded_at) {
                    continue;
                }
                let (fields, rest) = body.body(recorded_at, superseded_at).ok_or_else(damaged)?;
                let [_, v_agent, _, _, valid_from, valid_to, ..] = fields;
                let valid = about.is_none_or(|t| valid_from <= t && t < valid_to);
                if valid && agent.is_none_or(|a| a == v_agent) {
                    out.push(VersionRow::new(fields, rest, &mut bytes)?);
                }
            }
        }
    }
    Ok((out, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A held page as stored: its bucket and its records' (recorded_at,
    /// superseded_at, id).
    type HeldPage = (i64, Vec<(i64, i64, i64)>);

    fn held_pages(conn: &Connection) -> rusqlite::Result<Vec<HeldPage>> {
        let mut stmt = conn.prepare(&format!(
            "SELECT bucket, data FROM pages WHERE lifespan = {HELD} ORDER BY bucket"
        ))?;
        let pages = stmt.query_map([], |r| {
            let mut records = Records(r.get_ref(1)?.as_blob()?);
            let mut out = Vec::new();
            while let Some((recorded, superseded, body)) = records.next_raw() {
                let (fields, _) = body.body(recorded, superseded).expect("a record");
                out.push((recorded, superseded, fields[0]));
            }
            Ok((r.get(0)?, out))
        })?;
        pages.collect()
    }

    /// Held pages end after a cut-point id where the next version was
    /// recorded later, each keyed by its first version's instant; a held
    /// version gone rewrites the page that held it (and, if it ended its
    /// page, the next, which it joins), and the others stay byte for byte.
    #[test]
    fn held_pages_are_cut_by_content_and_a_change_writes_only_its_pages() -> rusqlite::Result<()> {
        let store = crate::testing::store_of(asof_synth::GenConfig {
            events: 40_000,
            topics: 400,
            agents: 4,
            seed: 5,
        });
        let conn = store.connection();
        let before = held_pages(conn)?;
        assert!(before.len() >= 4, "{} held pages", before.len());
        for (i, (bucket, records)) in before.iter().enumerate() {
            assert_eq!(records[0].0, *bucket);
            assert!(records.iter().all(|r| r.1 == OPEN));
            let cuts_inside = records
                .windows(2)
                .filter(|w| is_cut(w[0].2) && w[1].0 > w[0].0)
                .count();
            assert_eq!(cuts_inside, 0, "page {i} goes on past a cut point");
            if let Some((next, _)) = before.get(i + 1) {
                let last = records[records.len() - 1];
                assert!(
                    is_cut(last.2) && *next > last.0,
                    "page {i} ends off a cut point"
                );
            }
        }
        // The held version ending the second page goes (as a batch closing
        // it would leave the table): the second and third pages join.
        let gone = before[1].1[before[1].1.len() - 1];
        conn.execute(
            "DELETE FROM versions WHERE lifespan = 64 AND id = ?1",
            [gone.2],
        )?;
        held_again(conn, &Widths::read(conn)?)?;
        assert_eq!(differs(conn)?, None);
        let after = held_pages(conn)?;
        assert_eq!(after.len(), before.len() - 1);
        assert_eq!(after[0], before[0]);
        assert_eq!(&after[2..], &before[3..]);
        let joined: Vec<_> = (before[1].1.iter().chain(&before[2].1))
            .filter(|r| **r != gone)
            .copied()
            .collect();
        assert_eq!(after[1], (before[1].0, joined));
        Ok(())
    }

    /// A store is attached by its URI whatever its path holds: bytes that
    /// are not UTF-8, URI delimiters, percent signs, a leading `//`.
    #[cfg(unix)]
    #[test]
    fn any_path_attaches_by_its_uri() -> rusqlite::Result<()> {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let odd = dir
            .path()
            .join(std::ffi::OsStr::from_bytes(b"a?b#c%41 d\xff"));
        std::fs::create_dir(&odd).expect("makes the directory");
        let path = odd.join("s.db");
        Connection::open(&path)?.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (7);")?;
        // A path spelled from `//` (the same file) must not read as a host.
        let slashes = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(
            &[b"/", path.as_os_str().as_bytes()].concat(),
        ));
        for name in [path.clone(), slashes] {
            let conn = Connection::open_in_memory()?;
            conn.execute("ATTACH DATABASE ?1 AS apart", [uri_of(&name)])?;
            let x: i64 = conn.query_row("SELECT x FROM apart.t", [], |r| r.get(0))?;
            assert_eq!(x, 7, "{}", uri_of(&name));
        }
        Ok(())
    }

    /// Every record of `data`, decoded; `None` where one does not decode.
    fn records(data: &[u8]) -> Vec<Option<([i64; 8], &[u8])>> {
        let mut records = Records(data);
        let mut out = Vec::new();
        while !records.0.is_empty() {
            let record = records.next_raw().and_then(|(r, s, body)| body.body(r, s));
            out.push(record);
            if record.is_none() {
                break;
            }
        }
        out
    }

    #[test]
    fn records_round_trip_and_any_cut_is_refused() {
        let rest = b"packed fields";
        // id, agent, topic, claim, valid from and to, recorded, superseded.
        let fields = [7, 0, 3, 129, i64::MIN, 1_700_000_000_000_000, -5, OPEN];
        let mut bytes = Vec::new();
        let row = VersionRow::new(fields, rest, &mut bytes).expect("a row");
        let mut data = Vec::new();
        pack(&row, rest, &mut data);
        pack(&row, rest, &mut data);
        let one = Some((fields, &rest[..]));
        assert_eq!(records(&data), vec![one, one]);
        for cut in 1..data.len() / 2 {
            assert_eq!(
                records(&data[..cut]),
                vec![None],
                "a record cut at byte {cut} must not decode"
            );
        }
    }

    #[test]
    fn an_overlong_varint_is_refused() {
        let mut data = vec![0u8; 16];
        data.extend([0xffu8; 11]);
        assert_eq!(records(&data), vec![None]);
    }
}
