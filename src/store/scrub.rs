//! The scrub index: what the TUI's timeline needs to open a store without
//! reading every row (SPEC §12), derived from the stored log and versions and
//! kept in the `scrub` table (one blob per part).
//!
//! ```text
//! part           one entry per           holds
//! versions       version, by id          id, recorded, superseded, valid from,
//!                                        topic · agent (header positions), claim
//! claims         distinct claim          its text (codes above index this list)
//! by_recorded    version                 position, ordered by (recorded_at, id)
//! by_superseded  closed version          position, ordered by (superseded_at, id)
//! checkpoints    CHECKPOINT versions     the positions held just after each
//!                of by_recorded          stride (a stabbing query reads one
//!                                        checkpoint plus < CHECKPOINT versions)
//! marks          event, by (recorded_at, seq, kind, outcome, topic, agent
//!                seq)
//! evidence       evidence item, in       display widths of its id, its source
//!                the marks' order        and the ids of what cites it
//! ```
//!
//! Every writer of derived rows (load, rebuild, fork) calls [`write`] once the
//! versions are final; `check` compares the stored index with [`compute`] on
//! the same tables, byte for byte, and `rebuild` writes it afresh. The blobs
//! are little-endian fixed-width records; a blob of the wrong length is a
//! damaged store, never a panic.

use crate::engine::EffectKind;
use crate::model::Header;
use crate::time::{Micros, OPEN};
use rusqlite::{Connection, params};
use std::collections::HashMap;

/// Versions per checkpoint stride, in recorded order.
pub const CHECKPOINT: usize = 8192;

/// "No header position": a mark without a topic or agent, or one not in the header.
pub const NONE: u32 = u32::MAX;

/// What kind of mark an event leaves on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkKind {
    Evidence,
    Assertion,
    Reconfirmation,
    Retraction,
    /// A verify event (SPEC §9): its agent is who judged, its claim the state,
    /// and it cites the evidence judged.
    Verification,
}

impl MarkKind {
    pub const ALL: [MarkKind; 5] = [
        MarkKind::Evidence,
        MarkKind::Assertion,
        MarkKind::Reconfirmation,
        MarkKind::Retraction,
        MarkKind::Verification,
    ];

    pub fn index(self) -> usize {
        match self {
            MarkKind::Evidence => 0,
            MarkKind::Assertion => 1,
            MarkKind::Reconfirmation => 2,
            MarkKind::Retraction => 3,
            MarkKind::Verification => 4,
        }
    }

    /// The mark an event of stored `kind` leaves, given what replaying it did.
    pub fn of(kind: &str, effect: EffectKind) -> MarkKind {
        match (kind, effect) {
            ("evidence", _) => MarkKind::Evidence,
            ("retract", _) => MarkKind::Retraction,
            ("verify", _) => MarkKind::Verification,
            (_, EffectKind::Reconfirmed) => MarkKind::Reconfirmation,
            _ => MarkKind::Assertion,
        }
    }
}

const EFFECTS: [EffectKind; 5] = [
    EffectKind::Recorded,
    EffectKind::Applied,
    EffectKind::Reconfirmed,
    EffectKind::ZeroWidth,
    EffectKind::NoMatch,
];

/// One version as the timeline indexes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionKey {
    pub id: u64,
    pub recorded_at: Micros,
    pub superseded_at: Micros,
    pub valid_from: Micros,
    pub topic: u32,
    pub agent: u32,
    pub claim: u32,
}

impl VersionKey {
    /// Held at recorded instant `at`.
    pub fn held_at(&self, at: Micros) -> bool {
        self.recorded_at <= at && at < self.superseded_at
    }
}

/// One event as the timeline indexes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkKey {
    pub seq: u64,
    pub recorded_at: Micros,
    pub kind: MarkKind,
    pub effect: EffectKind,
    /// For a retraction of an assertion, that assertion's topic.
    pub topic: u32,
    /// For a verification, who judged (when it is an agent of the header).
    pub agent: u32,
}

/// Display widths (characters) of an evidence item's columns in the TUI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EvidenceWidths {
    pub id: u16,
    pub source: u16,
    /// The ids of the events citing it, comma-separated.
    pub cited: u16,
}

/// The whole index, decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScrubIndex {
    /// Versions per checkpoint stride ([`CHECKPOINT`] in a store).
    pub stride: usize,
    pub versions: Vec<VersionKey>,
    pub claims: Vec<String>,
    pub by_recorded: Vec<u32>,
    pub by_superseded: Vec<u32>,
    pub checkpoints: Vec<Vec<u32>>,
    pub marks: Vec<MarkKey>,
    /// One per evidence mark, in the order of `marks`.
    pub evidence: Vec<EvidenceWidths>,
}

/// The index of the log and versions stored in `conn`.
pub fn compute(conn: &Connection, header: &Header) -> rusqlite::Result<ScrubIndex> {
    compute_with(conn, header, CHECKPOINT)
}

/// [`compute`] with checkpoints every `stride` versions (tests use short ones).
pub fn compute_with(
    conn: &Connection,
    header: &Header,
    stride: usize,
) -> rusqlite::Result<ScrubIndex> {
    let stride = stride.max(1);
    let topics = positions(header.topics.iter().map(|t| t.id.as_str()));
    let agents = positions(header.agents.iter().map(|a| a.id.as_str()));
    let position =
        |map: &Positions, s: Option<&str>| s.and_then(|s| map.get(s).copied()).unwrap_or(NONE);

    // Versions (rows code topics and agents by header position), with claim
    // texts numbered in order of first appearance by id.
    let mut texts: HashMap<i64, String> = HashMap::new();
    let mut stmt = conn.prepare("SELECT code, text FROM claims")?;
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        texts.insert(r.get(0)?, r.get(1)?);
    }
    let code = |c: i64, n: usize| u32::try_from(c).ok().filter(|&c| (c as usize) < n);
    let mut rows: Vec<(VersionKey, i64)> = Vec::new();
    let mut stmt = conn.prepare(
        "SELECT id, topic, agent, claim, recorded_at, superseded_at, valid_from FROM versions",
    )?;
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        rows.push((
            VersionKey {
                id: r.get::<_, i64>(0)? as u64,
                topic: code(r.get(1)?, header.topics.len()).unwrap_or(NONE),
                agent: code(r.get(2)?, header.agents.len()).unwrap_or(NONE),
                claim: 0,
                recorded_at: r.get(4)?,
                superseded_at: r.get(5)?,
                valid_from: r.get(6)?,
            },
            r.get(3)?,
        ));
    }
    rows.sort_unstable_by_key(|(v, _)| v.id);
    let mut claims: Vec<String> = Vec::new();
    let mut claim_code: HashMap<i64, u32, crate::model::ShortKeys> = HashMap::default();
    let versions: Vec<VersionKey> = rows
        .into_iter()
        .map(|(mut v, stored)| {
            let next = claims.len() as u32;
            v.claim = *claim_code.entry(stored).or_insert_with(|| {
                claims.push(texts.get(&stored).cloned().unwrap_or_default());
                next
            });
            v
        })
        .collect();

    let mut by_recorded: Vec<u32> = (0..versions.len() as u32).collect();
    by_recorded.sort_unstable_by_key(|&i| {
        let v = &versions[i as usize];
        (v.recorded_at, v.id)
    });
    let mut by_superseded: Vec<u32> = (0..versions.len() as u32)
        .filter(|&i| versions[i as usize].superseded_at != OPEN)
        .collect();
    by_superseded.sort_unstable_by_key(|&i| {
        let v = &versions[i as usize];
        (v.superseded_at, v.id)
    });
    let checkpoints = checkpoints(&versions, &by_recorded, stride);

    // Marks: a retraction of an assertion takes that assertion's topic; a
    // verification's agent is who judged.
    let mut effects: HashMap<i64, EffectKind> = HashMap::new();
    let mut stmt = conn.prepare("SELECT seq, effect FROM outcomes")?;
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        effects.insert(r.get(0)?, EffectKind::parse(r.get_ref(1)?.as_str()?));
    }
    let mut stmt = conn.prepare(
        "SELECT e.seq, e.kind, e.recorded_at, e.agent, e.source,
                COALESCE(e.topic, (SELECT a.topic FROM events a
                                    WHERE e.kind = 'retract' AND a.id = e.assertion
                                      AND a.kind = 'believe')),
                e.id
         FROM events e ORDER BY e.seq",
    )?;
    let mut marks = Vec::new();
    // Per-event facts by slot: an event's place in seq order (seqs can have
    // gaps, a fork's, and are any integers a damaged file holds).
    let mut seqs: Vec<i64> = Vec::new();
    let width = |s: &str| s.chars().count().min(usize::from(u16::MAX)) as u16;
    let mut id_width: Vec<u16> = Vec::new();
    let mut evidence_at: HashMap<String, usize, crate::model::ShortKeys> = HashMap::default();
    let mut widths: Vec<EvidenceWidths> = Vec::new();
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        let seq: i64 = r.get(0)?;
        let kind = r.get_ref(1)?.as_str()?;
        let id = r.get_ref(6)?.as_str()?;
        let slot = seqs.len();
        seqs.push(seq);
        id_width.push(width(id));
        widths.push(EvidenceWidths::default());
        if kind == "evidence" {
            evidence_at.insert(id.to_owned(), slot);
            widths[slot] = EvidenceWidths {
                id: width(id),
                source: width(r.get_ref(4)?.as_str_or_null()?.unwrap_or("")),
                cited: 0,
            };
        }
        // Absent from `outcomes`: recorded (evidence, verify) or applied.
        let effect = effects.get(&seq).copied().unwrap_or(match kind {
            "evidence" | "verify" => EffectKind::Recorded,
            _ => EffectKind::Applied,
        });
        let mark = MarkKind::of(kind, effect);
        let agent = if mark == MarkKind::Verification { 4 } else { 3 };
        marks.push(MarkKey {
            seq: seq as u64,
            recorded_at: r.get(2)?,
            kind: mark,
            effect,
            topic: position(&topics, r.get_ref(5)?.as_str_or_null()?),
            agent: position(&agents, r.get_ref(agent)?.as_str_or_null()?),
        });
    }
    marks.sort_unstable_by_key(|m| (m.recorded_at, m.seq));
    let slot_of = |seq: i64| seqs.binary_search(&seq).ok();
    let mut citing: Vec<(usize, usize)> = vec![(0, 0); seqs.len()];
    let mut stmt = conn.prepare("SELECT seq, evidence FROM citations")?;
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        let seq: i64 = r.get(0)?;
        if let (Some(&e), Some(s)) = (evidence_at.get(r.get_ref(1)?.as_str()?), slot_of(seq)) {
            let (count, chars) = &mut citing[e];
            *count += 1;
            *chars += usize::from(id_width[s]);
        }
    }
    let evidence = marks
        .iter()
        .filter(|m| m.kind == MarkKind::Evidence)
        .filter_map(|m| slot_of(m.seq as i64))
        .map(|slot| {
            let mut w = widths[slot];
            let (count, chars) = citing[slot];
            if count > 0 {
                w.cited = (chars + count - 1).min(usize::from(u16::MAX)) as u16;
            }
            w
        })
        .collect();
    Ok(ScrubIndex {
        stride,
        versions,
        claims,
        by_recorded,
        by_superseded,
        checkpoints,
        marks,
        evidence,
    })
}

impl ScrubIndex {
    /// Positions of the versions held at recorded instant `at`: one checkpoint
    /// plus fewer than `stride` versions recorded after it, in no set order.
    pub fn held(&self, at: Micros) -> Vec<u32> {
        let key = |i: u32| &self.versions[i as usize];
        let upto = self
            .by_recorded
            .partition_point(|&i| key(i).recorded_at <= at);
        let c = (upto / self.stride).min(self.checkpoints.len().saturating_sub(1));
        let Some(checkpoint) = self.checkpoints.get(c) else {
            return Vec::new();
        };
        checkpoint
            .iter()
            .chain(&self.by_recorded[(c * self.stride).min(upto)..upto])
            .copied()
            .filter(|&i| key(i).held_at(at))
            .collect()
    }
}

type Positions<'a> = HashMap<&'a str, u32, crate::model::ShortKeys>;

fn positions<'a>(ids: impl Iterator<Item = &'a str>) -> Positions<'a> {
    ids.enumerate().map(|(i, id)| (id, i as u32)).collect()
}

/// `checkpoints[c]`: the positions among the first `c · stride` of
/// `by_recorded` still held just after the last of them was recorded, in
/// recorded order. Any instant at or after that one finds every version it
/// holds from that prefix in this set.
pub fn checkpoints(versions: &[VersionKey], by_recorded: &[u32], stride: usize) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new()];
    let mut alive: Vec<u32> = Vec::new();
    for chunk in by_recorded.chunks_exact(stride) {
        alive.extend_from_slice(chunk);
        let t = versions[chunk[stride - 1] as usize].recorded_at;
        alive.retain(|&i| versions[i as usize].superseded_at > t);
        out.push(alive.clone());
    }
    out
}

/// Replaces the stored index with a fresh computation.
pub fn write(conn: &Connection, header: &Header) -> rusqlite::Result<()> {
    let index = compute(conn, header)?;
    conn.execute("DELETE FROM scrub", [])?;
    let mut insert = conn.prepare("INSERT INTO scrub (part, data) VALUES (?1, ?2)")?;
    for (part, data) in encode(&index) {
        insert.execute(params![part, data])?;
    }
    Ok(())
}

/// A part of the stored index that is missing or does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the scrub index's part {0:?} is missing or malformed; run `asof rebuild`")]
pub struct Malformed(pub &'static str);

/// The stored index, decoded; a missing or malformed part is a [`Malformed`]
/// naming it.
pub fn read(conn: &Connection) -> rusqlite::Result<Result<ScrubIndex, Malformed>> {
    let mut parts: HashMap<String, Vec<u8>> = HashMap::new();
    let mut stmt = conn.prepare("SELECT part, data FROM scrub")?;
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        let part: String = r.get(0)?;
        // A part stored as anything but a blob does not decode.
        if let rusqlite::types::ValueRef::Blob(data) = r.get_ref(1)? {
            parts.insert(part, data.to_vec());
        }
    }
    Ok(decode(&parts).map_err(Malformed))
}

const PARTS: [&str; 7] = [
    "versions",
    "claims",
    "by_recorded",
    "by_superseded",
    "checkpoints",
    "marks",
    "evidence",
];

fn encode(index: &ScrubIndex) -> Vec<(&'static str, Vec<u8>)> {
    let mut versions = Vec::with_capacity(index.versions.len() * 44);
    for v in &index.versions {
        versions.extend_from_slice(&v.id.to_le_bytes());
        for t in [v.recorded_at, v.superseded_at, v.valid_from] {
            versions.extend_from_slice(&t.to_le_bytes());
        }
        for c in [v.topic, v.agent, v.claim] {
            versions.extend_from_slice(&c.to_le_bytes());
        }
    }
    let claims = index.claims.join("\u{1f}").into_bytes();
    let u32s = |list: &[u32]| {
        list.iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>()
    };
    let mut checkpoints = u32s(&[index.stride as u32, index.checkpoints.len() as u32]);
    for c in &index.checkpoints {
        checkpoints.extend_from_slice(&(c.len() as u32).to_le_bytes());
    }
    for c in &index.checkpoints {
        checkpoints.extend(u32s(c));
    }
    let mut marks = Vec::with_capacity(index.marks.len() * 26);
    for m in &index.marks {
        marks.extend_from_slice(&m.seq.to_le_bytes());
        marks.extend_from_slice(&m.recorded_at.to_le_bytes());
        marks.push(m.kind.index() as u8);
        marks.push(EFFECTS.iter().position(|&e| e == m.effect).unwrap_or(1) as u8);
        marks.extend_from_slice(&m.topic.to_le_bytes());
        marks.extend_from_slice(&m.agent.to_le_bytes());
    }
    let evidence: Vec<u8> = index
        .evidence
        .iter()
        .flat_map(|w| [w.id, w.source, w.cited])
        .flat_map(u16::to_le_bytes)
        .collect();
    let [p0, p1, p2, p3, p4, p5, p6] = PARTS;
    vec![
        (p0, versions),
        (p1, claims),
        (p2, u32s(&index.by_recorded)),
        (p3, u32s(&index.by_superseded)),
        (p4, checkpoints),
        (p5, marks),
        (p6, evidence),
    ]
}

/// A little-endian reader over one blob; `None` when it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|[b]| b)
    }
    fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_le_bytes)
    }
    /// Fixed-width records until the blob ends exactly.
    fn records<T>(
        mut self,
        width: usize,
        mut one: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<Vec<T>> {
        if !self.0.len().is_multiple_of(width) {
            return None;
        }
        let mut out = Vec::with_capacity(self.0.len() / width);
        while !self.0.is_empty() {
            out.push(one(&mut self)?);
        }
        Some(out)
    }
}

fn decode(parts: &HashMap<String, Vec<u8>>) -> Result<ScrubIndex, &'static str> {
    let part = |name: &'static str| parts.get(name).map(|b| Bytes(b)).ok_or(name);
    let versions = part("versions")?
        .records(44, |b| {
            Some(VersionKey {
                id: b.u64()?,
                recorded_at: b.i64()?,
                superseded_at: b.i64()?,
                valid_from: b.i64()?,
                topic: b.u32()?,
                agent: b.u32()?,
                claim: b.u32()?,
            })
        })
        .ok_or("versions")?;
    let claims = parts.get("claims").ok_or("claims")?;
    let claims: Vec<String> = match std::str::from_utf8(claims).map_err(|_| "claims")? {
        "" if versions.is_empty() => Vec::new(),
        text => text.split('\u{1f}').map(str::to_owned).collect(),
    };
    let n = versions.len();
    let position = |i: u32| (i as usize) < n;
    let u32s = |name: &'static str| {
        part(name)?
            .records(4, |b| b.u32().filter(|&i| position(i)))
            .ok_or(name)
    };
    let by_recorded = u32s("by_recorded")?;
    let by_superseded = u32s("by_superseded")?;
    let mut b = part("checkpoints")?;
    let stride = b.u32().filter(|&s| s > 0).ok_or("checkpoints")? as usize;
    let count = b.u32().ok_or("checkpoints")? as usize;
    let lens: Vec<usize> = (0..count)
        .map(|_| b.u32().map(|l| l as usize))
        .collect::<Option<_>>()
        .ok_or("checkpoints")?;
    let checkpoints: Vec<Vec<u32>> = lens
        .iter()
        .map(|&len| (0..len).map(|_| b.u32().filter(|&i| position(i))).collect())
        .collect::<Option<_>>()
        .filter(|_| b.0.is_empty())
        .ok_or("checkpoints")?;
    let marks = part("marks")?
        .records(26, |b| {
            Some(MarkKey {
                seq: b.u64()?,
                recorded_at: b.i64()?,
                kind: *MarkKind::ALL.get(b.u8()? as usize)?,
                effect: *EFFECTS.get(b.u8()? as usize)?,
                topic: b.u32()?,
                agent: b.u32()?,
            })
        })
        .ok_or("marks")?;
    let evidence = part("evidence")?
        .records(6, |b| {
            Some(EvidenceWidths {
                id: b.u16()?,
                source: b.u16()?,
                cited: b.u16()?,
            })
        })
        .filter(|e| {
            e.len()
                == marks
                    .iter()
                    .filter(|m| m.kind == MarkKind::Evidence)
                    .count()
        })
        .ok_or("evidence")?;
    let claims_ok = versions.iter().all(|v| (v.claim as usize) < claims.len());
    if !claims_ok || by_recorded.len() != n {
        return Err("versions");
    }
    if checkpoints.len() != n / stride + 1 {
        return Err("checkpoints");
    }
    Ok(ScrubIndex {
        stride,
        versions,
        claims,
        by_recorded,
        by_superseded,
        checkpoints,
        marks,
        evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(n: usize) -> ScrubIndex {
        let versions: Vec<VersionKey> = (0..n)
            .map(|i| VersionKey {
                id: i as u64 + 1,
                recorded_at: (i as i64 / 3) * 10,
                superseded_at: if i % 2 == 0 {
                    OPEN
                } else {
                    (i as i64 / 3) * 10 + 25
                },
                valid_from: -(i as i64),
                topic: (i % 7) as u32,
                agent: (i % 2) as u32,
                claim: (i % 3) as u32,
            })
            .collect();
        let by_recorded: Vec<u32> = (0..n as u32).collect();
        let by_superseded = (0..n as u32).filter(|i| i % 2 == 1).collect();
        let marks: Vec<MarkKey> = (0..n as u64)
            .map(|s| MarkKey {
                seq: s + 1,
                recorded_at: s as i64,
                kind: MarkKind::ALL[s as usize % 5],
                effect: EFFECTS[s as usize % 5],
                topic: NONE,
                agent: s as u32,
            })
            .collect();
        let evidence = (0..marks
            .iter()
            .filter(|m| m.kind == MarkKind::Evidence)
            .count())
            .map(|i| EvidenceWidths {
                id: i as u16,
                source: 3,
                cited: u16::MAX,
            })
            .collect();
        ScrubIndex {
            evidence,
            stride: CHECKPOINT,
            checkpoints: checkpoints(&versions, &by_recorded, CHECKPOINT),
            versions,
            claims: vec!["a".into(), "b c".into(), "".into()],
            by_recorded,
            by_superseded,
            marks,
        }
    }

    fn parts(index: &ScrubIndex) -> HashMap<String, Vec<u8>> {
        encode(index)
            .into_iter()
            .map(|(p, d)| (p.to_owned(), d))
            .collect()
    }

    #[test]
    fn the_index_round_trips_through_its_blobs() {
        for n in [0, 1, CHECKPOINT - 1, CHECKPOINT, 2 * CHECKPOINT + 5] {
            let index = index(n);
            assert_eq!(decode(&parts(&index)), Ok(index), "{n} versions");
        }
    }

    #[test]
    fn a_malformed_blob_is_refused_by_name_not_a_panic() {
        let good = parts(&index(CHECKPOINT + 3));
        for part in PARTS {
            let mut cut = good.clone();
            cut.get_mut(part).unwrap().pop();
            let mut grown = good.clone();
            grown.get_mut(part).unwrap().extend_from_slice(&[0xff; 4]);
            let mut missing = good.clone();
            missing.remove(part);
            for (how, parts) in [("cut", cut), ("grown", grown), ("missing", missing)] {
                if part == "claims" && how != "missing" {
                    continue; // any UTF-8 is a list of claims; their count is checked below
                }
                assert!(decode(&parts).is_err(), "{part} {how}");
            }
        }
        let mut few = good.clone();
        few.insert("claims".into(), b"a".to_vec());
        assert_eq!(
            decode(&few),
            Err("versions"),
            "a claim code beyond the list"
        );
    }

    #[test]
    fn a_checkpoint_holds_what_its_prefix_still_holds() {
        let index = index(3 * CHECKPOINT);
        for (c, held) in index.checkpoints.iter().enumerate() {
            let prefix = &index.by_recorded[..c * CHECKPOINT];
            let Some(&last) = prefix.last() else {
                assert!(held.is_empty());
                continue;
            };
            let t = index.versions[last as usize].recorded_at;
            let expected: Vec<u32> = prefix
                .iter()
                .copied()
                .filter(|&i| index.versions[i as usize].superseded_at > t)
                .collect();
            assert_eq!(held, &expected, "checkpoint {c}");
        }
    }
}
