//! The header — incident, agents, topics — packed into one blob (table
//! `header_packed`), what opening a store reads instead of a row per agent
//! and topic and two `meta` rows: a store of a thousand topics spent most of
//! a one-topic `believed` process reading them (docs/performance-log.md). The
//! rows stay the canonical header (SQL reads them, `rebuild` packs them
//! again, `check` compares the two).
//!
//! ```text
//! agents count · topics count · incident id · incident title ·
//! each agent: id · name ·
//! each topic: id · question · flags u8 (1 many · 2 resolution · 4 half_life
//! · 8 stale_after) · [resolution] · [half_life (signed)] · [stale_after (signed)]
//! ```
//!
//! Counts are LEB128 ([`put_unsigned`]), strings their length then their bytes.

use super::codec::{put_signed, put_unsigned, take_signed, take_unsigned};
use asof_core::model::{Agent, Cardinality, Header, Incident, Topic};

const MANY: u8 = 1;
const RESOLUTION: u8 = 2;
const HALF_LIFE: u8 = 4;
const STALE_AFTER: u8 = 8;

/// Stores `header` packed as the store's one `header_packed` row, in place
/// of any there was.
pub(crate) fn write(conn: &rusqlite::Connection, header: &Header) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM header_packed", [])?;
    conn.execute(
        "INSERT INTO header_packed (data) VALUES (?1)",
        [pack(header)],
    )?;
    Ok(())
}

/// `header` packed (see the module's documentation).
fn pack(header: &Header) -> Vec<u8> {
    let mut out = Vec::new();
    put_unsigned(&mut out, header.agents.len() as u64);
    put_unsigned(&mut out, header.topics.len() as u64);
    put_str(&mut out, &header.incident.id);
    put_str(&mut out, &header.incident.title);
    for a in &header.agents {
        put_str(&mut out, &a.id);
        put_str(&mut out, &a.name);
    }
    for t in &header.topics {
        put_str(&mut out, &t.id);
        put_str(&mut out, &t.question);
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        out.push(
            flag(t.cardinality == Cardinality::Many, MANY)
                | flag(t.resolution.is_some(), RESOLUTION)
                | flag(t.half_life.is_some(), HALF_LIFE)
                | flag(t.stale_after.is_some(), STALE_AFTER),
        );
        if let Some(r) = &t.resolution {
            put_str(&mut out, r);
        }
        for n in [t.half_life, t.stale_after].into_iter().flatten() {
            put_signed(&mut out, n);
        }
    }
    out
}

/// A header written by [`pack`]; `None` when the bytes are not one (cut
/// short, a string not UTF-8, an unknown flag, bytes left over).
pub(crate) fn unpack(mut bytes: &[u8]) -> Option<Header> {
    let bytes = &mut bytes;
    let agents = usize::try_from(take_unsigned(bytes)?).ok()?;
    let topics = usize::try_from(take_unsigned(bytes)?).ok()?;
    let incident = Incident {
        id: take_str(bytes)?,
        title: take_str(bytes)?,
    };
    // Each agent takes at least two bytes and each topic three: a count
    // larger than that is damage, not a reason to reserve memory.
    if agents > bytes.len() / 2 || topics > bytes.len() / 3 {
        return None;
    }
    // Made at their size: grown by doubling, the thousand topics of a big
    // store were copied twice over into fresh memory on every open.
    let mut listed = Vec::with_capacity(agents);
    for _ in 0..agents {
        listed.push(Agent {
            id: take_str(bytes)?,
            name: take_str(bytes)?,
        });
    }
    let agents = listed;
    let mut listed = Vec::with_capacity(topics);
    for _ in 0..topics {
        listed.push(take_topic(bytes)?);
    }
    let topics = listed;
    bytes.is_empty().then_some(Header {
        incident,
        agents,
        topics,
    })
}

fn take_topic(bytes: &mut &[u8]) -> Option<Topic> {
    let id = take_str(bytes)?;
    let question = take_str(bytes)?;
    let (&flags, rest) = bytes.split_first()?;
    *bytes = rest;
    if flags & !(MANY | RESOLUTION | HALF_LIFE | STALE_AFTER) != 0 {
        return None;
    }
    let resolution = match flags & RESOLUTION {
        0 => None,
        _ => Some(take_str(bytes)?),
    };
    let mut number = |bit: u8| match flags & bit {
        0 => Some(None),
        _ => take_signed(bytes).map(Some),
    };
    Some(Topic {
        id,
        question,
        cardinality: if flags & MANY == 0 {
            Cardinality::One
        } else {
            Cardinality::Many
        },
        resolution,
        half_life: number(HALF_LIFE)?,
        stale_after: number(STALE_AFTER)?,
    })
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_unsigned(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn take_str(bytes: &mut &[u8]) -> Option<String> {
    let n = usize::try_from(take_unsigned(bytes)?).ok()?;
    let (s, rest) = bytes.split_at_checked(n)?;
    *bytes = rest;
    String::from_utf8(s.to_vec()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn topic() -> impl Strategy<Value = Topic> {
        (
            "[a-z0-9-]{1,12}",
            ".{0,40}",
            any::<bool>(),
            proptest::option::of(".{0,12}"),
            proptest::option::of(any::<i64>()),
            proptest::option::of(any::<i64>()),
        )
            .prop_map(
                |(id, question, many, resolution, half_life, stale_after)| Topic {
                    id,
                    question,
                    cardinality: if many {
                        Cardinality::Many
                    } else {
                        Cardinality::One
                    },
                    resolution,
                    half_life,
                    stale_after,
                },
            )
    }

    fn header() -> impl Strategy<Value = Header> {
        (
            ".{0,10}",
            ".{0,30}",
            proptest::collection::vec(("[a-z0-9-]{1,8}", ".{0,16}"), 0..5),
            proptest::collection::vec(topic(), 0..12),
        )
            .prop_map(|(id, title, agents, topics)| Header {
                incident: Incident { id, title },
                agents: agents
                    .into_iter()
                    .map(|(id, name)| Agent { id, name })
                    .collect(),
                topics,
            })
    }

    proptest! {
        #[test]
        fn a_packed_header_reads_back_as_itself(h in header()) {
            prop_assert_eq!(unpack(&pack(&h)), Some(h));
        }

        /// Every proper prefix and every byte changed by one bit reads as
        /// damage or as some header — never a panic — and a prefix never
        /// reads as the whole.
        #[test]
        fn damaged_bytes_never_panic(h in header(), at in any::<prop::sample::Index>(), bit in 0u8..8) {
            let packed = pack(&h);
            let cut = at.index(packed.len());
            prop_assert_ne!(unpack(&packed[..cut]), Some(h.clone()));
            let mut flipped = packed.clone();
            flipped[cut] ^= 1 << bit;
            let _ = unpack(&flipped);
        }
    }

    #[test]
    fn an_unknown_flag_or_a_byte_left_over_is_damage() {
        let h = Header {
            incident: Incident {
                id: "INC-1".into(),
                title: "t".into(),
            },
            agents: vec![Agent {
                id: "a".into(),
                name: "A".into(),
            }],
            topics: vec![Topic {
                id: "t".into(),
                question: "q?".into(),
                cardinality: Cardinality::Many,
                resolution: None,
                half_life: Some(5),
                stale_after: None,
            }],
        };
        let packed = pack(&h);
        assert_eq!(unpack(&packed), Some(h));
        let mut longer = packed.clone();
        longer.push(0);
        assert_eq!(unpack(&longer), None);
        // The topic's flags byte follows its id and question: "t", "q?".
        let flags = packed.len() - 2;
        assert_eq!(packed[flags], MANY | HALF_LIFE);
        let mut unknown = packed.clone();
        unknown[flags] |= 16;
        assert_eq!(unpack(&unknown), None);
    }
}
