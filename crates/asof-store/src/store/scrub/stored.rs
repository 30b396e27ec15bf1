//! The index in the `scrub` table: each part's blob in chunks of `CHUNK`
//! bytes, written again only where they changed, and read back.

use super::*;

/// Replaces the stored index with `index`. Not a follow's batch: the
/// batches' record is cleared (a reader reads the index whole).
pub(crate) fn store(conn: &Connection, index: &ScrubIndex) -> rusqlite::Result<()> {
    let mut out = Chunks::new(conn);
    store_parts(&mut out, &encode(index).into_iter().collect(), None)?;
    crate::store::batches::clear(conn)
}

/// What [`Chunks`] records when every row was deleted.
pub(crate) const EVERY_ROW: &str = "*";

/// Writes and deletes the stored index's chunks, keeping the rows it
/// touched (what a follow's batch records for readers, `batches`).
pub(crate) struct Chunks<'c> {
    conn: &'c Connection,
    /// The rows written or deleted, in order, maybe more than once.
    pub(crate) rows: Vec<String>,
}

impl<'c> Chunks<'c> {
    pub(crate) fn new(conn: &'c Connection) -> Chunks<'c> {
        Chunks {
            conn,
            rows: Vec::new(),
        }
    }

    /// Writes `chunk` under `row` ([`put_chunk`]).
    fn put(&mut self, row: &str, chunk: &[u8], stored: Option<usize>) -> rusqlite::Result<()> {
        self.rows.push(row.to_owned());
        put_chunk(self.conn, row, chunk, stored)
    }

    /// Deletes the chunk under `row`.
    fn delete(&mut self, row: &str) -> rusqlite::Result<()> {
        self.rows.push(row.to_owned());
        (self
            .conn
            .prepare_cached("DELETE FROM scrub WHERE part = ?1")?)
        .execute([row])?;
        Ok(())
    }
}

/// Stores encoded `parts` as chunks: given what was stored `before` (encoded
/// the same way), only the chunks that differ from it, and the chunks it had
/// beyond a part's new end are deleted; otherwise in place of every row.
pub(crate) fn store_parts(
    out: &mut Chunks,
    parts: &HashMap<&'static str, Vec<u8>>,
    before: Option<&HashMap<&'static str, Vec<u8>>>,
) -> rusqlite::Result<()> {
    if before.is_none() {
        out.conn.execute("DELETE FROM scrub", [])?;
        out.rows.push(EVERY_ROW.to_owned());
    }
    for name in PARTS {
        let data = parts.get(name).map_or(&[][..], Vec::as_slice);
        let old = before.and_then(|b| b.get(name)).map(Vec::as_slice);
        store_part(out, name, data, old)?;
    }
    Ok(())
}

/// Stores part `name` as chunks: those that differ from what was stored
/// `old` (all, if `None`), deleting the chunks `old` had past its new end.
pub(crate) fn store_part(
    out: &mut Chunks,
    name: &str,
    data: &[u8],
    old: Option<&[u8]>,
) -> rusqlite::Result<()> {
    let old: Vec<(String, &[u8])> = match old {
        Some(old) => chunks(name, old).collect(),
        None => Vec::new(),
    };
    let new: Vec<(String, &[u8])> = chunks(name, data).collect();
    for (k, (row, chunk)) in new.iter().enumerate() {
        match old.get(k) {
            Some((_, was)) if was == chunk => {}
            was => out.put(row, chunk, was.map(|(_, was)| was.len()))?,
        }
    }
    for (row, _) in old.iter().skip(new.len()) {
        out.delete(row)?;
    }
    Ok(())
}

/// Writes a chunk under `row`, whose stored chunk is `stored` bytes long
/// (`None`: there is none). A chunk as long as the one stored is written
/// over it in place (incremental blob I/O): no row is deleted and no page
/// freed (with `secure_delete`, zeroed) and taken again. Otherwise the row
/// is replaced.
pub(crate) fn put_chunk(
    conn: &Connection,
    row: &str,
    chunk: &[u8],
    stored: Option<usize>,
) -> rusqlite::Result<()> {
    if stored == Some(chunk.len()) && !chunk.is_empty() {
        let rowid: Option<i64> = conn
            .prepare_cached("SELECT rowid FROM scrub WHERE part = ?1 AND typeof(data) = 'blob'")?
            .query_row([row], |r| r.get(0))
            .optional()?;
        if let Some(rowid) = rowid {
            let mut blob = conn.blob_open(rusqlite::MAIN_DB, "scrub", "data", rowid, false)?;
            if blob.len() == chunk.len() {
                return blob.write_at(chunk, 0);
            }
        }
    }
    conn.prepare_cached("INSERT OR REPLACE INTO scrub (part, data) VALUES (?1, ?2)")?
        .execute(params![row, chunk])?;
    Ok(())
}

/// Stores what changed in `index` since `written` (the parts as last
/// stored, brought up to date in place), as `grown` tells: each part that
/// grows record by record encoded from its first changed record on, with
/// the closing instants and the evidence widths changed in place; the small
/// parts (claims, checkpoints) encoded whole and compared. Only the chunks
/// that hold a changed byte are written. The marks and evidence items
/// `let_go` names are not in `index` (nor their bytes in `written`): they
/// are stored, and unchanged.
pub(crate) fn store_grown(
    out: &mut Chunks,
    index: &ScrubIndex,
    grown: &Grown,
    written: &mut HashMap<&'static str, Vec<u8>>,
    let_go: &LetGo,
) -> rusqlite::Result<()> {
    for (name, data) in encode_small(index) {
        store_part(out, name, &data, written.get(name).map(Vec::as_slice))?;
        written.insert(name, data);
    }
    let (versions, marks) = (&index.versions, &index.marks);
    let (recorded, superseded) = (&index.by_recorded, &index.by_superseded);
    let u32_at = |list: &[u32], i: usize, out: &mut Vec<u8>| {
        out.extend_from_slice(&list[i].to_le_bytes());
    };
    // Versions replaced anywhere: their parts encoded and compared whole
    // (a first record that may differ past the end).
    let versions_from = |from: usize| match grown.versions_whole {
        true => usize::MAX,
        false => from,
    };
    let (m0, e0) = (let_go.marks, let_go.evidence);
    let evidence = &index.evidence;
    let touched: Vec<usize> = grown.widths.iter().map(|&at| e0 + at).collect();
    let parts: [GrowingPart; 6] = [
        (
            "versions",
            0,
            VERSION_BYTES,
            versions_from(grown.versions),
            versions.len(),
            &[],
            &|i, out| {
                put_version(out, &versions[i]);
            },
        ),
        (
            "superseded",
            0,
            8,
            versions_from(grown.versions),
            versions.len(),
            &grown.closed,
            &|i, out| {
                out.extend_from_slice(&versions[i].superseded_at.to_le_bytes());
            },
        ),
        (
            "by_recorded",
            0,
            4,
            versions_from(grown.by_recorded),
            recorded.len(),
            &[],
            &|i, out| {
                u32_at(recorded, i, out);
            },
        ),
        (
            "by_superseded",
            0,
            4,
            versions_from(grown.by_superseded),
            superseded.len(),
            &[],
            &|i, out| {
                u32_at(superseded, i, out);
            },
        ),
        (
            "marks",
            let_go.bytes[0],
            MARK_BYTES,
            m0 + grown.marks,
            m0 + marks.len(),
            &[],
            &|i, out| {
                put_mark(out, &marks[i - m0]);
            },
        ),
        (
            "evidence",
            let_go.bytes[1],
            WIDTHS_BYTES,
            e0 + grown.evidence,
            e0 + evidence.len(),
            &touched,
            &|i, out| {
                put_widths(out, &evidence[i - e0]);
            },
        ),
    ];
    for (name, held_from, width, from, count, touched, put) in parts {
        let data = written.entry(name).or_default();
        let part = Held {
            name,
            data,
            from: held_from,
        };
        grow_part(out, part, width, (from, count), touched, put)?;
    }
    Ok(())
}

/// A part as last stored, held from byte `from` on (at a chunk's start:
/// the bytes before are stored, and no batch changes them).
pub(crate) struct Held<'a> {
    pub(crate) name: &'a str,
    pub(crate) data: &'a mut Vec<u8>,
    pub(crate) from: usize,
}

/// A part that grows record by record, as [`store_grown`] stores it: its
/// name, the first byte held of it as stored, record width, first changed
/// record, record count, records changed in place before that, and how
/// record i is encoded.
pub(crate) type GrowingPart<'a> = (
    &'static str,
    usize,
    usize,
    usize,
    usize,
    &'a [usize],
    &'a dyn Fn(usize, &mut Vec<u8>),
);

/// Brings part `part` as stored (its bytes from `part.from` on, records of
/// `width` bytes) up to date with `count` records: those from `from` on,
/// and those at `touched`, encoded again by `put` (records are numbered in
/// the whole part). Writes the chunks holding a byte that changed and
/// deletes those past the part's new end. A part whose stored length is not
/// what its records take is encoded and written whole — when it is held
/// whole; otherwise that is a store changed under the follow.
pub(crate) fn grow_part(
    out: &mut Chunks,
    part: Held,
    width: usize,
    (from, count): (usize, usize),
    touched: &[usize],
    put: &dyn Fn(usize, &mut Vec<u8>),
) -> rusqlite::Result<()> {
    let Held {
        name,
        data,
        from: held,
    } = part;
    let mut record = Vec::with_capacity(width);
    let old_len = held + data.len();
    let from_byte = from.saturating_mul(width);
    let grows = from <= count && old_len.is_multiple_of(width) && old_len >= from_byte;
    let held_ok = from_byte >= held && touched.iter().all(|&i| i >= from || i * width >= held);
    if !grows || !held_ok {
        if held > 0 {
            return Err(crate::store::read::damaged(format!(
                "the scrub index's part {name:?} is not as this follow stored it"
            )));
        }
        // Not stored as whole records up to `from`: encoded and compared whole.
        let mut whole = Vec::with_capacity(count * width);
        (0..count).for_each(|i| put(i, &mut whole));
        let before = std::mem::replace(data, whole);
        return store_part(out, name, data, Some(&before));
    }
    data.truncate(from_byte - held);
    (from..count).for_each(|i| put(i, data));
    let mut changed: Vec<usize> = Vec::new();
    for &i in touched.iter().filter(|&&i| i < from) {
        record.clear();
        put(i, &mut record);
        let Some(place) = data.get_mut(i * width - held..(i + 1) * width - held) else {
            continue;
        };
        place.copy_from_slice(&record);
        changed.push(i * width / CHUNK);
    }
    let chunks_of = |len: usize| len.div_ceil(CHUNK).max(1);
    let (old_chunks, new_chunks) = (chunks_of(old_len), chunks_of(held + data.len()));
    changed.extend(from_byte / CHUNK..new_chunks);
    changed.sort_unstable();
    changed.dedup();
    for k in changed.into_iter().filter(|&k| k < new_chunks) {
        let bytes = |at: usize| at.saturating_sub(held).min(data.len());
        let chunk = &data[bytes(k * CHUNK)..bytes((k + 1) * CHUNK)];
        let stored = (k < old_chunks).then(|| old_len.min((k + 1) * CHUNK) - k * CHUNK);
        out.put(&chunk_row(name, k), chunk, stored)?;
    }
    for k in new_chunks..old_chunks {
        out.delete(&chunk_row(name, k))?;
    }
    Ok(())
}

/// A part of the stored index that is missing or does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the scrub index's part {0:?} is missing or malformed; run `asof rebuild`")]
pub struct Malformed(pub &'static str);

/// The stored index, decoded; a missing or malformed part is a [`Malformed`]
/// naming it.
pub(crate) fn read(conn: &Connection) -> rusqlite::Result<Result<ScrubIndex, Malformed>> {
    Ok(decode(&stored_parts(conn)?).map_err(Malformed))
}

/// The stored parts whose chunks are whole (0, 1, … without a gap, each but
/// the last full), each chunks' bytes joined; a part stored otherwise is left
/// out, as if missing.
pub(crate) fn stored_parts(conn: &Connection) -> rusqlite::Result<HashMap<String, Vec<u8>>> {
    stored_parts_of(conn, |_| true)
}

/// [`stored_parts`], of the parts `wanted` names only.
pub(crate) fn stored_parts_of(
    conn: &Connection,
    wanted: impl Fn(&str) -> bool,
) -> rusqlite::Result<HashMap<String, Vec<u8>>> {
    // Two reads of the table, of one state of it (a follow may commit between).
    let _snapshot = snapshot(conn)?;
    let mut parts = HashMap::new();
    let mut blob = ChunkReader::default();
    for (name, list) in whole_chunks(conn, wanted)? {
        let mut data = vec![0; list.iter().map(|c| c.len).sum()];
        for chunk in list {
            blob.read(conn, &name, &chunk, &mut data)?;
        }
        parts.insert(name, data);
    }
    Ok(parts)
}

/// A read transaction on `conn` unless one is open: what is read under it is
/// of one state of the store.
pub(crate) fn snapshot(conn: &Connection) -> rusqlite::Result<Option<rusqlite::Transaction<'_>>> {
    match conn.is_autocommit() {
        true => Ok(Some(conn.unchecked_transaction()?)),
        false => Ok(None),
    }
}

/// One stored chunk of a part, as listed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunk {
    /// Its number in the part.
    pub(crate) k: usize,
    /// Its length in bytes.
    pub(crate) len: usize,
    rowid: i64,
}

/// The chunks of the parts `wanted` names whose chunks are whole (0, 1, …
/// without a gap, each but the last full), in order: from the chunks' names
/// and lengths alone (SQLite reads a blob's length without its bytes). A
/// part stored otherwise is left out, as if missing.
pub(crate) fn whole_chunks(
    conn: &Connection,
    wanted: impl Fn(&str) -> bool,
) -> rusqlite::Result<HashMap<String, Vec<Chunk>>> {
    let mut chunks: HashMap<String, Vec<Chunk>> = HashMap::new();
    let mut stmt =
        conn.prepare_cached("SELECT part, typeof(data) = 'blob', length(data), rowid FROM scrub")?;
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        let row = r.get_ref(0)?.as_str()?;
        let (name, k) = chunk_of(row);
        if !wanted(name) {
            continue;
        }
        // A chunk stored as anything but a blob, or numbered oddly, does not decode.
        let chunk = match (k, r.get::<_, bool>(1)?) {
            (Some(k), true) => Chunk {
                k,
                len: r.get::<_, i64>(2)? as usize,
                rowid: r.get(3)?,
            },
            _ => Chunk {
                k: usize::MAX,
                len: 0,
                rowid: 0,
            },
        };
        chunks.entry(name.to_owned()).or_default().push(chunk);
    }
    chunks.retain(|_, list| {
        list.sort_unstable_by_key(|c| c.k);
        let last = list.len() - 1;
        (list.iter().enumerate()).all(|(i, c)| c.k == i && (i == last || c.len == CHUNK))
    });
    Ok(chunks)
}

/// Reads chunks straight into their places (incremental blob I/O: no copy
/// of the value in between), one blob handle moved from row to row.
#[derive(Default)]
pub(crate) struct ChunkReader<'c>(Option<rusqlite::blob::Blob<'c>>);

impl<'c> ChunkReader<'c> {
    /// Reads `chunk` of part `name` into its place in `data`, the part's bytes.
    pub(crate) fn read(
        &mut self,
        conn: &'c Connection,
        name: &str,
        chunk: &Chunk,
        data: &mut [u8],
    ) -> rusqlite::Result<()> {
        let blob = match &mut self.0 {
            Some(blob) => {
                blob.reopen(chunk.rowid)?;
                blob
            }
            None => (self.0).insert(conn.blob_open(
                rusqlite::MAIN_DB,
                "scrub",
                "data",
                chunk.rowid,
                true,
            )?),
        };
        let k = chunk.k;
        match data.get_mut(k * CHUNK..k * CHUNK + chunk.len) {
            Some(place) if blob.len() == chunk.len => blob.read_at_exact(place, 0),
            _ => Err(crate::store::read::damaged(format!(
                "the scrub index's chunk {k} of part {name:?} is not as long as its row says"
            ))),
        }
    }
}

/// The part a stored chunk's row belongs to and its number (`None`: not a
/// chunk number).
pub(crate) fn chunk_of(row: &str) -> (&str, Option<usize>) {
    match row.split_once('/') {
        None => (row, Some(0)),
        Some((name, k)) => (name, k.parse().ok().filter(|&k| k > 0)),
    }
}

/// Bytes per stored chunk of a part: a follow's batch writes again only the
/// chunks whose bytes changed (most parts grow at their end).
pub(crate) const CHUNK: usize = 1 << 18;

/// The rows a part is stored as: chunk 0 under its name, chunk k under
/// "name/k"; an empty part is one empty chunk.
pub(crate) fn chunks<'a>(name: &str, data: &'a [u8]) -> impl Iterator<Item = (String, &'a [u8])> {
    let empty: &[u8] = &[];
    let pieces: Vec<&[u8]> = if data.is_empty() {
        vec![empty]
    } else {
        data.chunks(CHUNK).collect()
    };
    let name = name.to_owned();
    pieces
        .into_iter()
        .enumerate()
        .map(move |(k, piece)| (chunk_row(&name, k), piece))
}

/// The row chunk `k` of part `name` is stored under.
pub(crate) fn chunk_row(name: &str, k: usize) -> String {
    if k == 0 {
        name.to_owned()
    } else {
        format!("{name}/{k}")
    }
}
