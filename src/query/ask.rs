//! Plain-language questions (SPEC §11), read into the query that answers
//! them: no model, no network, a handful of forms matched whole. Names are
//! matched against the store's header (an agent by id or name, a topic by id
//! with spaces for hyphens), times as everywhere plus `today`/`yesterday
//! HH:MM`. What does not match a form gets the list of forms.

use crate::model::Header;
use crate::time::{self, Micros};
use regex::Regex;
use std::sync::LazyLock;

/// The forms understood, as the refusal lists them.
pub const FORMS: [&str; 5] = [
    "what did AGENT believe [about TOPIC] [at TIME]?",
    "what was the TOPIC [at TIME | now]?",
    "when did AGENT change its mind about TOPIC?",
    "why did AGENT believe CLAIM?",
    "what misled AGENT?  (or: what misled the agents?)",
];

/// A question, read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "form", rename_all = "snake_case")]
pub enum Question {
    /// → `believed`.
    Believed {
        agent: String,
        topic: Option<String>,
        at: Micros,
    },
    /// → `answer`.
    Answer { topic: String, at: Micros },
    /// → `history`: the versions' transitions.
    Changes { agent: String, topic: String },
    /// → the assertions of that claim, their evidence and rationale.
    Why { agent: String, claim: String },
    /// → `influence`.
    Misled { agent: Option<String> },
}

impl Question {
    /// The asof command line that answers it (times resolved).
    pub fn command(&self) -> String {
        match self {
            Question::Believed { agent, topic, at } => {
                let topic = topic
                    .as_ref()
                    .map(|t| format!(" --topic {t}"))
                    .unwrap_or_default();
                format!(
                    "asof believed --at {} --agent {agent}{topic}",
                    time::format(*at)
                )
            }
            Question::Answer { topic, at } => {
                format!("asof answer --topic {topic} --at {}", time::format(*at))
            }
            Question::Changes { agent, topic } => {
                format!("asof history --topic {topic} --agent {agent}")
            }
            Question::Why { agent, claim } => {
                format!(
                    "the assertions of {agent} whose claim contains \"{claim}\", with their rationale and evidence"
                )
            }
            Question::Misled { agent: Some(agent) } => format!("asof influence --agent {agent}"),
            Question::Misled { agent: None } => "asof influence".to_owned(),
        }
    }
}

/// Why a question was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    #[error("`{0}` is not a question asof understands; ask one of:\n  {forms}", forms = FORMS.join("\n  "))]
    Unknown(String),
    #[error("no agent `{name}` in this store; its agents: {known}")]
    Agent { name: String, known: String },
    #[error("no topic `{name}` in this store; its topics: {known}")]
    Topic { name: String, known: String },
    #[error("{0}")]
    Time(String),
}

/// When a question asks about: `at TIME`, `yesterday 14:00`, `now` or nothing (now).
const WHEN: &str =
    r"(?: (?:at|on|as of) (?P<time>.+?)| (?P<day>(?:yesterday|today)(?: .+?)?)| now)?";

static BELIEVED: LazyLock<Regex> = LazyLock::new(|| {
    form(&format!(
        r"what did (?P<agent>.+?) (?:believe|think|hold)(?: about (?P<topic>.+?))?{WHEN}"
    ))
});
static ANSWER: LazyLock<Regex> =
    LazyLock::new(|| form(&format!(r"what (?:was|is) the (?P<topic>.+?){WHEN}")));
static CHANGES: LazyLock<Regex> = LazyLock::new(|| {
    form(r"when did (?P<agent>.+?) change (?:its|their|his|her) mind about (?:the )?(?P<topic>.+?)")
});
static WHY: LazyLock<Regex> =
    LazyLock::new(|| form(r"why did (?P<agent>.+?) (?:believe|think)(?: that)? (?P<claim>.+?)"));
static MISLED: LazyLock<Regex> =
    LazyLock::new(|| form(r"what misled (?:(?P<all>the agents|them|everyone)|(?P<agent>.+?))"));

/// A whole-question pattern: case-insensitive, a trailing `?` optional.
fn form(body: &str) -> Regex {
    Regex::new(&format!(r"(?i)^{body}\??$")).unwrap_or_else(|e| panic!("form {body}: {e}"))
}

/// Reads `question` against `header`; `now` is the instant `now` names.
pub fn parse(question: &str, header: &Header, now: Micros) -> Result<Question, AskError> {
    let text = question.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = text.trim_end_matches('?').trim();
    let at = |c: &regex::Captures| -> Result<Micros, AskError> {
        match c.name("time").or_else(|| c.name("day")) {
            Some(t) => parse_time(t.as_str(), now),
            None => Ok(now),
        }
    };
    if let Some(c) = CHANGES.captures(text) {
        return Ok(Question::Changes {
            agent: agent(&c["agent"], header)?,
            topic: topic(&c["topic"], header)?,
        });
    }
    if let Some(c) = BELIEVED.captures(text) {
        return Ok(Question::Believed {
            agent: agent(&c["agent"], header)?,
            topic: c
                .name("topic")
                .map(|t| topic(t.as_str(), header))
                .transpose()?,
            at: at(&c)?,
        });
    }
    if let Some(c) = WHY.captures(text) {
        let claim = c["claim"].trim_matches(|ch| matches!(ch, '"' | '\'' | '“' | '”'));
        return Ok(Question::Why {
            agent: agent(&c["agent"], header)?,
            claim: claim.to_owned(),
        });
    }
    if let Some(c) = MISLED.captures(text) {
        let agent = match c.name("agent") {
            Some(a) => Some(agent(a.as_str(), header)?),
            None => None,
        };
        return Ok(Question::Misled { agent });
    }
    if let Some(c) = ANSWER.captures(text) {
        return Ok(Question::Answer {
            topic: topic(&c["topic"], header)?,
            at: at(&c)?,
        });
    }
    Err(AskError::Unknown(question.trim().to_owned()))
}

/// A time as everywhere (`time::parse_user`), plus `today HH:MM` and
/// `yesterday HH:MM` (UTC days).
fn parse_time(text: &str, now: Micros) -> Result<Micros, AskError> {
    const DAY: Micros = 86_400_000_000;
    let lower = text.to_ascii_lowercase();
    let (day, rest) = if let Some(rest) = lower.strip_prefix("yesterday") {
        (now - DAY, rest.trim())
    } else if let Some(rest) = lower.strip_prefix("today") {
        (now, rest.trim())
    } else {
        return time::parse_user(text, now, now).map_err(AskError::Time);
    };
    if rest.is_empty() || !rest.contains(':') {
        return Err(AskError::Time(format!(
            "`{text}`: say the time of day too, as in `yesterday 14:00` (UTC)"
        )));
    }
    time::parse_user(rest, now, day).map_err(AskError::Time)
}

/// An agent named by id or name, case-insensitive, `the ` left off.
fn agent(name: &str, header: &Header) -> Result<String, AskError> {
    let name = name.trim();
    let bare = name.strip_prefix("the ").unwrap_or(name);
    header
        .agents
        .iter()
        .find(|a| {
            [name, bare]
                .iter()
                .any(|n| a.id.eq_ignore_ascii_case(n) || a.name.eq_ignore_ascii_case(n))
        })
        .map(|a| a.id.clone())
        .ok_or_else(|| AskError::Agent {
            name: name.to_owned(),
            known: crate::model::known_ids(header.agents.iter().map(|a| a.id.as_str()), name),
        })
}

/// A topic named by id, case-insensitive, with spaces or underscores for
/// hyphens (`root cause` is `root-cause`).
fn topic(name: &str, header: &Header) -> Result<String, AskError> {
    let name = name.trim();
    let key = |s: &str| s.to_ascii_lowercase().replace([' ', '_'], "-");
    let wanted = key(name.strip_prefix("the ").unwrap_or(name));
    header
        .topics
        .iter()
        .find(|t| key(&t.id) == wanted)
        .map(|t| t.id.clone())
        .ok_or_else(|| AskError::Topic {
            name: name.to_owned(),
            known: crate::model::known_ids(header.topics.iter().map(|t| t.id.as_str()), name),
        })
}

/// One assertion behind a claim, with what it cited.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Reason {
    pub assertion: String,
    pub topic: String,
    pub claim: String,
    pub confidence: f64,
    pub recorded_at: String,
    pub valid_from: String,
    /// `null`: open.
    pub valid_to: Option<String>,
    pub rationale: Option<String>,
    pub evidence: Vec<CitedEvidence>,
}

/// An evidence item an assertion cites.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CitedEvidence {
    pub id: String,
    pub kind: String,
    pub source: String,
    pub summary: String,
    pub observed_at: String,
    pub recorded_at: String,
}

/// "why did AGENT believe CLAIM?": every assertion by `agent` whose claim
/// contains `claim` (case-insensitive), in recorded order, with the evidence
/// it cites and its rationale.
pub fn why(log: &crate::model::Dataset, agent: &str, claim: &str) -> Vec<Reason> {
    use crate::model::EventBody;
    let evidence = log.evidence_by_id();
    let wanted = claim.to_lowercase();
    let mut asserted: Vec<&crate::model::Assertion> = log
        .events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Believe(a)
                if a.agent == agent && a.claim.to_lowercase().contains(&wanted) =>
            {
                Some(a)
            }
            _ => None,
        })
        .collect();
    // Recorded order; the sort is stable, so file order breaks ties.
    asserted.sort_by_key(|a| a.recorded_at);
    asserted
        .into_iter()
        .map(|a| Reason {
            assertion: a.id.clone(),
            topic: a.topic.clone(),
            claim: a.claim.clone(),
            confidence: a.confidence,
            recorded_at: time::format(a.recorded_at),
            valid_from: time::format(a.valid.from),
            valid_to: (a.valid.to != time::OPEN).then(|| time::format(a.valid.to)),
            rationale: a.rationale.clone(),
            evidence: a
                .supported_by
                .iter()
                .filter_map(|id| evidence.get(id.as_str()))
                .map(|ev| CitedEvidence {
                    id: ev.id.clone(),
                    kind: ev.kind.clone(),
                    source: ev.source.clone(),
                    summary: ev.summary.clone(),
                    observed_at: time::format(ev.observed_at),
                    recorded_at: time::format(ev.recorded_at),
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        serde_json::from_str(
            r#"{"incident": {"id": "i", "title": "t"},
                "agents": [{"id": "triage", "name": "Triage bot"}],
                "topics": [{"id": "root-cause", "question": "Why?", "cardinality": "one"}]}"#,
        )
        .expect("a header")
    }

    const NOW: Micros = 1_780_000_000_000_000;

    #[test]
    fn each_form_reads_its_names_and_times() {
        let h = header();
        let at = |t: &str| time::parse(t).unwrap();
        assert_eq!(
            parse(
                "What did Triage bot believe about the root cause at 2026-03-03 12:00?",
                &h,
                NOW
            ),
            Ok(Question::Believed {
                agent: "triage".into(),
                topic: Some("root-cause".into()),
                at: at("2026-03-03T12:00:00Z")
            })
        );
        assert_eq!(
            parse("what was the root_cause now", &h, NOW),
            Ok(Question::Answer {
                topic: "root-cause".into(),
                at: NOW
            })
        );
        assert_eq!(
            parse("what was the root cause yesterday 14:00?", &h, NOW),
            Ok(Question::Answer {
                topic: "root-cause".into(),
                at: at("2026-05-27T14:00:00Z")
            })
        );
        assert_eq!(
            parse("why did triage believe \"db\"?", &h, NOW),
            Ok(Question::Why {
                agent: "triage".into(),
                claim: "db".into()
            })
        );
        assert_eq!(
            parse("what misled the agents?", &h, NOW),
            Ok(Question::Misled { agent: None })
        );
    }

    #[test]
    fn unknown_names_times_and_questions_say_what_is_known() {
        let h = header();
        let e = |q: &str| parse(q, &h, NOW).unwrap_err().to_string();
        assert!(e("what did nobody believe?").contains("its agents: triage"));
        assert!(e("what was the weather?").contains("its topics: root-cause"));
        assert!(e("what was the root cause at teatime?").contains("is not a time"));
        assert!(e("what was the root cause yesterday?").contains("the time of day too"));
        let unknown = e("how are you?");
        assert!(
            unknown.contains("not a question asof understands"),
            "{unknown}"
        );
        for form in FORMS {
            assert!(unknown.contains(form), "{unknown}");
        }
    }
}
