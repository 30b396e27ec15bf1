//! The parts' blob format: little-endian fixed-width records, encoded and
//! decoded (a blob of the wrong length is `Malformed`, never a panic).

use super::*;

/// The parts a fork's patch changes on its second thread ([`patch`]).
pub(crate) const MARK_PARTS: [&str; 2] = ["marks", "evidence"];

pub(crate) const PARTS: [&str; 8] = [
    "versions",
    "superseded",
    "claims",
    "by_recorded",
    "by_superseded",
    "checkpoints",
    "marks",
    "evidence",
];

pub(crate) fn encode(index: &ScrubIndex) -> Vec<(&'static str, Vec<u8>)> {
    let mut parts = encode_versions(index);
    parts.extend(encode_marks(index));
    parts
}

/// The parts of the versions: all but the marks and the evidence widths.
pub(crate) fn encode_versions(index: &ScrubIndex) -> Vec<(&'static str, Vec<u8>)> {
    // A version's closing instant on its own: the one field a follow's
    // batch changes in place (as it closes held versions anywhere in the log).
    let mut versions = Vec::with_capacity(index.versions.len() * VERSION_BYTES);
    let mut superseded = Vec::with_capacity(index.versions.len() * 8);
    for v in &index.versions {
        put_version(&mut versions, v);
        superseded.extend_from_slice(&v.superseded_at.to_le_bytes());
    }
    let [p0, p1, p2, p3, p4, p5, _, _] = PARTS;
    vec![
        (p0, versions),
        (p1, superseded),
        (p2, claims_bytes(index)),
        (p3, u32s(&index.by_recorded)),
        (p4, u32s(&index.by_superseded)),
        (p5, checkpoints_bytes(index)),
    ]
}

/// The parts of the marks: the marks and the evidence widths.
pub(crate) fn encode_marks(index: &ScrubIndex) -> [(&'static str, Vec<u8>); 2] {
    let mut marks = Vec::with_capacity(index.marks.len() * MARK_BYTES);
    for m in &index.marks {
        put_mark(&mut marks, m);
    }
    let [_, _, _, _, _, _, p6, p7] = PARTS;
    [(p6, marks), (p7, evidence_bytes(index))]
}

/// The parts a follow's batch encodes whole: claims, checkpoints.
pub(crate) fn encode_small(index: &ScrubIndex) -> [(&'static str, Vec<u8>); 2] {
    let [_, _, p2, _, _, p5, _, _] = PARTS;
    [(p2, claims_bytes(index)), (p5, checkpoints_bytes(index))]
}

pub(crate) fn claims_bytes(index: &ScrubIndex) -> Vec<u8> {
    index.claims.join("\u{1f}").into_bytes()
}

pub(crate) fn checkpoints_bytes(index: &ScrubIndex) -> Vec<u8> {
    let ids: usize = index.checkpoints.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(4 * (2 + index.checkpoints.len() + ids));
    out.extend(u32s(&[index.stride as u32, index.checkpoints.len() as u32]));
    for c in &index.checkpoints {
        out.extend_from_slice(&(c.len() as u32).to_le_bytes());
    }
    for c in &index.checkpoints {
        out.extend(u32s(c));
    }
    out
}

pub(crate) fn evidence_bytes(index: &ScrubIndex) -> Vec<u8> {
    let mut out = Vec::with_capacity(index.evidence.len() * WIDTHS_BYTES);
    for w in &index.evidence {
        put_widths(&mut out, w);
    }
    out
}

/// An evidence item's record in the `evidence` part ([`WIDTHS_BYTES`]).
pub(crate) fn put_widths(out: &mut Vec<u8>, w: &EvidenceWidths) {
    for x in [w.id, w.source, w.cited] {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

pub(crate) fn u32s(list: &[u32]) -> Vec<u8> {
    list.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The bytes of a version's record in the `versions` part ([`put_version`]).
pub(crate) const VERSION_BYTES: usize = 36;
/// The bytes of a mark's record in the `marks` part ([`put_mark`]).
pub(crate) const MARK_BYTES: usize = 26;

/// The bytes of an evidence item's widths in the `evidence` part.
pub(crate) const WIDTHS_BYTES: usize = 6;

/// A version's record in the `versions` part ([`VERSION_BYTES`]; its
/// closing instant is in `superseded`).
pub(crate) fn put_version(out: &mut Vec<u8>, v: &VersionKey) {
    out.extend_from_slice(&v.id.to_le_bytes());
    for t in [v.recorded_at, v.valid_from] {
        out.extend_from_slice(&t.to_le_bytes());
    }
    for c in [v.topic, v.agent, v.claim] {
        out.extend_from_slice(&c.to_le_bytes());
    }
}

/// A mark's record in the `marks` part ([`MARK_BYTES`]).
pub(crate) fn put_mark(out: &mut Vec<u8>, m: &MarkKey) {
    out.extend_from_slice(&m.seq.to_le_bytes());
    out.extend_from_slice(&m.recorded_at.to_le_bytes());
    out.push(m.kind.index() as u8);
    out.push(EFFECTS.iter().position(|&e| e == m.effect).unwrap_or(1) as u8);
    out.extend_from_slice(&m.topic.to_le_bytes());
    out.extend_from_slice(&m.agent.to_le_bytes());
}

pub(crate) use crate::store::bytes::Reader as Bytes;

/// A version's record ([`put_version`]); its closing instant is left open
/// (it is in the `superseded` part).
pub(crate) fn take_version(b: &mut Bytes) -> Option<VersionKey> {
    Some(VersionKey {
        id: b.u64()?,
        recorded_at: b.i64()?,
        valid_from: b.i64()?,
        topic: b.u32()?,
        agent: b.u32()?,
        claim: b.u32()?,
        superseded_at: OPEN,
    })
}

/// A mark's record ([`put_mark`]).
pub(crate) fn take_mark(b: &mut Bytes) -> Option<MarkKey> {
    Some(MarkKey {
        seq: b.u64()?,
        recorded_at: b.i64()?,
        kind: *MarkKind::ALL.get(b.u8()? as usize)?,
        effect: *EFFECTS.get(b.u8()? as usize)?,
        topic: b.u32()?,
        agent: b.u32()?,
    })
}

/// An evidence item's widths' record ([`evidence_bytes`]).
pub(crate) fn take_widths(b: &mut Bytes) -> Option<EvidenceWidths> {
    Some(EvidenceWidths {
        id: b.u16()?,
        source: b.u16()?,
        cited: b.u16()?,
    })
}

/// The claims' texts of the `claims` part, for `versions` versions.
pub(crate) fn take_claims(claims: &[u8], versions: usize) -> Option<Vec<String>> {
    Some(match std::str::from_utf8(claims).ok()? {
        "" if versions == 0 => Vec::new(),
        text => text.split('\u{1f}').map(str::to_owned).collect(),
    })
}

pub(crate) fn decode(parts: &HashMap<String, Vec<u8>>) -> Result<ScrubIndex, &'static str> {
    let index = decode_versions(parts, true)?;
    let (marks, evidence) = decode_marks(parts)?;
    Ok(ScrubIndex {
        marks,
        evidence,
        ..index
    })
}

/// The parts of the versions (all but the marks and the evidence widths),
/// decoded and checked against each other; the marks are left empty, and so
/// are the checkpoints unless `checkpoints` (only their stride is read).
pub(crate) fn decode_versions(
    parts: &HashMap<String, Vec<u8>>,
    checkpoints: bool,
) -> Result<ScrubIndex, &'static str> {
    let part = |name: &'static str| parts.get(name).map(|b| Bytes(b)).ok_or(name);
    let superseded = part("superseded")?
        .records(8, |b| b.i64())
        .ok_or("superseded")?;
    let versions = part("versions")?
        .records(VERSION_BYTES, take_version)
        .ok_or("versions")?;
    if superseded.len() != versions.len() {
        return Err("superseded");
    }
    let versions: Vec<VersionKey> = versions
        .into_iter()
        .zip(superseded)
        .map(|(v, superseded_at)| VersionKey { superseded_at, ..v })
        .collect();
    let claims = parts.get("claims").ok_or("claims")?;
    let claims = take_claims(claims, versions.len()).ok_or("claims")?;
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
    let claims_ok = versions.iter().all(|v| (v.claim as usize) < claims.len());
    if !claims_ok || by_recorded.len() != n {
        return Err("versions");
    }
    let checkpoints = match checkpoints {
        true => decode_checkpoints(b, n, stride)?,
        false => Vec::new(),
    };
    Ok(ScrubIndex {
        stride,
        versions,
        claims,
        by_recorded,
        by_superseded,
        checkpoints,
        marks: Vec::new(),
        evidence: Vec::new(),
    })
}

/// The checkpoints' lists (`b`: the part after its stride), each a list of
/// positions among `n` versions, one per `stride` of them and one more.
pub(crate) fn decode_checkpoints(
    mut b: Bytes<'_>,
    n: usize,
    stride: usize,
) -> Result<Vec<Vec<u32>>, &'static str> {
    let count = b.u32().ok_or("checkpoints")? as usize;
    let lens: Vec<usize> = (0..count)
        .map(|_| b.u32().map(|l| l as usize))
        .collect::<Option<_>>()
        .ok_or("checkpoints")?;
    let checkpoints: Vec<Vec<u32>> = lens
        .iter()
        .map(|&len| {
            (0..len)
                .map(|_| b.u32().filter(|&i| (i as usize) < n))
                .collect()
        })
        .collect::<Option<_>>()
        .filter(|_| b.0.is_empty())
        .ok_or("checkpoints")?;
    if checkpoints.len() != n / stride + 1 {
        return Err("checkpoints");
    }
    Ok(checkpoints)
}

/// The marks and the evidence widths, one per evidence mark.
pub(crate) fn decode_marks(
    parts: &HashMap<String, Vec<u8>>,
) -> Result<(Vec<MarkKey>, Vec<EvidenceWidths>), &'static str> {
    let part = |name: &'static str| parts.get(name).map(|b| Bytes(b)).ok_or(name);
    let marks = part("marks")?
        .records(MARK_BYTES, take_mark)
        .ok_or("marks")?;
    let evidence = part("evidence")?
        .records(WIDTHS_BYTES, take_widths)
        .filter(|e| {
            e.len()
                == marks
                    .iter()
                    .filter(|m| m.kind == MarkKind::Evidence)
                    .count()
        })
        .ok_or("evidence")?;
    Ok((marks, evidence))
}
