//! Reading a store back into the model.

use crate::model::{
    Agent, Assertion, Cardinality, CloseKind, Closure, Event, EventBody, Evidence, Header,
    Incident, Name, Names, Origin, RetractTarget, Retraction, Topic, Verification, VerifyState,
    Version,
};
use crate::time::{Interval, OPEN};
use rusqlite::{Connection, OptionalExtension, Row};

pub(super) fn meta(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
}

pub(super) fn header(conn: &Connection) -> rusqlite::Result<Header> {
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

/// Every event's citations (`supported_by` / `because`), in order, by seq.
pub fn citations(
    conn: &Connection,
) -> rusqlite::Result<std::collections::HashMap<i64, Vec<String>>> {
    let mut cites: std::collections::HashMap<i64, Vec<String>> = std::collections::HashMap::new();
    let mut stmt = conn.prepare("SELECT seq, evidence FROM citations ORDER BY seq, pos")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        cites.entry(r.get(0)?).or_default().push(r.get(1)?);
    }
    Ok(cites)
}

/// The whole log in file order, citations included.
pub(super) fn events(conn: &Connection) -> rusqlite::Result<Vec<Event>> {
    let mut cites = citations(conn)?;
    let mut stmt = conn.prepare(&format!("SELECT {EVENT_COLUMNS} FROM events ORDER BY seq"))?;
    let rows = stmt.query_map([], |r| {
        let cited = cites.remove(&r.get(0)?).unwrap_or_default();
        event(r, cited)
    })?;
    rows.collect()
}

/// The columns [`event`] reads, in its order.
pub const EVENT_COLUMNS: &str =
    "seq, id, kind, recorded_at, agent, topic, claim, confidence, valid_from, valid_to,
     clip, assertion, evidence_kind, source, locator, observed_at, observed_until,
     reliability, text, verifies, state";
/// How many columns [`EVENT_COLUMNS`] names (a query may select more after them).
pub const EVENT_COLUMN_COUNT: usize = 21;

/// A row selected with [`EVENT_COLUMNS`] as an [`Event`] citing `cited`.
pub fn event(r: &Row, cited: Vec<String>) -> rusqlite::Result<Event> {
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

pub const VERSION_COLUMNS: &str =
    "v.id, v.agent, v.topic, v.claim, v.confidence, v.valid_from, v.valid_to,
    v.recorded_at, v.superseded_at, v.assertion, v.origin, v.created_by, v.closed_seq, v.closed_by,
    v.closed_kind, v.clipped_by, v.requested_valid_to, v.supported_at, v.reconfirmed";
/// How many columns [`VERSION_COLUMNS`] names (a query may select more after them).
pub const VERSION_COLUMN_COUNT: usize = 19;

/// A row selected with [`VERSION_COLUMNS`] (from `versions v`) as a [`Version`],
/// sharing agent, topic, claim and event ids through `names` (a million versions
/// name a few thousand distinct agents, topics and claims, and event ids repeat
/// across split pieces).
pub fn version_named(r: &Row, names: &mut Names) -> rusqlite::Result<Version> {
    read_version(r, names, true)
}

/// [`version_named`] sharing only agents, topics and claims: for answers of
/// tens of thousands of rows, where nearly every event id is new and a fresh
/// copy is cheaper than looking it up.
pub fn version_sharing_claims(r: &Row, names: &mut Names) -> rusqlite::Result<Version> {
    read_version(r, names, false)
}

fn read_version(r: &Row, names: &mut Names, share_ids: bool) -> rusqlite::Result<Version> {
    let mut id = |i: usize| -> rusqlite::Result<Name> {
        let text = r.get_ref(i)?.as_str()?;
        Ok(if share_ids {
            names.get(text)
        } else {
            Name::from(text)
        })
    };
    let assertion = id(9)?;
    let closed = match r.get::<_, Option<i64>>(12)? {
        Some(seq) => Some(Closure {
            seq: seq as u64,
            event: id(13)?,
            kind: if r.get_ref(14)?.as_str()? == "retracted" {
                CloseKind::Retracted
            } else {
                CloseKind::Superseded
            },
        }),
        None => None,
    };
    let clipped_by = match r.get_ref(15)? {
        rusqlite::types::ValueRef::Null => None,
        _ => Some(id(15)?),
    };
    let mut name = |i: usize| -> rusqlite::Result<Name> { Ok(names.get(r.get_ref(i)?.as_str()?)) };
    Ok(Version {
        id: r.get::<_, i64>(0)? as u64,
        agent: name(1)?,
        topic: name(2)?,
        claim: name(3)?,
        confidence: r.get(4)?,
        valid: Interval::new(r.get(5)?, r.get(6)?),
        recorded_at: r.get(7)?,
        superseded_at: r.get(8)?,
        assertion,
        origin: if r.get_ref(10)?.as_str()? == "split" {
            Origin::Split
        } else {
            Origin::Asserted
        },
        created_by: r.get::<_, i64>(11)? as u64,
        closed,
        clipped_by,
        requested_valid_to: r.get(16)?,
        supported_at: r.get(17)?,
        reconfirmed: match r.get_ref(18)?.as_str_or_null()? {
            None => Vec::new(),
            Some(list) => crate::store::codec::instants(list)?,
        },
    })
}

/// Every version, by id. (Read in the table's order and sorted here: walking the
/// id index would look up each row.)
pub(crate) fn versions(conn: &Connection) -> rusqlite::Result<Vec<Version>> {
    let mut stmt = conn.prepare(&format!("SELECT {VERSION_COLUMNS} FROM versions v"))?;
    let mut names = Names::default();
    let rows = stmt.query_map([], |r| version_named(r, &mut names))?;
    let mut versions = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    versions.sort_unstable_by_key(|v| v.id);
    Ok(versions)
}

/// The first and last recorded instants of the log (two index look-ups).
pub fn span(conn: &Connection) -> rusqlite::Result<Option<(i64, i64)>> {
    conn.query_row(
        "SELECT (SELECT min(recorded_at) FROM events), (SELECT max(recorded_at) FROM events)",
        [],
        |r| Ok(r.get::<_, Option<i64>>(0)?.zip(r.get::<_, Option<i64>>(1)?)),
    )
}

/// The `truths` table, by (agent, topic).
pub fn truths(
    conn: &Connection,
) -> rusqlite::Result<std::collections::BTreeMap<(String, String), crate::engine::answers::Truth>> {
    let mut stmt = conn.prepare("SELECT agent, topic, converged_at, time_wrong_ms FROM truths")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            (r.get(0)?, r.get(1)?),
            crate::engine::answers::Truth {
                converged_at: r.get(2)?,
                time_wrong_ms: r.get(3)?,
            },
        ))
    })?;
    rows.collect()
}
