//! The JSON shapes of design.md §8. Keys are part of the contract; open ends are `null`.

use super::{Belief, Changes, EvidenceItem, History, Note};
use asof_core::engine::quality::{Answer, Ledger, Quality, Verdict};
use asof_core::time::{self, Micros};
use serde_json::{Value, json};

fn instant(t: Micros) -> Value {
    time::format_opt(t).map_or(Value::Null, Value::String)
}

/// VERSION: `{"agent","topic","claim","confidence","valid_from","valid_to","recorded_at",
/// "superseded_at","supported_by","assertion","origin","closed","clipped_by"}` (+
/// `requested_valid_to`),
/// with its quality (design.md §4): `last_support`, `effective_confidence`, `freshness`, `support`.
///
/// Serialized straight from the belief (no [`Value`] tree: an all-topics answer
/// at a million events holds tens of thousands of versions); the fields are
/// in the keys' alphabetical order, the order every other shape prints in.
#[derive(serde::Serialize)]
pub struct VersionJson<'a> {
    agent: &'a str,
    assertion: &'a str,
    /// The fields of its assertion an importer filled in by default.
    assumed: &'a [asof_core::model::Assumed],
    claim: &'a str,
    clipped_by: Option<&'a str>,
    closed: Option<ClosedJson<'a>>,
    confidence: f64,
    effective_confidence: f64,
    freshness: &'static str,
    last_support: Option<String>,
    /// What happened to the version after the as-of instant of the answer it
    /// is in (absent when nothing did, and in histories, which have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    later: Option<LaterJson<'a>>,
    origin: &'static str,
    recorded_at: Option<String>,
    requested_valid_to: Option<String>,
    superseded_at: Option<String>,
    support: &'static str,
    supported_by: &'a [asof_core::model::Name],
    topic: &'a str,
    valid_from: Option<String>,
    valid_to: Option<String>,
}

#[derive(serde::Serialize)]
struct ClosedJson<'a> {
    by: &'a str,
    kind: &'static str,
}

/// A version's fate after an as-of instant: when and by what it was closed,
/// which was not known at that instant (design.md §5).
#[derive(serde::Serialize)]
struct LaterJson<'a> {
    closed: Option<ClosedJson<'a>>,
    superseded_at: Option<String>,
}

impl<'a> VersionJson<'a> {
    /// The version as an answer as of `at` gives it: only what was recorded
    /// by `at` at the top level, its closing (if after `at`) in `later`.
    pub fn as_of(b: &'a Belief, q: &Quality, at: Micros) -> VersionJson<'a> {
        let mut json = VersionJson::new(b, q);
        if b.version.superseded_at > at && b.version.superseded_at != asof_core::time::OPEN {
            json.later = Some(LaterJson {
                closed: json.closed.take(),
                superseded_at: json.superseded_at.take(),
            });
        }
        json
    }

    /// With the fields its assertion's importer assumed (the ledger's).
    pub fn assuming(mut self, ledger: &'a Ledger) -> VersionJson<'a> {
        self.assumed = ledger.assumed(self.assertion);
        self
    }

    /// The version whole, every closing in place (histories: no as-of instant).
    pub fn new(b: &'a Belief, q: &Quality) -> VersionJson<'a> {
        let v = &b.version;
        VersionJson {
            agent: &v.agent,
            assertion: &v.assertion,
            assumed: &[],
            claim: &v.claim,
            clipped_by: v.clipped_by.as_deref(),
            closed: v.closed.as_ref().map(|c| ClosedJson {
                by: &c.event,
                kind: c.kind.as_str(),
            }),
            confidence: v.confidence,
            effective_confidence: q.effective_confidence,
            freshness: q.freshness.as_str(),
            last_support: time::format_opt(q.last_support),
            later: None,
            origin: v.origin.as_str(),
            recorded_at: time::format_opt(v.recorded_at),
            requested_valid_to: time::format_opt(v.requested_valid_to),
            superseded_at: time::format_opt(v.superseded_at),
            support: q.support.as_str(),
            supported_by: &b.supported_by,
            topic: &v.topic,
            valid_from: time::format_opt(v.valid.from),
            valid_to: time::format_opt(v.valid.to),
        }
    }
}

/// A VERSION as a [`Value`] (for the smaller shapes built as trees).
pub fn version(b: &Belief, q: &Quality) -> Value {
    serde_json::to_value(VersionJson::new(b, q)).unwrap_or(Value::Null)
}

/// A version held at `at`, with its quality then and its later fate apart.
fn held(b: &Belief, ledger: &Ledger, at: Micros) -> Value {
    let q = ledger.quality(&b.version, &b.supported_by, at);
    serde_json::to_value(VersionJson::as_of(b, &q, at).assuming(ledger)).unwrap_or(Value::Null)
}

/// A version of a history or a change list: closed ones as they were when
/// closed, held ones at `end`.
fn listed(b: &Belief, ledger: &Ledger, end: Micros) -> Value {
    let q = ledger.quality_in_history(&b.version, &b.supported_by, end);
    serde_json::to_value(VersionJson::new(b, &q).assuming(ledger)).unwrap_or(Value::Null)
}

/// `believed`: `{"about","as_of","beliefs"}`, each belief serialized as it is
/// written (see [`VersionJson`]).
#[derive(serde::Serialize)]
pub struct BelievedJson<'a> {
    about: Option<String>,
    as_of: Option<String>,
    beliefs: HeldJson<'a>,
    /// How the times asked were read, when they were not written out whole
    /// (`2026-03-03 → 2026-03-03T23:59:59.999999Z (the end of that day)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    read_as: Option<String>,
}

impl BelievedJson<'_> {
    /// The same answer, saying how the instant asked for was read (`said`).
    pub fn read_as(mut self, said: Option<String>) -> Self {
        self.read_as = said;
        self
    }
}

/// The held versions of [`BelievedJson`], with their quality at `at`.
pub struct HeldJson<'a> {
    beliefs: &'a [Belief],
    ledger: &'a Ledger,
    at: Micros,
}

impl serde::Serialize for HeldJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.beliefs.iter().map(|b| {
            let q = self.ledger.quality(&b.version, &b.supported_by, self.at);
            VersionJson::as_of(b, &q, self.at).assuming(self.ledger)
        }))
    }
}

/// `asof believed --format json`: the versions held at `at` (valid at `about`, if given), each with
/// its quality then.
pub fn believed<'a>(
    at: Micros,
    about: Option<Micros>,
    beliefs: &'a [Belief],
    ledger: &'a Ledger,
) -> BelievedJson<'a> {
    BelievedJson {
        about: about.and_then(time::format_opt),
        as_of: time::format_opt(at),
        beliefs: HeldJson {
            beliefs,
            ledger,
            at,
        },
        read_as: None,
    }
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

/// `asof changes --format json`: the versions created and closed in `(after, until]`, each as it
/// was when closed (the rest at `until`).
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

/// One agent's (or the agents') answer on a topic (design.md §4).
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
            "freshness": c.freshness.as_str(),
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
                // The dataset format's lag (from the instant observed), as the JSON always
                // gave it; the LAG column's (from the end of the observed
                // interval, design.md §8) beside it.
                "lag_ms": e.lag_from_start() / 1000,
                "lag_from_end_ms": e.lag() / 1000,
                "reliability": e.reliability,
                "summary": e.summary,
                // The whole text the agent read (the summary when that is all of it).
                "content": e.content.as_deref().unwrap_or(&e.summary),
                // Only what was known at `at`: citations recorded by then.
                "cited_by": i.cited_by_at(at),
                // Listed by `evidence --at T --all`: not known at T.
                "not_yet_recorded": (e.recorded_at > at).then_some("not yet recorded"),
                "verification": verification(ledger.verdict(&e.id, at)),
                "verifications": ledger.verdicts(&e.id, at).iter().map(|v| verification(Some(v))).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "as_of": instant(at), "evidence": items })
}

#[cfg(test)]
mod tests {
    use super::*;
    use asof_core::engine::quality::{Freshness, Support};
    use asof_core::model::{CloseKind, Closure, Name, Origin, Version};
    use asof_core::time::{Interval, OPEN};

    fn belief() -> Belief {
        Belief {
            version: Version {
                id: 7,
                agent: "triage".into(),
                topic: "root-cause".into(),
                claim: "db".into(),
                confidence: 0.8,
                valid: Interval::new(1_000_000, OPEN),
                recorded_at: 2_000_000,
                superseded_at: 3_000_000,
                assertion: "B1".into(),
                origin: Origin::Split,
                created_by: 2,
                closed: Some(Closure {
                    seq: 3,
                    event: "R1".into(),
                    kind: CloseKind::Retracted,
                }),
                clipped_by: Some("B0".into()),
                requested_valid_to: OPEN,
                supported_at: 1_500_000,
                reconfirmed: Vec::new(),
            },
            supported_by: vec![Name::from("E1"), Name::from("E2")].into(),
        }
    }

    const QUALITY: Quality = Quality {
        last_support: 1_500_000,
        effective_confidence: 0.4,
        freshness: Freshness::Stale,
        support: Support::Contested,
    };

    /// The struct prints exactly what a `Value` tree (keys sorted) prints: the
    /// same keys, in the same order, with the same values.
    #[test]
    fn a_version_prints_as_its_value_tree_does() {
        let b = belief();
        let direct = serde_json::to_string_pretty(&VersionJson::new(&b, &QUALITY)).unwrap();
        let tree = serde_json::to_string_pretty(&version(&b, &QUALITY)).unwrap();
        assert_eq!(direct, tree);
        let v: Value = serde_json::from_str(&direct).unwrap();
        assert_eq!(v["closed"], json!({"by": "R1", "kind": "retracted"}));
        assert_eq!(v["valid_to"], Value::Null);
        assert_eq!(v["last_support"], "1970-01-01T00:00:01.500Z");
        assert_eq!(v["freshness"], "stale");
        assert_eq!(v["supported_by"], json!(["E1", "E2"]));
    }

    /// As of an instant before its closing, a version says nothing of it at
    /// the top level: the closing is `later`.
    #[test]
    fn a_version_as_of_before_its_closing_keeps_the_closing_apart() {
        let b = belief();
        let v = serde_json::to_value(VersionJson::as_of(&b, &QUALITY, 2_500_000)).unwrap();
        assert_eq!(v["superseded_at"], Value::Null);
        assert_eq!(v["closed"], Value::Null);
        assert_eq!(
            v["later"],
            json!({"superseded_at": "1970-01-01T00:00:03Z", "closed": {"by": "R1", "kind": "retracted"}})
        );
        // As of its closing instant, the closing is known: no `later`.
        let v = serde_json::to_value(VersionJson::as_of(&b, &QUALITY, 3_000_000)).unwrap();
        assert_eq!(v["superseded_at"], "1970-01-01T00:00:03Z");
        assert!(v.get("later").is_none());
    }

    #[test]
    fn believed_prints_its_keys_in_order_and_every_belief() {
        let b = [belief(), belief()];
        let ledger = Ledger::default();
        let text = serde_json::to_string(&believed(5_000_000, None, &b, &ledger)).unwrap();
        assert!(
            text.starts_with(
                r#"{"about":null,"as_of":"1970-01-01T00:00:05Z","beliefs":[{"agent":"triage""#
            ),
            "{text}"
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["beliefs"].as_array().unwrap().len(), 2);
    }
}
