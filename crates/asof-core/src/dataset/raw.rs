//! The dataset as written: serde shapes shared by the YAML and JSONL readers.
//! Timestamps stay text here; `validate` parses them so errors carry locations.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIncident {
    pub id: String,
    #[serde(default)]
    pub title: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAgent {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTopic {
    pub id: String,
    #[serde(default)]
    pub question: String,
    #[serde(default)]
    pub cardinality: Option<crate::model::Cardinality>,
    #[serde(default)]
    pub resolution: Option<String>,
    #[serde(default)]
    pub half_life: Option<String>,
    #[serde(default)]
    pub stale_after: Option<String>,
}

/// The JSONL header line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHeader {
    pub asof: u32,
    pub incident: RawIncident,
    #[serde(default)]
    pub agents: Vec<RawAgent>,
    #[serde(default)]
    pub topics: Vec<RawTopic>,
}

/// A whole YAML document; events stay untyped so each one fails on its own.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawYamlDocument {
    pub asof: u32,
    pub incident: RawIncident,
    #[serde(default)]
    pub agents: Vec<RawAgent>,
    #[serde(default)]
    pub topics: Vec<RawTopic>,
    #[serde(default)]
    pub events: Vec<serde_yaml::Value>,
}

impl RawYamlDocument {
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
#[derive(Debug)]
pub enum RawEvent {
    Evidence(RawEvidence),
    Believe(RawBelieve),
    Retract(RawRetract),
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvidence {
    pub id: String,
    pub kind: String,
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub locator: String,
    pub observed_at: RawTime,
    #[serde(default)]
    pub observed_until: Option<RawTime>,
    pub recorded_at: RawTime,
    #[serde(default)]
    pub reliability: Option<f64>,
    #[serde(default)]
    pub summary: String,
    /// The whole text, when the summary is not all of it.
    #[serde(default)]
    pub content: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBelieve {
    #[serde(default)]
    pub id: Option<String>,
    pub agent: String,
    pub topic: String,
    pub claim: String,
    #[serde(default)]
    pub confidence: Option<f64>,
    pub valid_from: RawTime,
    #[serde(default)]
    pub valid_to: Option<RawTime>,
    #[serde(default)]
    pub clip: Option<bool>,
    pub recorded_at: RawTime,
    #[serde(default)]
    pub supported_by: Vec<String>,
    #[serde(default)]
    pub rationale: Option<String>,
    /// The fields an importer filled in by default (`supported_by`,
    /// `valid_from`, `confidence`, `agent`).
    #[serde(default)]
    pub assumed: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRetract {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub topic: Option<String>,
    #[serde(default)]
    pub assertion: Option<String>,
    #[serde(default)]
    pub claim: Option<String>,
    #[serde(default)]
    pub valid_from: Option<RawTime>,
    #[serde(default)]
    pub valid_to: Option<RawTime>,
    pub recorded_at: RawTime,
    #[serde(default)]
    pub because: Vec<String>,
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVerify {
    #[serde(default)]
    pub id: Option<String>,
    pub evidence: String,
    pub state: String,
    #[serde(default)]
    pub by: Option<String>,
    pub recorded_at: RawTime,
    #[serde(default)]
    pub note: Option<String>,
}

/// A timestamp as written, parsed where it is read (on the parsing threads for
/// JSON Lines), so validation only looks the result up and keeps the text for
/// its error messages.
#[derive(Debug, Clone)]
pub struct RawTime {
    pub text: String,
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
