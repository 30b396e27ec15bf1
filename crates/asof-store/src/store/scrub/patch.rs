//! Patching a parent's scrub index for a fork that replayed some pairs
//! (`patch`), instead of computing it afresh.

use super::*;

/// What a fork changed in the copy of its parent's store
/// (crates/asof-store/src/fork/copy.rs), for `patch`.
#[derive(Debug, Default)]
pub struct Replaced<'a> {
    /// The (topic, agent) header positions of the pairs replayed again:
    /// every version of theirs was deleted and written anew, with ids after
    /// every other version's.
    pub pairs: HashSet<(u32, u32)>,
    /// The seqs of the events deleted or replayed again.
    pub events: Vec<u64>,
    /// The ids of the evidence items whose citations may have changed.
    pub cited: Vec<&'a str>,
}

/// Brings the index stored in a copy of a parent store up to date with what
/// a fork `replaced` in the copy: the parent's index, less the replaced
/// pairs' versions and the events' marks, plus what the copy now holds of
/// them — the same index as a fresh [`compute`], at the cost of decoding
/// and encoding the index and of the pairs and events read, rather than of
/// every row. What the copy holds of them is read first; then the versions'
/// parts change on this thread while the marks' change on another, and only
/// the chunks that changed are written. An index that does not decode, or
/// where a new version's id is taken, is computed afresh (then it returns
/// `false`).
pub(crate) fn patch(
    conn: &Connection,
    header: &Header,
    replaced: &Replaced,
) -> rusqlite::Result<bool> {
    let new = versions_of_pairs(conn, header, &replaced.pairs)?;
    let fresh = fresh_marks(conn, header, &replaced.events, &replaced.cited)?;
    let is_marks = |name: &str| MARK_PARTS.contains(&name);
    let marks_stored = stored_parts_of(conn, is_marks)?;
    let mut pairs: Vec<(u32, u32)> = replaced.pairs.iter().copied().collect();
    pairs.sort_unstable();
    let (versions_stored, versions, marks) = std::thread::scope(|scope| {
        let marks = scope.spawn(|| {
            let (marks, evidence) = decode_marks(&marks_stored).ok()?;
            let mut index = ScrubIndex {
                marks,
                evidence,
                ..ScrubIndex::default()
            };
            index.apply_marks(&fresh);
            Some(encode_marks(&index))
        });
        let stored = stored_parts_of(conn, |name| !is_marks(name))?;
        // The checkpoints are computed again: the stored ones are not decoded.
        let versions = (|| {
            let mut index = decode_versions(&stored, false)
                .ok()
                .filter(|index| index.stride == CHECKPOINT)?;
            let new = index.with_claims(new);
            index.replace_versions(|v| pairs.binary_search(&(v.topic, v.agent)).is_ok(), new)?;
            Some(encode_versions(&index))
        })();
        let marks = marks
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok::<_, rusqlite::Error>((stored, versions, marks))
    })?;
    let (Some(versions), Some(marks)) = (versions, marks) else {
        return write(conn, header).map(|()| false);
    };
    let mut stored = versions_stored;
    stored.extend(marks_stored);
    let before: HashMap<&'static str, Vec<u8>> = PARTS
        .iter()
        .filter_map(|&name| stored.remove(name).map(|data| (name, data)))
        .collect();
    let parts: HashMap<&'static str, Vec<u8>> = versions.into_iter().chain(marks).collect();
    store_parts(&mut Chunks::new(conn), &parts, Some(&before))?;
    // Not a follow's batch: a reader reads the index whole.
    crate::store::batches::clear(conn)?;
    Ok(true)
}

/// The versions of `pairs` as `conn` stores them, each with its claim's text.
pub(crate) fn versions_of_pairs(
    conn: &Connection,
    header: &Header,
    pairs: &HashSet<(u32, u32)>,
) -> rusqlite::Result<Vec<(VersionKey, String)>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {VERSION_KEY} FROM versions WHERE topic = ?1 AND agent = ?2"
    ))?;
    let mut texts = conn.prepare_cached("SELECT text FROM claims WHERE code = ?1")?;
    let mut new = Vec::new();
    for &(topic, agent) in pairs {
        let mut q = stmt.query(params![topic, agent])?;
        while let Some(r) = q.next()? {
            let (v, code) = version_key(r, header)?;
            let text: Option<String> = texts.query_row([code], |r| r.get(0)).optional()?;
            new.push((v, text.unwrap_or_default()));
        }
    }
    Ok(new)
}

/// Merges `old` (less the marks of `fresh.events`) with `fresh.again` by
/// (recorded_at, seq), handing `push` each mark in order with, for an
/// evidence mark of `old`, its widths as they were (`old_widths` follows the
/// evidence marks of `old`).
pub(crate) fn merge_marks(
    old: Vec<MarkKey>,
    old_widths: &mut impl Iterator<Item = EvidenceWidths>,
    fresh: &FreshMarks,
    push: &mut impl FnMut(MarkKey, Option<EvidenceWidths>),
) {
    let key = |m: &MarkKey| (m.recorded_at, m.seq);
    let mut again = fresh.again.iter().peekable();
    for m in old {
        let was = (m.kind == MarkKind::Evidence)
            .then(|| old_widths.next())
            .flatten();
        if fresh.events.binary_search(&m.seq).is_ok() {
            continue;
        }
        while let Some(a) = again.next_if(|a| key(a) < key(&m)) {
            push(*a, None);
        }
        push(m, was);
    }
    again.for_each(|a| push(*a, None));
}

/// What the store now holds of the events a change replaced (deleted or
/// written again), read before the index changes so that the change itself
/// needs no connection ([`ScrubIndex::apply_marks`]).
pub(crate) struct FreshMarks {
    /// The replaced events' seqs, sorted.
    pub(crate) events: Vec<u64>,
    /// The marks of those still stored, in (recorded_at, seq) order.
    pub(crate) again: Vec<MarkKey>,
    /// By seq, the widths of the evidence items whose citations may have
    /// changed: those named, and those among the events.
    pub(crate) widths: HashMap<u64, EvidenceWidths, ShortKeys>,
}

/// The marks of `events` as stored now, and the widths of the evidence
/// items `cited` names (and of the evidence among `events`), as their
/// citations now stand.
pub(crate) fn fresh_marks(
    conn: &Connection,
    header: &Header,
    events: &[u64],
    cited: &[&str],
) -> rusqlite::Result<FreshMarks> {
    let mut events = events.to_vec();
    events.sort_unstable();
    events.dedup();
    let mut again = Vec::new();
    // The evidence among `events` is read with its mark: its seq and own
    // widths are known (a run's end writes its items again with the events
    // citing them), and only the items cited from elsewhere are looked up.
    let mut own: HashMap<String, (u64, EvidenceWidths)> = HashMap::default();
    for read in marks_of(conn, header, &events)? {
        if let Some((id, widths)) = read.evidence {
            own.insert(id, (read.mark.seq, widths));
        }
        again.push(read.mark);
    }
    again.sort_unstable_by_key(|m| (m.recorded_at, m.seq));
    let mut item =
        conn.prepare_cached("SELECT seq, source FROM events WHERE id = ?1 AND kind = 'evidence'")?;
    let mut citing = conn.prepare_cached(
        "SELECT e.id FROM citations c JOIN events e ON e.seq = c.seq WHERE c.evidence = ?1",
    )?;
    // Each evidence item once, however many events cite it.
    let evidence: HashSet<&str> = (cited.iter().copied())
        .chain(own.keys().map(String::as_str))
        .collect();
    let mut widths = HashMap::default();
    for id in evidence {
        let (seq, mut w) = match own.get(id) {
            Some(&known) => known,
            None => {
                let found: Option<(i64, Option<String>)> = item
                    .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()?;
                let Some((seq, source)) = found else { continue };
                (seq as u64, EvidenceWidths::own(id, source.as_deref()))
            }
        };
        let mut q = citing.query([id])?;
        while let Some(r) = q.next()? {
            w.cited = cite(w.cited, width(r.get_ref(0)?.as_str()?));
        }
        widths.insert(seq, w);
    }
    Ok(FreshMarks {
        events,
        again,
        widths,
    })
}

/// The marks of the stored events among `events` (seqs, ascending, each
/// once), in seq order. A follow's batch rewrites a run of the log's last
/// events: when the seqs lie close together they are read in one pass over
/// their range (and their outcomes in another), not a look-up each.
fn marks_of(conn: &Connection, header: &Header, events: &[u64]) -> rusqlite::Result<Vec<MarkRead>> {
    let mut marks = Vec::with_capacity(events.len());
    let (Some(&low), Some(&high)) = (events.first(), events.last()) else {
        return Ok(marks);
    };
    // Every seq of the range read, at most twice as many as asked for.
    if high - low < 2 * events.len() as u64 {
        marks_between(conn, header, (low as i64, high as i64), |seq, read| {
            if events.binary_search(&(seq as u64)).is_ok() {
                marks.push(read);
            }
        })?;
        return Ok(marks);
    }
    let reader = MarkReader::new(header);
    let mut mark = conn.prepare_cached(&format!("{MARK_QUERY} WHERE e.seq = ?1"))?;
    let mut outcome = conn.prepare_cached("SELECT effect FROM outcomes WHERE seq = ?1")?;
    for &seq in events {
        let effect: Option<String> = outcome.query_row([seq as i64], |r| r.get(0)).optional()?;
        let effect = effect.as_deref().map(EffectKind::parse);
        if let Some(read) = mark
            .query_row([seq as i64], |r| reader.read(r, effect))
            .optional()?
        {
            marks.push(read);
        }
    }
    Ok(marks)
}

impl ScrubIndex {
    /// `new` with each claim's text as its position in `claims` (texts it
    /// lacks added at its end).
    fn with_claims(&mut self, new: Vec<(VersionKey, String)>) -> Vec<VersionKey> {
        let mut by_text: HashMap<String, u32> = (self.claims.iter().cloned()).zip(0..).collect();
        new.into_iter()
            .map(|(mut v, text)| {
                v.claim = *by_text.entry(text).or_insert_with_key(|text| {
                    self.claims.push(text.clone());
                    self.claims.len() as u32 - 1
                });
                v
            })
            .collect()
    }

    /// Drops the versions `gone` selects and puts `new` (claims as
    /// positions in `claims`) in their places by id; every order, the
    /// checkpoints and the claims' numbering follow. Returns each old claim
    /// position's new one (`u32::MAX`: no version has it now), or `None`
    /// when a new id is already taken (the index is then left unusable).
    pub(crate) fn replace_versions(
        &mut self,
        gone: impl Fn(&VersionKey) -> bool,
        mut new: Vec<VersionKey>,
    ) -> Option<Vec<u32>> {
        new.sort_unstable_by_key(|v| v.id);
        // Old position → new (`u32::MAX`: dropped), and where the new ones went.
        let old = std::mem::take(&mut self.versions);
        let mut remap = vec![u32::MAX; old.len()];
        let mut added: Vec<u32> = Vec::with_capacity(new.len());
        let mut versions = Vec::with_capacity(old.len() + new.len());
        let mut new = new.into_iter().peekable();
        for (i, v) in old.into_iter().enumerate() {
            if gone(&v) {
                continue;
            }
            while let Some(n) = new.next_if(|n| n.id < v.id) {
                added.push(versions.len() as u32);
                versions.push(n);
            }
            remap[i] = versions.len() as u32;
            versions.push(v);
        }
        for n in new {
            added.push(versions.len() as u32);
            versions.push(n);
        }
        if versions.windows(2).any(|w| w[0].id >= w[1].id) {
            return None;
        }
        // Claims numbered in order of first use by id, as a fresh computation does.
        let mut number = vec![u32::MAX; self.claims.len()];
        let mut claims = Vec::new();
        for v in &mut versions {
            let n = &mut number[v.claim as usize];
            if *n == u32::MAX {
                *n = claims.len() as u32;
                claims.push(std::mem::take(&mut self.claims[v.claim as usize]));
            }
            v.claim = *n;
        }
        self.claims = claims;
        let kept = |list: &[u32]| -> Vec<u32> {
            list.iter()
                .map(|&i| remap[i as usize])
                .filter(|&i| i != u32::MAX)
                .collect()
        };
        let recorded = |i: &u32| (versions[*i as usize].recorded_at, versions[*i as usize].id);
        let superseded = |i: &u32| {
            let v = &versions[*i as usize];
            (v.superseded_at, v.id)
        };
        let mut closed: Vec<u32> = (added.iter().copied())
            .filter(|&i| versions[i as usize].superseded_at != OPEN)
            .collect();
        added.sort_unstable_by_key(recorded);
        self.by_recorded = merge_by_key(kept(&self.by_recorded), added, recorded);
        closed.sort_unstable_by_key(superseded);
        self.by_superseded = merge_by_key(kept(&self.by_superseded), closed, superseded);
        self.checkpoints = checkpoints(&versions, &self.by_recorded, self.stride);
        self.versions = versions;
        Some(number)
    }

    /// Drops the marks of `events` and adds those still stored, as stored,
    /// and takes the widths of the evidence items `cited` names again.
    pub(crate) fn replace_marks(
        &mut self,
        conn: &Connection,
        header: &Header,
        events: &[u64],
        cited: &[&str],
    ) -> rusqlite::Result<()> {
        let fresh = fresh_marks(conn, header, events, cited)?;
        self.apply_marks(&fresh);
        Ok(())
    }

    /// Drops the marks of `fresh.events`, adds `fresh.again` in their
    /// places, and takes the evidence widths `fresh.widths` gives.
    pub(crate) fn apply_marks(&mut self, fresh: &FreshMarks) {
        let old = std::mem::take(&mut self.marks);
        let mut old_widths = std::mem::take(&mut self.evidence).into_iter();
        let mut marks = Vec::with_capacity(old.len() + fresh.again.len());
        let mut evidence = Vec::with_capacity(old_widths.len() + fresh.again.len());
        let mut push = |m: MarkKey, was: Option<EvidenceWidths>| {
            if m.kind == MarkKind::Evidence {
                let w = fresh.widths.get(&m.seq).copied().or(was);
                evidence.push(w.unwrap_or_default());
            }
            marks.push(m);
        };
        merge_marks(old, &mut old_widths, fresh, &mut push);
        self.marks = marks;
        self.evidence = evidence;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use asof_synth::GenConfig;

    /// The marks of a set of events are the same read a look-up at a time
    /// or in one pass over their range — dense sets (a batch's rewritten
    /// run) take the pass, sparse ones the look-ups — and seqs not stored
    /// have none.
    #[test]
    fn marks_read_over_a_range_are_those_looked_up_one_at_a_time() {
        let store = crate::testing::store_of(GenConfig {
            events: 400,
            topics: 12,
            agents: 3,
            seed: 5,
        });
        let (conn, header) = (store.connection(), store.header());
        let one_by_one = |events: &[u64]| -> Vec<String> {
            (events.iter())
                .flat_map(|&seq| marks_of(conn, header, &[seq]).expect("read"))
                .map(|m| format!("{:?} {} {:?}", m.mark, m.id_width, m.evidence))
                .collect()
        };
        let at_once = |events: &[u64]| -> Vec<String> {
            (marks_of(conn, header, events).expect("read").into_iter())
                .map(|m| format!("{:?} {} {:?}", m.mark, m.id_width, m.evidence))
                .collect()
        };
        let last: i64 =
            (conn.query_row("SELECT max(seq) FROM events", [], |r| r.get(0))).expect("a log");
        let last = last as u64;
        // Past the log's end too.
        let dense: Vec<u64> = (last - 200..=last + 20).filter(|s| s % 3 != 0).collect();
        let sparse: Vec<u64> = (1..=last).step_by(37).collect();
        for events in [dense, sparse] {
            let read = at_once(&events);
            assert_eq!(read, one_by_one(&events));
            let stored = events.iter().filter(|&&s| s <= last).count();
            assert_eq!(read.len(), stored, "one mark a stored event");
        }
        assert!(at_once(&[]).is_empty());
    }
}
