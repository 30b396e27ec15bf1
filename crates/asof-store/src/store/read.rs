//! Reading a store back into the model.

use crate::store::codec::{Anchor, Rest, Texts};
use asof_core::model::{
    Agent, Assertion, Assumed, Cardinality, Cited, CloseKind, Closure, Event, EventBody, Evidence,
    Header, Incident, Name, Names, Origin, RetractTarget, Retraction, Topic, Verification,
    VerifyState, Version,
};
use asof_core::time::{Interval, OPEN};
use rusqlite::{Connection, OptionalExtension, Row};

pub(crate) fn meta(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
}

/// The review table's rows as stored, in order: (pos, id, line).
pub(crate) fn review_rows(conn: &Connection) -> rusqlite::Result<Vec<(i64, String, String)>> {
    let mut stmt = conn.prepare("SELECT pos, id, line FROM review ORDER BY pos")?;
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect()
}

/// What findings may name: the evidence items and assertions with ids
/// `only` (every one when `None`), each with when it was recorded (and an
/// assertion's agent and topic), and the header's ids. Named ids are looked
/// up by the log's id index: reading a review costs its findings, not the log.
pub(crate) fn subjects(
    conn: &Connection,
    header: &Header,
    only: Option<&[&str]>,
) -> rusqlite::Result<asof_core::review::Subjects> {
    use asof_core::review::{AssertionSubject, Subjects};
    let mut s = Subjects {
        topics: header.topics.iter().map(|t| t.id.to_string()).collect(),
        agents: header.agents.iter().map(|a| a.id.to_string()).collect(),
        ..Subjects::default()
    };
    let mut add = |r: &Row| -> rusqlite::Result<()> {
        let id: String = r.get(0)?;
        let kind: String = r.get(1)?;
        let at: i64 = r.get(2)?;
        if kind == "evidence" {
            s.evidence.insert(id, at);
        } else {
            let agent: Option<String> = r.get(3)?;
            let topic: Option<String> = r.get(4)?;
            s.assertions.insert(
                id,
                AssertionSubject {
                    agent: agent.unwrap_or_default(),
                    topic: topic.unwrap_or_default(),
                    recorded_at: at,
                },
            );
        }
        Ok(())
    };
    const COLUMNS: &str = "SELECT id, kind, recorded_at, agent, topic FROM events";
    match only {
        None => {
            let mut stmt = conn.prepare(&format!(
                "{COLUMNS} WHERE kind = 'evidence' OR kind = 'believe'"
            ))?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                add(r)?;
            }
        }
        Some(ids) => {
            let mut stmt = conn.prepare(&format!(
                "{COLUMNS} WHERE id = ?1 AND (kind = 'evidence' OR kind = 'believe')"
            ))?;
            for id in ids {
                let mut rows = stmt.query([id])?;
                while let Some(r) = rows.next()? {
                    add(r)?;
                }
            }
        }
    }
    Ok(s)
}

const UNPACKED: &str = "the packed header (table header_packed) is missing or damaged; `asof rebuild` packs it again from its rows";

/// The header as opening a store reads it: its packed row
/// (crates/asof-store/src/store/packed_header.rs). A row that is missing or not a packed header is
/// damage, said as such.
pub(super) fn header(conn: &Connection) -> rusqlite::Result<Header> {
    let packed: Option<Vec<u8>> = conn
        .query_row("SELECT data FROM header_packed", [], |r| r.get(0))
        .optional()?;
    let packed = packed.ok_or_else(|| damaged(UNPACKED.into()))?;
    super::packed_header::unpack(&packed).ok_or_else(|| damaged(UNPACKED.into()))
}

/// The header from its rows (`meta`, `agents`, `topics`): what `check`
/// compares the packed row with and `rebuild` packs again.
pub(super) fn header_from_rows(conn: &Connection) -> rusqlite::Result<Header> {
    let incident = Incident {
        id: meta(conn, "incident_id")?.unwrap_or_default(),
        title: meta(conn, "incident_title")?.unwrap_or_default(),
    };
    let mut stmt = conn.prepare("SELECT id, name FROM agents ORDER BY idx")?;
    let agents = stmt
        .query_map([], |r| {
            Ok(Agent {
                id: r.get(0)?,
                name: r.get(1)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt =
        conn.prepare("SELECT id, question, cardinality, resolution, half_life, stale_after FROM topics ORDER BY idx")?;
    let topics = stmt
        .query_map([], |r| {
            let cardinality: String = r.get(2)?;
            Ok(Topic {
                id: r.get(0)?,
                question: r.get(1)?,
                cardinality: if cardinality == "many" {
                    Cardinality::Many
                } else {
                    Cardinality::One
                },
                resolution: r.get(3)?,
                half_life: r.get(4)?,
                stale_after: r.get(5)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Header {
        incident,
        agents,
        topics,
    })
}

/// Every assertion's assumed fields (design.md §7) with its seq and id, in
/// log order (what the ledger looks up), of the events `seqs` names.
pub(crate) fn assumptions_by_id(
    conn: &Connection,
    seqs: &Seqs,
) -> rusqlite::Result<Vec<(u64, String, Vec<Assumed>)>> {
    let mut out: Vec<(u64, String, Vec<Assumed>)> = Vec::new();
    seqs.each_range(|low, high| {
        let mut stmt = conn.prepare_cached(
            "SELECT a.seq, e.id, a.field FROM assumptions a JOIN events e ON e.seq = a.seq
             WHERE a.seq BETWEEN ?1 AND ?2 ORDER BY a.seq, a.field",
        )?;
        let mut rows = stmt.query([low, high])?;
        while let Some(r) = rows.next()? {
            let seq = r.get::<_, i64>(0)? as u64;
            let field: String = r.get(2)?;
            let Some(field) = Assumed::parse(&field) else {
                return Err(rusqlite::Error::FromSqlConversionFailure(
                    2,
                    rusqlite::types::Type::Text,
                    format!("unknown assumed field `{field}`").into(),
                ));
            };
            match out.last_mut() {
                Some((last, _, list)) if *last == seq => list.push(field),
                _ => out.push((seq, r.get(1)?, vec![field])),
            }
        }
        Ok(())
    })?;
    for (_, _, list) in &mut out {
        list.sort_unstable();
    }
    Ok(out)
}

/// Which of the log's events a reader reads again: every one from a seq on,
/// and some before it (a follow's batch wrote those again).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seqs {
    /// Every seq from this one on.
    pub from: u64,
    /// Seqs before `from`, sorted, without repeats.
    pub only: Vec<u64>,
}

impl Seqs {
    /// Every event of the log.
    pub fn all() -> Seqs {
        Seqs::default()
    }

    /// Calls `read` with each range of seqs named, in order (`only`'s one
    /// by one, then `from` on), as SQLite integers.
    pub(crate) fn each_range(
        &self,
        mut read: impl FnMut(i64, i64) -> rusqlite::Result<()>,
    ) -> rusqlite::Result<()> {
        let as_int = |seq: u64| i64::try_from(seq).unwrap_or(i64::MAX);
        for &seq in self.only.iter().filter(|&&s| s < self.from) {
            read(as_int(seq), as_int(seq))?;
        }
        read(as_int(self.from), i64::MAX)
    }
}

/// The whole log in file order, citations included.
pub(super) fn events(conn: &Connection) -> rusqlite::Result<Vec<Event>> {
    let mut events = Vec::new();
    each_event(conn, |e| {
        events.push(e);
        true
    })?;
    Ok(events)
}

/// The log in file order, each event whole (its citations, assumed fields
/// and content), handed to `each` one at a time until it returns false: a
/// log read without holding it.
pub(super) fn each_event(
    conn: &Connection,
    each: impl FnMut(Event) -> bool,
) -> rusqlite::Result<()> {
    each_event_after(conn, i64::MIN, each)
}

/// [`each_event`] from the first event after seq `after` on.
pub(super) fn each_event_after(
    conn: &Connection,
    after: i64,
    mut each: impl FnMut(Event) -> bool,
) -> rusqlite::Result<()> {
    let mut cites =
        conn.prepare("SELECT seq, evidence FROM citations WHERE seq > ?1 ORDER BY seq, pos")?;
    let mut cites = BySeq::new(&mut cites, after, |r| r.get(1))?;
    let mut assumed =
        conn.prepare("SELECT seq, field FROM assumptions WHERE seq > ?1 ORDER BY seq")?;
    let mut assumed = BySeq::new(&mut assumed, after, |r| {
        let field: String = r.get(1)?;
        Assumed::parse(&field).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                1,
                rusqlite::types::Type::Text,
                format!("unknown assumed field `{field}`").into(),
            )
        })
    })?;
    let mut contents =
        conn.prepare("SELECT seq, text FROM contents WHERE seq > ?1 ORDER BY seq")?;
    let mut contents = BySeq::new(&mut contents, after, |r| r.get(1))?;
    let mut stmt = conn.prepare(&format!(
        "SELECT {EVENT_COLUMNS} FROM events WHERE seq > ?1 ORDER BY seq"
    ))?;
    let mut rows = stmt.query([after])?;
    while let Some(r) = rows.next()? {
        let seq: i64 = r.get(0)?;
        let mut e = event(r, cites.of(seq)?)?;
        match &mut e.body {
            EventBody::Believe(a) => {
                a.assumed = assumed.of(seq)?;
                a.assumed.sort_unstable();
            }
            EventBody::Evidence(ev) => ev.content = contents.of(seq)?.pop(),
            _ => {}
        }
        if !each(e) {
            break;
        }
    }
    Ok(())
}

/// The rows of a table attached to events (`SELECT seq, … WHERE seq > ?1`
/// in seq order), read alongside the log: what each seq has, in the order
/// selected.
struct BySeq<'s, T> {
    rows: rusqlite::Rows<'s>,
    read: fn(&Row) -> rusqlite::Result<T>,
    head: Option<(i64, T)>,
}

impl<'s, T> BySeq<'s, T> {
    fn new(
        stmt: &'s mut rusqlite::Statement,
        after: i64,
        read: fn(&Row) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<BySeq<'s, T>> {
        let mut by = BySeq {
            rows: stmt.query([after])?,
            read,
            head: None,
        };
        by.head = by.next()?;
        Ok(by)
    }

    fn next(&mut self) -> rusqlite::Result<Option<(i64, T)>> {
        match self.rows.next()? {
            Some(r) => Ok(Some((r.get(0)?, (self.read)(r)?))),
            None => Ok(None),
        }
    }

    /// The rows of `seq` (those of seqs before it, no event's, passed over).
    fn of(&mut self, seq: i64) -> rusqlite::Result<Vec<T>> {
        let mut found = Vec::new();
        while let Some((at, value)) = self.head.take() {
            if at > seq {
                self.head = Some((at, value));
                break;
            }
            if at == seq {
                found.push(value);
            }
            self.head = self.next()?;
        }
        Ok(found)
    }
}

/// The columns [`event`] reads, in its order.
pub const EVENT_COLUMNS: &str =
    "seq, id, kind, recorded_at, agent, topic, claim, confidence, valid_from, valid_to,
     clip, assertion, evidence_kind, source, locator, observed_at, observed_until,
     reliability, text, verifies, state";
/// How many columns [`EVENT_COLUMNS`] names (a query may select more after them).
pub const EVENT_COLUMN_COUNT: usize = 21;

/// A row selected with [`EVENT_COLUMNS`] as an [`Event`] citing `cited`.
pub(crate) fn event(r: &Row, cited: Vec<String>) -> rusqlite::Result<Event> {
    let seq: i64 = r.get(0)?;
    let id: String = r.get(1)?;
    let kind: String = r.get(2)?;
    let recorded_at: i64 = r.get(3)?;
    let body = match kind.as_str() {
        "evidence" => EventBody::Evidence(Evidence {
            id,
            kind: r.get(12)?,
            source: r.get(13)?,
            locator: r.get(14)?,
            observed_at: r.get(15)?,
            observed_until: r.get(16)?,
            recorded_at,
            reliability: r.get(17)?,
            summary: r.get(18)?,
            // Read with the log ([`events`]) or the item ([`content`]).
            content: None,
        }),
        "believe" => EventBody::Believe(Assertion {
            id,
            agent: r.get(4)?,
            topic: r.get(5)?,
            claim: r.get(6)?,
            confidence: r.get(7)?,
            valid: Interval::new(r.get(8)?, r.get::<_, Option<i64>>(9)?.unwrap_or(OPEN)),
            clip: r.get(10)?,
            recorded_at,
            supported_by: cited,
            rationale: r.get(18)?,
            // Read with the log ([`events`]).
            assumed: Vec::new(),
        }),
        "verify" => {
            let state: String = r.get(20)?;
            EventBody::Verify(Verification {
                id,
                evidence: r.get(19)?,
                state: VerifyState::parse(&state).ok_or_else(|| {
                    rusqlite::Error::FromSqlConversionFailure(
                        20,
                        rusqlite::types::Type::Text,
                        format!("unknown verification state `{state}`").into(),
                    )
                })?,
                by: r.get::<_, Option<String>>(13)?.unwrap_or_default(),
                recorded_at,
                note: r.get(18)?,
            })
        }
        _ => {
            let from: Option<i64> = r.get(8)?;
            let to: Option<i64> = r.get(9)?;
            let valid = (from.is_some() || to.is_some())
                .then(|| Interval::new(from.unwrap_or(i64::MIN), to.unwrap_or(OPEN)));
            let assertion: Option<String> = r.get(11)?;
            let target = match assertion {
                Some(a) => RetractTarget::Assertion(a),
                None => RetractTarget::Topic {
                    topic: r.get(5)?,
                    claim: r.get(6)?,
                },
            };
            EventBody::Retract(Retraction {
                id,
                agent: r.get(4)?,
                target,
                valid,
                recorded_at,
                because: cited,
                reason: r.get(18)?,
            })
        }
    };
    Ok(Event {
        seq: seq as u64,
        body,
    })
}

/// The columns of a version row, in the order [`read_version`] reads them.
pub const VERSION_COLUMNS: &str = "v.id, v.agent, v.topic, v.claim, v.valid_from, v.valid_to,
    v.recorded_at, v.superseded_at, v.rest";

/// How many assertions' ids and citations a [`Decoder`] keeps to share: a
/// slot each, chosen by the assertion's seq (a later assertion in the same
/// slot takes it over). A decoder that shares ids (a history, the TUI's,
/// every version of a store) keeps many; one that copies them (one long
/// answer, decoded once) keeps few: its split pieces sit side by side in
/// reading order, and a hash map of every row's assertion cost more to fill
/// and drop than the sharing saved.
const ASSERTIONS_KEPT: (usize, usize) = (1 << 10, 1 << 16);

/// Turns the codes of version rows back into names: agents and topics by
/// their position in the header, claims by their code in the `claims` table
/// (each read the first time it is met), event ids shared or copied.
pub struct Decoder {
    agents: std::sync::Arc<[Name]>,
    topics: std::sync::Arc<[Name]>,
    claims: std::collections::HashMap<i64, Name, asof_core::model::ShortKeys>,
    names: Names,
    /// The assertion id and citations of assertions met, in the slot of
    /// their seq ([`ASSERTIONS_KEPT`]): the split pieces of one assertion
    /// share them instead of copying each.
    assertions: Box<[Option<(i64, Name, Cited)>]>,
    /// The buffer [`read_version`] reads one row's packed fields into.
    scratch: Vec<u8>,
    /// The buffer a row's citations are read into before they are shared.
    cites: Vec<Name>,
    /// Share event ids through `names` (a history's split pieces repeat them)
    /// or copy each (an answer of tens of thousands of rows, nearly all new).
    share_ids: bool,
}

/// The header's agent and topic ids as names, by position: what the codes of
/// version rows index.
pub type CodedNames = (std::sync::Arc<[Name]>, std::sync::Arc<[Name]>);

/// The [`CodedNames`] of `header`.
pub fn coded_names(header: &Header) -> CodedNames {
    (
        header
            .agents
            .iter()
            .map(|a| Name::from(a.id.as_str()))
            .collect(),
        header
            .topics
            .iter()
            .map(|t| Name::from(t.id.as_str()))
            .collect(),
    )
}

impl Decoder {
    pub fn new((agents, topics): CodedNames, share_ids: bool) -> Decoder {
        let kept = match share_ids {
            false => ASSERTIONS_KEPT.0,
            true => ASSERTIONS_KEPT.1,
        };
        Decoder {
            agents,
            topics,
            claims: Default::default(),
            names: Names::default(),
            assertions: std::iter::repeat_with(|| None).take(kept).collect(),
            scratch: Vec::new(),
            cites: Vec::new(),
            share_ids,
        }
    }

    fn coded(list: &[Name], code: i64, what: &str) -> rusqlite::Result<Name> {
        usize::try_from(code)
            .ok()
            .and_then(|i| list.get(i))
            .cloned()
            .ok_or_else(|| {
                damaged(format!(
                    "a version names {what} #{code}, which the store does not hold"
                ))
            })
    }

    /// Looks up each claim `codes` name that is not known yet, so that rows
    /// naming only these decode without the connection
    /// ([`VersionRow::decode_known`], on another thread).
    pub(crate) fn resolve_claims(
        &mut self,
        conn: &Connection,
        codes: impl IntoIterator<Item = i64>,
    ) -> rusqlite::Result<()> {
        for code in codes {
            self.claim(Some(conn), code)?;
        }
        Ok(())
    }

    /// A decoder for another thread: the same names and the claims resolved
    /// so far, as copies of their own — two threads counting references to
    /// one name would pass its cache line back and forth for every row; the
    /// rest (shared ids, assertions) starts empty.
    pub fn sibling(&self) -> Decoder {
        let copy = |names: &[Name]| names.iter().map(|n| Name::from(&**n)).collect();
        Decoder {
            claims: self
                .claims
                .iter()
                .map(|(&code, name)| (code, Name::from(&**name)))
                .collect(),
            ..Decoder::new((copy(&self.agents), copy(&self.topics)), self.share_ids)
        }
    }

    /// A claim by its code, read from the store the first time (`conn`: `None`
    /// when it must have been resolved already).
    fn claim(&mut self, conn: Option<&Connection>, code: i64) -> rusqlite::Result<Name> {
        if let Some(c) = self.claims.get(&code) {
            return Ok(c.clone());
        }
        let Some(conn) = conn else {
            return Err(damaged(format!(
                "a version names claim #{code}, which was not looked up"
            )));
        };
        let text: Option<String> = conn
            .prepare_cached("SELECT text FROM claims WHERE code = ?1")?
            .query_row([code], |r| r.get(0))
            .optional()?;
        let name: Name = text
            .ok_or_else(|| {
                damaged(format!(
                    "a version names claim #{code}, which the store does not hold"
                ))
            })?
            .into();
        self.claims.insert(code, name.clone());
        Ok(name)
    }

    /// The assertion `rest` descends from and the evidence it cites, shared
    /// with earlier rows of the same assertion (a row whose fields disagree
    /// with the first one's, as in a damaged store, gets its own).
    fn assertion(&mut self, rest: &Rest<'_, Texts<'_>>) -> (Name, Cited) {
        let seq = rest.assertion_seq;
        // The slot of `seq`: its low bits (the table's length is a power of two).
        let slot = (seq as usize) & (self.assertions.len() - 1);
        if let Some((kept, name, cites)) = &self.assertions[slot]
            && *kept == seq
            && **name == *rest.assertion
            && cites.len() == rest.supported_by.len()
            && cites.iter().map(Name::as_str).eq(rest.supported_by)
        {
            return (name.clone(), cites.clone());
        }
        let name = self.id(rest.assertion);
        // Read into a buffer first: collected straight from an iterator (whose
        // length the standard library does not take on trust), the shared
        // slice is built in a vector of its own and copied.
        let mut read = std::mem::take(&mut self.cites);
        read.clear();
        read.extend(rest.supported_by.map(Name::from));
        let cites = Cited::from(&read[..]);
        read.clear();
        self.cites = read;
        self.assertions[slot] = Some((seq, name.clone(), cites.clone()));
        (name, cites)
    }

    fn id(&mut self, text: &str) -> Name {
        if self.share_ids {
            self.names.get(text)
        } else {
            Name::from(text)
        }
    }
}

pub(super) fn damaged(reason: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Blob, reason.into())
}

/// A version row's stored fields, its packed `rest` kept as a range of a
/// shared byte buffer, so a long answer can be read, sorted and only then
/// decoded, each version built once in its final place.
#[derive(Debug, Clone, Copy)]
pub struct VersionRow {
    pub id: i64,
    pub agent: i64,
    pub topic: i64,
    pub claim: i64,
    pub valid_from: i64,
    pub valid_to: i64,
    pub recorded_at: i64,
    pub superseded_at: i64,
    rest: (u32, u32),
}

impl VersionRow {
    /// A row from its fields (id, agent, topic, claim, valid from and to,
    /// recorded and superseded instants) and packed `rest`, appended to `bytes`.
    pub(crate) fn new(
        fields: [i64; 8],
        rest: &[u8],
        bytes: &mut Vec<u8>,
    ) -> rusqlite::Result<VersionRow> {
        let start = bytes.len();
        bytes.extend_from_slice(rest);
        let span = u32::try_from(start)
            .ok()
            .zip(u32::try_from(bytes.len()).ok())
            .ok_or_else(|| damaged("an answer's packed fields exceed 4 GiB".into()))?;
        let [
            id,
            agent,
            topic,
            claim,
            valid_from,
            valid_to,
            recorded_at,
            superseded_at,
        ] = fields;
        Ok(VersionRow {
            id,
            agent,
            topic,
            claim,
            valid_from,
            valid_to,
            recorded_at,
            superseded_at,
            rest: span,
        })
    }

    /// The row's packed `rest` in `bytes`, the buffer it was appended to.
    pub fn packed<'a>(&self, bytes: &'a [u8]) -> Option<&'a [u8]> {
        bytes.get(self.rest.0 as usize..self.rest.1 as usize)
    }

    /// Reads a row selected with [`VERSION_COLUMNS`], appending its `rest`
    /// to `bytes`.
    pub(crate) fn read(r: &Row, bytes: &mut Vec<u8>) -> rusqlite::Result<VersionRow> {
        let mut fields = [0i64; 8];
        for (i, f) in fields.iter_mut().enumerate() {
            *f = r.get(i)?;
        }
        VersionRow::new(fields, r.get_ref(8)?.as_blob()?, bytes)
    }

    /// The row as a [`Version`] and the evidence its assertion cited (`bytes`:
    /// the buffer [`VersionRow::read`] appended to).
    pub(crate) fn decode(
        &self,
        bytes: &[u8],
        conn: &Connection,
        d: &mut Decoder,
    ) -> rusqlite::Result<(Version, Cited)> {
        self.decode_with(bytes, Some(conn), d)
    }

    /// [`VersionRow::decode`] of a row whose claim `d` has resolved
    /// ([`Decoder::resolve_claims`]): no connection needed, so any thread can.
    pub(crate) fn decode_known(
        &self,
        bytes: &[u8],
        d: &mut Decoder,
    ) -> rusqlite::Result<(Version, Cited)> {
        self.decode_with(bytes, None, d)
    }

    fn decode_with(
        &self,
        bytes: &[u8],
        conn: Option<&Connection>,
        d: &mut Decoder,
    ) -> rusqlite::Result<(Version, Cited)> {
        let agent = Decoder::coded(&d.agents, self.agent, "agent")?;
        let topic = Decoder::coded(&d.topics, self.topic, "topic")?;
        let claim = d.claim(conn, self.claim)?;
        let rest = self
            .packed(bytes)
            .and_then(|rest| {
                crate::store::codec::unpack(
                    rest,
                    Anchor {
                        recorded_at: self.recorded_at,
                        valid_to: self.valid_to,
                    },
                )
            })
            .ok_or_else(|| damaged("a version's packed fields (rest) do not decode".into()))?;
        let (assertion, cites) = d.assertion(&rest);
        let closed = rest.closed.map(|(seq, by, retracted)| Closure {
            seq,
            event: d.id(by),
            kind: if retracted {
                CloseKind::Retracted
            } else {
                CloseKind::Superseded
            },
        });
        let version = Version {
            id: self.id as u64,
            agent,
            topic,
            claim,
            confidence: rest.confidence,
            valid: Interval::new(self.valid_from, self.valid_to),
            recorded_at: self.recorded_at,
            superseded_at: self.superseded_at,
            assertion,
            origin: if rest.split {
                Origin::Split
            } else {
                Origin::Asserted
            },
            created_by: rest.created_by,
            closed,
            clipped_by: rest.clipped_by.map(|c| d.id(c)),
            requested_valid_to: rest.requested_valid_to,
            supported_at: rest.supported_at,
            reconfirmed: rest.reconfirmed,
        };
        Ok((version, cites))
    }
}

/// A row selected with [`VERSION_COLUMNS`] (from `versions v`) as a
/// [`Version`] and the evidence its assertion cited.
pub(crate) fn read_version(
    r: &Row,
    conn: &Connection,
    d: &mut Decoder,
) -> rusqlite::Result<(Version, Cited)> {
    let mut bytes = std::mem::take(&mut d.scratch);
    bytes.clear();
    let read = VersionRow::read(r, &mut bytes).and_then(|row| row.decode(&bytes, conn, d));
    d.scratch = bytes;
    read
}

/// Every version, by id. (Read in the table's order and sorted here: walking the
/// id index would look up each row.)
pub(crate) fn versions(conn: &Connection) -> rusqlite::Result<Vec<Version>> {
    let mut decoder = Decoder::new(coded_names(&header(conn)?), true);
    let mut stmt = conn.prepare(&format!("SELECT {VERSION_COLUMNS} FROM versions v"))?;
    let rows = stmt.query_map([], |r| Ok(read_version(r, conn, &mut decoder)?.0))?;
    let mut versions = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    versions.sort_unstable_by_key(|v| v.id);
    Ok(versions)
}

/// The first and last recorded instants of the log (two index look-ups).
pub(crate) fn span(conn: &Connection) -> rusqlite::Result<Option<(i64, i64)>> {
    conn.query_row(
        "SELECT (SELECT min(recorded_at) FROM events), (SELECT max(recorded_at) FROM events)",
        [],
        |r| Ok(r.get::<_, Option<i64>>(0)?.zip(r.get::<_, Option<i64>>(1)?)),
    )
}

/// When the event `id` was recorded, if the log has it (by the `events_by_id` index).
pub(crate) fn recorded_at_of(conn: &Connection, id: &str) -> rusqlite::Result<Option<i64>> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached("SELECT recorded_at FROM events WHERE id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()
}

/// The `truths` table, by (agent, topic).
pub(crate) fn truths(
    conn: &Connection,
) -> rusqlite::Result<std::collections::BTreeMap<(String, String), asof_core::engine::answers::Truth>>
{
    let mut stmt = conn.prepare("SELECT agent, topic, converged_at, time_wrong_ms FROM truths")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            (r.get(0)?, r.get(1)?),
            asof_core::engine::answers::Truth {
                converged_at: r.get(2)?,
                time_wrong_ms: r.get(3)?,
            },
        ))
    })?;
    rows.collect()
}

/// A trace's model calls as stored, `(n, the call as JSON)` in order; none
/// when the store has no `model_calls` table (made before it, or a store
/// that only read them from its summary).
pub(crate) fn model_call_rows(conn: &Connection) -> rusqlite::Result<Vec<(i64, String)>> {
    if !has_model_calls(conn)? {
        return Ok(Vec::new());
    }
    conn.prepare("SELECT n, call FROM model_calls ORDER BY n")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect()
}

/// Whether the store has a `model_calls` table (a store made before it
/// existed has none).
fn has_model_calls(conn: &Connection) -> rusqlite::Result<bool> {
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'model_calls'",
        [],
        |r| r.get(0),
    )?;
    Ok(tables > 0)
}

/// Each stored model call's row after call `after`, in order, handed to
/// `each` until it returns false.
pub(crate) fn each_model_call_row_after(
    conn: &Connection,
    after: i64,
    mut each: impl FnMut(&str) -> bool,
) -> rusqlite::Result<()> {
    if !has_model_calls(conn)? {
        return Ok(());
    }
    let mut stmt = conn.prepare("SELECT call FROM model_calls WHERE n > ?1 ORDER BY n")?;
    let mut rows = stmt.query([after])?;
    while let Some(r) = rows.next()? {
        if !each(r.get_ref(0)?.as_str()?) {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of agent 0, topic 0, claim 0 for an assertion (seq, id,
    /// citations), with its packed fields appended to `bytes`.
    fn row(seq: i64, assertion: &str, cites: &[&str], bytes: &mut Vec<u8>) -> VersionRow {
        let (recorded_at, valid_to) = (1_000, OPEN);
        let rest = Rest {
            split: true,
            confidence: 0.5,
            created_by: seq as u64,
            assertion_seq: seq,
            requested_valid_to: valid_to,
            supported_at: recorded_at,
            assertion,
            closed: None,
            clipped_by: None,
            supported_by: cites.to_vec(),
            reconfirmed: Vec::new(),
        };
        let mut packed = Vec::new();
        rest.pack(
            Anchor {
                recorded_at,
                valid_to,
            },
            &mut packed,
        );
        let fields = [seq, 0, 0, 0, 0, valid_to, recorded_at, OPEN];
        VersionRow::new(fields, &packed, bytes).expect("a row")
    }

    fn decoder(share_ids: bool) -> Decoder {
        let names = |n: &str| -> std::sync::Arc<[Name]> { vec![Name::from(n)].into() };
        let mut d = Decoder::new((names("agent"), names("topic")), share_ids);
        d.claims.insert(0, Name::from("claim"));
        d
    }

    /// Split pieces of one assertion share its citations; an assertion in
    /// the same slot of the cache, or a row whose fields disagree with the
    /// kept ones (a damaged store), is read from its own fields.
    #[test]
    fn pieces_share_their_assertion_and_a_slot_never_answers_for_another() {
        for share_ids in [false, true] {
            let kept = match share_ids {
                false => ASSERTIONS_KEPT.0,
                true => ASSERTIONS_KEPT.1,
            } as i64;
            let mut bytes = Vec::new();
            let rows = [
                row(5, "A5", &["E1", "E2"], &mut bytes),
                row(5, "A5", &["E1", "E2"], &mut bytes),
                row(5 + kept, "A9", &["E3"], &mut bytes),
                row(5, "A5", &["E1", "E2"], &mut bytes),
                row(5, "A5", &["E1"], &mut bytes),
                row(5, "B5", &["E1"], &mut bytes),
            ];
            let mut d = decoder(share_ids);
            let read: Vec<(Version, Cited)> = rows
                .iter()
                .map(|r| r.decode_known(&bytes, &mut d).expect("decodes"))
                .collect();
            let seen: Vec<(&str, Vec<&str>)> = read
                .iter()
                .map(|(v, c)| (v.assertion.as_str(), c.iter().map(Name::as_str).collect()))
                .collect();
            assert_eq!(
                seen,
                [
                    ("A5", vec!["E1", "E2"]),
                    ("A5", vec!["E1", "E2"]),
                    ("A9", vec!["E3"]),
                    ("A5", vec!["E1", "E2"]),
                    ("A5", vec!["E1"]),
                    ("B5", vec!["E1"]),
                ]
            );
            assert!(std::sync::Arc::ptr_eq(&read[0].1, &read[1].1));
            // The colliding assertion took the slot over; the piece after it
            // reads its own fields again.
            assert!(!std::sync::Arc::ptr_eq(&read[0].1, &read[3].1));
        }
    }
}
