//! The JSON shapes of SPEC §5.1. Keys are part of the contract; open ends are `null`.

use super::{Belief, Changes, EvidenceItem, History, Note};
use crate::time::{self, Micros};
use serde_json::{Value, json};

fn instant(t: Micros) -> Value {
    time::format_opt(t).map_or(Value::Null, Value::String)
}

/// VERSION: `{"agent","topic","claim","confidence","valid_from","valid_to","recorded_at",
/// "superseded_at","supported_by","assertion","origin","closed","clipped_by"}` (+ `requested_valid_to`).
pub fn version(b: &Belief) -> Value {
    let v = &b.version;
    json!({
        "agent": v.agent,
        "topic": v.topic,
        "claim": v.claim,
        "confidence": v.confidence,
        "valid_from": instant(v.valid.from),
        "valid_to": instant(v.valid.to),
        "recorded_at": instant(v.recorded_at),
        "superseded_at": instant(v.superseded_at),
        "supported_by": b.supported_by,
        "assertion": v.assertion,
        "origin": v.origin.as_str(),
        "closed": v.closed.as_ref().map(|c| json!({"by": c.event, "kind": c.kind.as_str()})),
        "clipped_by": v.clipped_by,
        "requested_valid_to": instant(v.requested_valid_to),
    })
}

pub fn believed(at: Micros, about: Option<Micros>, beliefs: &[Belief]) -> Value {
    json!({
        "as_of": instant(at),
        "about": about.map_or(Value::Null, instant),
        "beliefs": beliefs.iter().map(version).collect::<Vec<_>>(),
    })
}

fn note(n: &Note) -> Value {
    json!({
        "event": n.event,
        "effect": n.effect.as_str(),
        "recorded_at": instant(n.recorded_at),
        "agent": n.agent,
        "claim": n.claim,
        "cites": n.cites,
    })
}

pub fn history(agent: Option<&str>, topic: &str, h: &History) -> Value {
    json!({
        "agent": agent,
        "topic": topic,
        "versions": h.versions.iter().map(version).collect::<Vec<_>>(),
        "events": h.notes.iter().map(note).collect::<Vec<_>>(),
    })
}

pub fn changes(after: Micros, until: Micros, c: &Changes) -> Value {
    json!({
        "after": instant(after),
        "until": instant(until),
        "created": c.created.iter().map(version).collect::<Vec<_>>(),
        "closed": c.closed.iter().map(version).collect::<Vec<_>>(),
    })
}

pub fn evidence(items: &[EvidenceItem]) -> Value {
    let items: Vec<Value> = items
        .iter()
        .map(|i| {
            let e = &i.evidence;
            json!({
                "id": e.id,
                "kind": e.kind,
                "source": e.source,
                "locator": e.locator,
                "observed_at": instant(e.observed_at),
                "observed_until": e.observed_until.map_or(Value::Null, instant),
                "recorded_at": instant(e.recorded_at),
                "lag_ms": e.lag() / 1000,
                "reliability": e.reliability,
                "summary": e.summary,
                "cited_by": i.cited_by,
            })
        })
        .collect();
    json!({ "evidence": items })
}
