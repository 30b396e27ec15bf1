//! The JSON shapes of SPEC §5.1. Keys are part of the contract; open ends are `null`.

use super::{Belief, Changes, EvidenceItem, History, Note};
use crate::engine::quality::{Answer, Ledger, Quality, Verdict};
use crate::time::{self, Micros};
use serde_json::{Value, json};

fn instant(t: Micros) -> Value {
    time::format_opt(t).map_or(Value::Null, Value::String)
}

/// VERSION: `{"agent","topic","claim","confidence","valid_from","valid_to","recorded_at",
/// "superseded_at","supported_by","assertion","origin","closed","clipped_by"}` (+ `requested_valid_to`),
/// with its quality (SPEC §9): `last_support`, `effective_confidence`, `freshness`, `support`.
pub fn version(b: &Belief, q: &Quality) -> Value {
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
        "last_support": instant(q.last_support),
        "effective_confidence": q.effective_confidence,
        "freshness": q.freshness.as_str(),
        "support": q.support.as_str(),
    })
}

/// A version held at `at`, with its quality then.
fn held(b: &Belief, ledger: &Ledger, at: Micros) -> Value {
    version(b, &ledger.quality(&b.version, &b.supported_by, at))
}

/// A version of a history or a change list: closed ones as they were when
/// closed, held ones at `end`.
fn listed(b: &Belief, ledger: &Ledger, end: Micros) -> Value {
    version(
        b,
        &ledger.quality_in_history(&b.version, &b.supported_by, end),
    )
}

pub fn believed(at: Micros, about: Option<Micros>, beliefs: &[Belief], ledger: &Ledger) -> Value {
    json!({
        "as_of": instant(at),
        "about": about.map_or(Value::Null, instant),
        "beliefs": beliefs.iter().map(|b| held(b, ledger, at)).collect::<Vec<_>>(),
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

/// A history; still-held versions' quality is read at `end` (the log's end).
pub fn history(
    agent: Option<&str>,
    topic: &str,
    h: &History,
    ledger: &Ledger,
    end: Micros,
) -> Value {
    json!({
        "agent": agent,
        "topic": topic,
        "quality_at": instant(end),
        "versions": h.versions.iter().map(|b| listed(b, ledger, end)).collect::<Vec<_>>(),
        "events": h.notes.iter().map(note).collect::<Vec<_>>(),
    })
}

pub fn changes(after: Micros, until: Micros, c: &Changes, ledger: &Ledger) -> Value {
    // Versions closed within the window as they were when closed, the rest at `until`.
    let list = |bs: &[Belief]| -> Vec<Value> {
        bs.iter()
            .map(|b| match b.version.superseded_at <= until {
                true => listed(b, ledger, until),
                false => held(b, ledger, until),
            })
            .collect()
    };
    json!({
        "after": instant(after),
        "until": instant(until),
        "created": list(&c.created),
        "closed": list(&c.closed),
    })
}

/// `{"state","since","by","note"}` of the verdict in force (a candidate: nulls).
fn verification(v: Option<&Verdict>) -> Value {
    match v {
        None => json!({"state": "candidate", "since": null, "by": null, "note": null, "id": null}),
        Some(v) => json!({
            "state": v.state.as_str(),
            "since": instant(v.since),
            "by": (!v.by.is_empty()).then_some(v.by.as_str()),
            "note": v.note,
            "id": v.id,
        }),
    }
}

/// One agent's (or the agents') answer on a topic (SPEC §9).
pub fn answer(topic: &str, at: Micros, about: Option<Micros>, a: &Answer) -> Value {
    json!({
        "topic": topic,
        "as_of": instant(at),
        "about": about.map_or(Value::Null, instant),
        "status": a.status.as_str(),
        "claim": a.claim(),
        "claims": a.claims,
        "agents": a.agents.iter().map(|c| json!({
            "agent": c.agent,
            "claim": c.claim,
            "effective_confidence": c.effective_confidence,
            "support": c.support.as_str(),
            "assertion": c.assertion,
        })).collect::<Vec<_>>(),
    })
}

/// The evidence list with each item's verification at `at` and the verdicts
/// recorded by then.
pub fn evidence(items: &[EvidenceItem], ledger: &Ledger, at: Micros) -> Value {
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
                "verification": verification(ledger.verdict(&e.id, at)),
                "verifications": ledger.verdicts(&e.id, at).iter().map(|v| verification(Some(v))).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "as_of": instant(at), "evidence": items })
}
