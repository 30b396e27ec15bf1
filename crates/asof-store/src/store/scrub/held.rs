//! The stored index as a reader that holds it in memory keeps it (a live
//! screen's timeline): each part's bytes as last read, so that after a
//! follow's batches it reads again only the chunks they wrote (the store's
//! `batches`) and decodes only the records those chunks hold.

use super::*;
use crate::store::batches::Since;
use std::ops::Range;

/// What a reader keeps of the stored index besides the index decoded.
#[derive(Debug, Default)]
pub struct Held {
    /// Each part's bytes, whole, as last read.
    parts: HashMap<String, Vec<u8>>,
    /// The newest of a follow's batches the index is as of (`None`: none
    /// recorded, so the next read is whole).
    pub(crate) batch: Option<i64>,
}

/// The stored index decoded and what a reader keeps to read it again; a
/// missing or malformed part is a [`Malformed`] naming it.
pub(crate) fn read_held(
    conn: &Connection,
) -> rusqlite::Result<Result<(ScrubIndex, Held), Malformed>> {
    let _snapshot = snapshot(conn)?;
    let batch = crate::store::batches::newest(conn)?;
    let parts = stored_parts(conn)?;
    Ok(match decode(&parts) {
        Ok(index) => Ok((index, Held { parts, batch })),
        Err(part) => Err(Malformed(part)),
    })
}

/// What reading the index again read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadAgain {
    /// The chunks read.
    pub chunks: usize,
    /// The marks before this one are as they were.
    pub marks_from: usize,
}

/// Brings `index` (and `held`, what it was decoded from) up to date with the
/// stored index, the follow's batches `since` told of: the chunks they wrote,
/// and those whose length is not the one held, read again into the parts
/// held, and the records in them decoded again. Returns what it read, or
/// `None` when the batches cannot say or what was read does not decode: then
/// read the index whole (`index` and `held` may be part way).
pub(crate) fn read_again(
    conn: &Connection,
    index: &mut ScrubIndex,
    held: &mut Held,
    since: &Since,
) -> rusqlite::Result<Option<ReadAgain>> {
    let Some(rows) = &since.rows else {
        return Ok(None);
    };
    let _snapshot = snapshot(conn)?;
    let listed = whole_chunks(conn, |name| PARTS.contains(&name))?;
    let mut parts = std::mem::take(&mut held.parts);
    let mut changed: HashMap<&'static str, Vec<Range<usize>>> = HashMap::new();
    let mut reader = ChunkReader::default();
    let mut read = 0;
    for name in PARTS {
        let (Some(list), Some(data)) = (listed.get(name), parts.get_mut(name)) else {
            held.parts = parts;
            return Ok(None);
        };
        let old_len = data.len();
        let new_len: usize = list.iter().map(|c| c.len).sum();
        data.resize(new_len, 0);
        let mut ranges = Vec::new();
        for chunk in list {
            let start = chunk.k * CHUNK;
            let was = old_len.saturating_sub(start).min(CHUNK);
            if was != chunk.len || rows.contains(&chunk_row(name, chunk.k)) {
                reader.read(conn, name, chunk, data)?;
                ranges.push(start..start + chunk.len);
                read += 1;
            }
        }
        changed.insert(name, ranges);
    }
    held.parts = parts;
    let marks_from = (changed.get("marks"))
        .and_then(|ranges| ranges.iter().map(|r| r.start / MARK_BYTES).min())
        .unwrap_or(index.marks.len());
    match patch_decoded(index, &held.parts, &changed) {
        Ok(()) => {
            held.batch = since.newest;
            Ok(Some(ReadAgain {
                chunks: read,
                marks_from: marks_from.min(index.marks.len()),
            }))
        }
        // Not what a whole decode would give: read whole, which names the part.
        Err(_) => {
            held.batch = None;
            Ok(None)
        }
    }
}

/// The records of `width` bytes among `count` that the byte `ranges` touch,
/// in order, overlapping ones merged.
fn records_in(ranges: &[Range<usize>], width: usize, count: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut touched: Vec<Range<usize>> = (ranges.iter())
        .map(|r| (r.start / width).min(count)..r.end.div_ceil(width).min(count))
        .filter(|r| !r.is_empty())
        .collect();
    touched.sort_unstable_by_key(|r| r.start);
    for r in touched {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// Decodes again, into `list` resized to the part's record count, the
/// records of `part` (`width` bytes each) that `ranges` touch; `take` reads
/// one into its place. A part whose length is not whole records is `Err`,
/// and so is one whose records past the `old` ones decoded before are not
/// all in `ranges` (the chunks that hold them changed length or are new).
fn patch_records<T: Clone>(
    list: &mut Vec<T>,
    (name, bytes): (&'static str, &[u8]),
    (width, old): (usize, usize),
    ranges: &[Range<usize>],
    blank: T,
    mut take: impl FnMut(&mut Bytes, &mut T) -> Option<()>,
) -> Result<(), &'static str> {
    if !bytes.len().is_multiple_of(width) {
        return Err(name);
    }
    let count = bytes.len() / width;
    list.resize(count, blank);
    let mut covered = old.min(count);
    for r in records_in(ranges, width, count) {
        if r.start > covered {
            return Err(name);
        }
        covered = covered.max(r.end);
        for i in r {
            let mut b = Bytes(&bytes[i * width..(i + 1) * width]);
            take(&mut b, &mut list[i]).ok_or(name)?;
        }
    }
    match covered == count {
        true => Ok(()),
        false => Err(name),
    }
}

/// Brings `index`, decoded from parts that since changed in the byte
/// `changed` ranges, up to date with `parts` as they are now: the records
/// in those ranges decoded again, the claims and checkpoints decoded whole
/// when they changed, and every check [`decode`] makes made again.
fn patch_decoded(
    index: &mut ScrubIndex,
    parts: &HashMap<String, Vec<u8>>,
    changed: &HashMap<&'static str, Vec<Range<usize>>>,
) -> Result<(), &'static str> {
    let part = |name: &'static str| parts.get(name).map(|b| (name, b.as_slice())).ok_or(name);
    let ranges = |name: &'static str| changed.get(name).map_or(&[][..], Vec::as_slice);
    let old_versions = index.versions.len();
    let blank = VersionKey {
        id: 0,
        recorded_at: 0,
        superseded_at: OPEN,
        valid_from: 0,
        topic: 0,
        agent: 0,
        claim: 0,
    };
    patch_records(
        &mut index.versions,
        part("versions")?,
        (VERSION_BYTES, old_versions),
        ranges("versions"),
        blank,
        |b, v| {
            let superseded_at = v.superseded_at;
            *v = VersionKey {
                superseded_at,
                ..take_version(b)?
            };
            Some(())
        },
    )?;
    let n = index.versions.len();
    let superseded = part("superseded")?;
    if superseded.1.len() != n * 8 {
        return Err("superseded");
    }
    patch_records(
        &mut index.versions,
        superseded,
        (8, old_versions),
        ranges("superseded"),
        blank,
        |b, v| {
            v.superseded_at = b.i64()?;
            Some(())
        },
    )?;
    if !ranges("claims").is_empty() {
        index.claims = take_claims(part("claims")?.1, n).ok_or("claims")?;
    }
    // Positions among the versions: those decoded again are checked as
    // they are read; every one when there are fewer versions than before.
    let position = |i: u32| (i as usize) < n;
    for name in ["by_recorded", "by_superseded"] {
        let list = match name {
            "by_recorded" => &mut index.by_recorded,
            _ => &mut index.by_superseded,
        };
        let old = list.len();
        patch_records(list, part(name)?, (4, old), ranges(name), 0, |b, i| {
            *i = b.u32().filter(|&i| position(i))?;
            Some(())
        })?;
        if n < old_versions && !list.iter().all(|&i| position(i)) {
            return Err(name);
        }
    }
    let claims_ok = (index.versions.iter()).all(|v| (v.claim as usize) < index.claims.len());
    if !claims_ok || index.by_recorded.len() != n {
        return Err("versions");
    }
    if !ranges("checkpoints").is_empty() || n != old_versions {
        let mut b = Bytes(part("checkpoints")?.1);
        let stride = b.u32().filter(|&s| s > 0).ok_or("checkpoints")? as usize;
        index.checkpoints = decode_checkpoints(b, n, stride)?;
        index.stride = stride;
    }
    let blank = MarkKey {
        seq: 0,
        recorded_at: 0,
        kind: MarkKind::Evidence,
        effect: EffectKind::Recorded,
        topic: NONE,
        agent: NONE,
    };
    let old = index.marks.len();
    patch_records(
        &mut index.marks,
        part("marks")?,
        (MARK_BYTES, old),
        ranges("marks"),
        blank,
        |b, m| {
            *m = take_mark(b)?;
            Some(())
        },
    )?;
    let old = index.evidence.len();
    patch_records(
        &mut index.evidence,
        part("evidence")?,
        (WIDTHS_BYTES, old),
        ranges("evidence"),
        EvidenceWidths::default(),
        |b, w| {
            *w = take_widths(b)?;
            Some(())
        },
    )?;
    let evidence_marks = (index.marks.iter())
        .filter(|m| m.kind == MarkKind::Evidence)
        .count();
    match index.evidence.len() == evidence_marks {
        true => Ok(()),
        false => Err("evidence"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{index, scrub_table};
    use super::*;
    use crate::store::Seqs;
    use crate::store::batches;

    /// Writes `new` over `old` as a follow's batch writes it (the chunks
    /// that differ) and records the batch.
    fn batch(conn: &Connection, old: &ScrubIndex, new: &ScrubIndex) {
        let encoded = |index: &ScrubIndex| -> HashMap<&'static str, Vec<u8>> {
            encode(index).into_iter().collect()
        };
        let mut out = Chunks::new(conn);
        store_parts(&mut out, &encoded(new), Some(&encoded(old))).expect("stored");
        let rows = out.rows;
        batches::record(conn, &Seqs::all(), &rows).expect("recorded");
    }

    /// An index read again after a follow's batches wrote some of its
    /// chunks is the index read whole, whatever changed: records appended
    /// across a chunk's edge, closing instants changed in place far from
    /// the end, parts cut shorter, the claims and the checkpoints changed —
    /// and only the chunks written (or of another length) are read.
    #[test]
    fn an_index_read_again_is_the_index_read_whole() {
        let conn = scrub_table();
        let n = CHUNK / VERSION_BYTES * 2 + 100;
        let mut now = index(n);
        store(&conn, &now).expect("stored");
        batch(&conn, &now, &now);
        let (mut read, mut held) = read_held(&conn).expect("read").expect("decodes");
        assert_eq!(read, now);
        let chunks: usize = whole_chunks(&conn, |_| true)
            .expect("listed")
            .values()
            .map(Vec::len)
            .sum();
        type Step<'a> = Box<dyn Fn(&ScrubIndex) -> ScrubIndex + 'a>;
        let mut steps: Vec<(&str, Step)> = vec![
            (
                "appended across a chunk's edge",
                Box::new(|_| index(n + CHUNK / MARK_BYTES)),
            ),
            (
                "closed in place",
                Box::new(|i| {
                    let mut i = i.clone();
                    for v in [3, 5, 20_000] {
                        i.versions[v].superseded_at = 7;
                    }
                    i.by_superseded.push(3);
                    i
                }),
            ),
            (
                "cut shorter",
                Box::new(|_| index(n - CHUNK / VERSION_BYTES)),
            ),
            (
                "claims and checkpoints",
                Box::new(|i| {
                    let mut i = i.clone();
                    i.claims[1] = "another claim".into();
                    i.checkpoints[0].push(0);
                    i
                }),
            ),
            ("nothing", Box::new(|i| i.clone())),
        ];
        for (what, step) in steps.drain(..) {
            let next = step(&now);
            batch(&conn, &now, &next);
            let since = batches::since(&conn, held.batch)
                .expect("since")
                .expect("told");
            let chunks_read = read_again(&conn, &mut read, &mut held, &since)
                .expect("read again")
                .expect("patched")
                .chunks;
            assert_eq!(read, next, "{what}");
            assert_eq!(
                read,
                read_held(&conn).expect("read").expect("decodes").0,
                "{what}"
            );
            assert!(
                chunks_read < chunks,
                "{what}: {chunks_read} chunks of {chunks} read"
            );
            now = next;
        }
    }

    /// What cannot be read again by its batches is said, to be read whole:
    /// a batch not recorded (a writer that cleared the record), a part that
    /// no longer decodes.
    #[test]
    fn what_the_batches_cannot_say_is_read_whole() {
        let conn = scrub_table();
        let now = index(300);
        store(&conn, &now).expect("stored");
        batch(&conn, &now, &now);
        let (_, held) = read_held(&conn).expect("read").expect("decodes");
        let next = index(400);
        store(&conn, &next).expect("stored whole");
        assert_eq!(
            batches::since(&conn, held.batch).expect("since"),
            None,
            "cleared"
        );
        batch(&conn, &next, &next);
        let since = batches::since(&conn, held.batch).expect("since");
        assert_eq!(since, None, "the batch seen is gone");
        // A part cut by a byte: the patch is refused, not taken.
        let (mut read2, mut held2) = read_held(&conn).expect("read").expect("decodes");
        conn.execute(
            "UPDATE scrub SET data = substr(data, 1, length(data) - 1) WHERE part = 'marks'",
            [],
        )
        .expect("cut");
        batches::record(&conn, &Seqs::all(), &["marks".to_owned()]).expect("recorded");
        let since = batches::since(&conn, held2.batch)
            .expect("since")
            .expect("told");
        assert_eq!(
            read_again(&conn, &mut read2, &mut held2, &since).expect("read"),
            None
        );
        assert_eq!(held2.batch, None, "the next read is whole");
    }

    #[test]
    fn the_records_a_byte_range_touches_are_merged_in_order() {
        // Ranges as (start, end) pairs.
        let r = |ranges: &[(usize, usize)], width, count| -> Vec<(usize, usize)> {
            let ranges: Vec<Range<usize>> = ranges.iter().map(|&(a, b)| a..b).collect();
            let touched = records_in(&ranges, width, count);
            touched.into_iter().map(|t| (t.start, t.end)).collect()
        };
        assert_eq!(r(&[], 4, 10), []);
        assert_eq!(r(&[(0, 4)], 4, 10), [(0, 1)]);
        // A record cut by a chunk's edge is in both chunks' ranges.
        assert_eq!(r(&[(0, 6)], 4, 10), [(0, 2)]);
        assert_eq!(r(&[(6, 9), (0, 5)], 4, 10), [(0, 3)]);
        assert_eq!(r(&[(0, 4), (12, 16)], 4, 10), [(0, 1), (3, 4)]);
        // Past the records' end: clipped.
        assert_eq!(r(&[(36, 48)], 4, 10), [(9, 10)]);
        assert_eq!(r(&[(40, 48)], 4, 10), []);
    }
}
