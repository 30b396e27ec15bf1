//! The dataset as written: serde shapes shared by the YAML and JSONL readers.
//! Timestamps stay text here; `validate` parses them so errors carry locations.

use serde::Deserialize;

/// The header's `incident` mapping.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIncident {
    /// `incident.id`.
    pub id: String,
    /// `incident.title`.
    #[serde(default)]
    pub title: String,
}

/// One entry of the header's `agents` list.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAgent {
    /// `id`.
    pub id: String,
    /// `name`; the id when left out.
    #[serde(default)]
    pub name: Option<String>,
}

/// One entry of the header's `topics` list.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTopic {
    /// `id`.
    pub id: String,
    /// `question`.
    #[serde(default)]
    pub question: String,
    /// `cardinality`; `one` when left out.
    #[serde(default)]
    pub cardinality: Option<crate::model::Cardinality>,
    /// `resolution`: the right answer, when known.
    #[serde(default)]
    pub resolution: Option<String>,
    /// `half_life`, a duration as written (`6h`).
    #[serde(default)]
    pub half_life: Option<String>,
    /// `stale_after`, a duration as written.
    #[serde(default)]
    pub stale_after: Option<String>,
}

/// The JSONL header line.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHeader {
    /// `asof`: the format's version (1).
    pub asof: u32,
    /// `incident`.
    pub incident: RawIncident,
    /// `agents`.
    #[serde(default)]
    pub agents: Vec<RawAgent>,
    /// `topics`.
    #[serde(default)]
    pub topics: Vec<RawTopic>,
}

/// A whole YAML document; events stay untyped so each one fails on its own.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawYamlDocument {
    /// `asof`: the format's version (1).
    pub asof: u32,
    /// `incident`.
    pub incident: RawIncident,
    /// `agents`.
    #[serde(default)]
    pub agents: Vec<RawAgent>,
    /// `topics`.
    #[serde(default)]
    pub topics: Vec<RawTopic>,
    /// `events`, each read on its own.
    #[serde(default)]
    pub events: Vec<serde_yaml::Value>,
}

impl RawYamlDocument {
    /// The header, and the events still to be read.
    pub fn split(self) -> (RawHeader, Vec<serde_yaml::Value>) {
        let header = RawHeader {
            asof: self.asof,
            incident: self.incident,
            agents: self.agents,
            topics: self.topics,
        };
        (header, self.events)
    }
}

/// One event: a mapping with exactly one of the keys `evidence`, `believe`,
/// `retract`, `verify`.
///
/// Deserialized by hand: serde_yaml's `Value` only maps YAML tags onto enums, and
/// a hand-written visitor gives one clear message for both formats.
#[derive(Debug, Clone)]
pub enum RawEvent {
    /// An `evidence` mapping.
    Evidence(RawEvidence),
    /// A `believe` mapping.
    Believe(RawBelieve),
    /// A `retract` mapping.
    Retract(RawRetract),
    /// A `verify` mapping.
    Verify(RawVerify),
}

const EVENT_KEYS: &[&str] = &["evidence", "believe", "retract", "verify"];

impl<'de> Deserialize<'de> for RawEvent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EventVisitor)
    }
}

struct EventVisitor;

impl<'de> serde::de::Visitor<'de> for EventVisitor {
    type Value = RawEvent;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a mapping with exactly one key: evidence, believe, retract or verify")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RawEvent, A::Error> {
        use serde::de::Error;
        let Some(key) = map.next_key::<String>()? else {
            return Err(A::Error::custom(
                "an event needs one of the keys evidence, believe, retract or verify",
            ));
        };
        let event = match key.as_str() {
            "evidence" => RawEvent::Evidence(map.next_value()?),
            "believe" => RawEvent::Believe(map.next_value()?),
            "retract" => RawEvent::Retract(map.next_value()?),
            "verify" => RawEvent::Verify(map.next_value()?),
            other => return Err(A::Error::unknown_variant(other, EVENT_KEYS)),
        };
        if let Some(extra) = map.next_key::<String>()? {
            return Err(A::Error::custom(format!(
                "an event has exactly one key (evidence, believe, retract or verify), but `{extra}` follows `{key}`"
            )));
        }
        Ok(event)
    }
}

/// An `evidence` event as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvidence {
    /// `id`.
    pub id: String,
    /// `kind`, one of the model's evidence kinds.
    pub kind: String,
    /// `source`.
    #[serde(default)]
    pub source: String,
    /// `locator`.
    #[serde(default)]
    pub locator: String,
    /// `observed_at`.
    pub observed_at: RawTime,
    /// `observed_until`, for evidence about an interval.
    #[serde(default)]
    pub observed_until: Option<RawTime>,
    /// `recorded_at`.
    pub recorded_at: RawTime,
    /// `reliability`; 1 when left out.
    #[serde(default)]
    pub reliability: Option<f64>,
    /// `summary`.
    #[serde(default)]
    pub summary: String,
    /// The whole text, when the summary is not all of it.
    #[serde(default)]
    pub content: Option<String>,
}

/// A `believe` event as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBelieve {
    /// `id`; made from its place in the log when left out.
    #[serde(default)]
    pub id: Option<String>,
    /// `agent`.
    pub agent: String,
    /// `topic`.
    pub topic: String,
    /// `claim`.
    pub claim: String,
    /// `confidence`; 1 when left out.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// `valid_from`.
    pub valid_from: RawTime,
    /// `valid_to`; open when left out.
    #[serde(default)]
    pub valid_to: Option<RawTime>,
    /// `clip`: `false` keeps the open end from being clipped.
    #[serde(default)]
    pub clip: Option<bool>,
    /// `recorded_at`.
    pub recorded_at: RawTime,
    /// `supported_by`: the evidence ids it cites.
    #[serde(default)]
    pub supported_by: Vec<String>,
    /// `rationale`.
    #[serde(default)]
    pub rationale: Option<String>,
    /// The fields an importer filled in by default (`supported_by`,
    /// `valid_from`, `confidence`, `agent`).
    #[serde(default)]
    pub assumed: Vec<String>,
}

/// A `retract` event as written: of an `assertion`, or of an agent's `topic` (optionally one
/// `claim`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRetract {
    /// `id`; made from its place in the log when left out.
    #[serde(default)]
    pub id: Option<String>,
    /// `agent`; the assertion's when it names one.
    #[serde(default)]
    pub agent: Option<String>,
    /// `topic`.
    #[serde(default)]
    pub topic: Option<String>,
    /// `assertion`.
    #[serde(default)]
    pub assertion: Option<String>,
    /// `claim`.
    #[serde(default)]
    pub claim: Option<String>,
    /// `valid_from`: only this part of valid time, with `valid_to`.
    #[serde(default)]
    pub valid_from: Option<RawTime>,
    /// `valid_to`.
    #[serde(default)]
    pub valid_to: Option<RawTime>,
    /// `recorded_at`.
    pub recorded_at: RawTime,
    /// `because`: the evidence ids that made the agent retract.
    #[serde(default)]
    pub because: Vec<String>,
    /// `reason`.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A `verify` event as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVerify {
    /// `id`; made from its place in the log when left out.
    #[serde(default)]
    pub id: Option<String>,
    /// `evidence`: the item it judges.
    pub evidence: String,
    /// `state`, one of the six verification states.
    pub state: String,
    /// `by`: who judged it.
    #[serde(default)]
    pub by: Option<String>,
    /// `recorded_at`.
    pub recorded_at: RawTime,
    /// `note`.
    #[serde(default)]
    pub note: Option<String>,
}

/// A timestamp as written, parsed where it is read (on the parsing threads for
/// JSON Lines), so validation only looks the result up and keeps the text for
/// its error messages.
#[derive(Debug, Clone)]
pub struct RawTime {
    /// The timestamp as written.
    pub text: String,
    /// What it parses to, or why it does not.
    pub parsed: Result<crate::time::Micros, crate::time::TimeError>,
}

impl From<String> for RawTime {
    fn from(text: String) -> Self {
        let parsed = crate::time::parse(&text);
        RawTime { text, parsed }
    }
}

impl RawTime {
    /// An instant an importer holds as a number: its text as a dataset
    /// writes it, and the number itself where the text would parse back to
    /// it (every accepted instant), so a large import does not read back
    /// what it just wrote.
    pub fn at(micros: crate::time::Micros) -> RawTime {
        let text = crate::time::format(micros);
        if crate::time::accepted(micros) {
            RawTime {
                text,
                parsed: Ok(micros),
            }
        } else {
            RawTime::from(text)
        }
    }
}

impl<'de> Deserialize<'de> for RawTime {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(RawTime::from)
    }
}

#[cfg(test)]
mod tests {
    use super::RawTime;
    use crate::time::{Micros, OPEN};
    use proptest::prelude::*;

    /// What [`RawTime::at`] gives is what reading its text gives.
    fn same_as_read(t: Micros) {
        let at = RawTime::at(t);
        let read = RawTime::from(at.text.clone());
        assert_eq!(at.parsed, read.parsed, "{t} written {}", at.text);
    }

    #[test]
    fn an_instant_held_is_what_its_text_reads_as_at_the_edges() {
        let first = -62_135_596_800_000_000;
        let last = 253_402_300_799_999_999;
        for t in [
            first - 1,
            first,
            first + 1,
            -1,
            0,
            1,
            last - 1,
            last,
            last + 1,
            OPEN,
            i64::MIN,
        ] {
            same_as_read(t);
        }
    }

    proptest! {
        #[test]
        fn an_instant_held_is_what_its_text_reads_as(t in any::<i64>()) {
            same_as_read(t);
        }
    }
}
