//! Plain-language questions (design.md §8), read into the query that answers
//! them: no model, no network, a handful of forms matched whole. Names are
//! matched against the store's header (an agent by id or name, a topic by id
//! with spaces for hyphens), times as everywhere plus `today`/`yesterday
//! HH:MM`. What does not match a form gets the list of forms.
//!
//! Times are read against the log, not the wall clock (design.md §8): a clock
//! time alone is on the day of the last event, `today` and `yesterday` are
//! that day and the one before it, a date alone asks about the end of that
//! day (and the changes during it); `now` stays the wall clock. How a time
//! was read is said ([`When::read_as`]).

use asof_core::model::Header;
use asof_core::time::{self, Micros};
use regex::Regex;
use std::sync::LazyLock;

/// The forms understood, as the refusal lists them.
pub const FORMS: [&str; 5] = [
    "what did AGENT believe [about TOPIC] [at TIME]?",
    "what was the TOPIC [at TIME | now]?",
    "when did AGENT change its mind about TOPIC?",
    "why did AGENT believe CLAIM?",
    "what misled AGENT [about TOPIC]?  (or: what misled the agents?)",
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
    /// → `influence` (of the agent's evidence; the topic, when asked, is
    /// the one the reader looks for in its rows).
    Misled {
        agent: Option<String>,
        topic: Option<String>,
    },
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
            Question::Misled { agent, topic } => {
                let mut command = "asof influence".to_owned();
                if let Some(agent) = agent {
                    command.push_str(&format!(" --agent {agent}"));
                }
                if let Some(topic) = topic {
                    command.push_str(&format!(" --topic {topic}"));
                }
                command
            }
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
static MISLED: LazyLock<Regex> = LazyLock::new(|| {
    form(
        r"what misled (?:(?P<all>the agents|them|everyone)|(?P<agent>.+?))(?: (?:about|on) (?P<topic>.+?))?",
    )
});

/// A whole-question pattern: case-insensitive, a trailing `?` optional.
fn form(body: &str) -> Regex {
    Regex::new(&format!(r"(?i)^{body}\??$")).unwrap_or_else(|e| panic!("form {body}: {e}"))
}

/// How a question's time was read: the instant asked about, the sentence
/// that says how (when it was not written out whole, or lies after the last
/// event), and for a date alone the day whose changes the answer lists.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct When {
    pub read_as: Option<String>,
    /// `[start, end]` of the day a date alone named (both included).
    pub day: Option<(Micros, Micros)>,
}

const DAY: Micros = 86_400_000_000;

/// Reads `question` against `header`; `now` is the instant `now` names and
/// `last` the log's last recorded instant (the day a bare clock time is on).
pub fn parse(
    question: &str,
    header: &Header,
    now: Micros,
    last: Option<Micros>,
) -> Result<(Question, When), AskError> {
    let text = question.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = text.trim_end_matches('?').trim();
    let at = |c: &regex::Captures| -> Result<(Micros, When), AskError> {
        match c.name("time").or_else(|| c.name("day")) {
            Some(t) => parse_time(t.as_str(), now, last),
            None => Ok(said(now, "the time now", "the wall clock", last)),
        }
    };
    if let Some(c) = CHANGES.captures(text) {
        let q = Question::Changes {
            agent: agent(&c["agent"], header)?,
            topic: topic(&c["topic"], header)?,
        };
        return Ok((q, When::default()));
    }
    if let Some(c) = BELIEVED.captures(text) {
        let (at, when) = at(&c)?;
        let q = Question::Believed {
            agent: agent(&c["agent"], header)?,
            topic: c
                .name("topic")
                .map(|t| topic(t.as_str(), header))
                .transpose()?,
            at,
        };
        return Ok((q, when));
    }
    if let Some(c) = WHY.captures(text) {
        let claim = c["claim"].trim_matches(|ch| matches!(ch, '"' | '\'' | '“' | '”'));
        let q = Question::Why {
            agent: agent(&c["agent"], header)?,
            claim: claim.to_owned(),
        };
        return Ok((q, When::default()));
    }
    if let Some(c) = MISLED.captures(text) {
        let agent = match c.name("agent") {
            Some(a) => Some(agent(a.as_str(), header)?),
            None => None,
        };
        let topic = c
            .name("topic")
            .map(|t| topic(t.as_str(), header))
            .transpose()?;
        return Ok((Question::Misled { agent, topic }, When::default()));
    }
    if let Some(c) = ANSWER.captures(text) {
        let (at, when) = at(&c)?;
        let q = Question::Answer {
            topic: topic(&c["topic"], header)?,
            at,
        };
        return Ok((q, when));
    }
    Err(AskError::Unknown(question.trim().to_owned()))
}

/// `text → instant (how)`, and that it is after the last event when it is.
fn said(at: Micros, text: &str, how: &str, last: Option<Micros>) -> (Micros, When) {
    let after = last
        .filter(|&l| at > l)
        .map(|l| {
            format!(
                ", {} after the last event ({})",
                time::format_duration(at - l),
                time::format_short(l)
            )
        })
        .unwrap_or_default();
    let read_as = format!("{text} → {} ({how}){after}", time::format(at));
    (
        at,
        When {
            read_as: Some(read_as),
            day: None,
        },
    )
}

/// A time as everywhere (`time::parse_user`), read against the log: a clock
/// time alone on the last event's day, `today`/`yesterday HH:MM` on that day
/// and the one before, a date alone at its end (its changes listed).
fn parse_time(text: &str, now: Micros, last: Option<Micros>) -> Result<(Micros, When), AskError> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    // The last event's day (the wall clock's for an empty log), at 00:00.
    let base = last.unwrap_or(now);
    let last_day = base - base.rem_euclid(DAY);
    let day_name = |start: Micros| time::format(start)[..10].to_owned();
    let (day, rest, which) = if let Some(rest) = lower.strip_prefix("yesterday") {
        (
            last_day - DAY,
            rest.trim(),
            "yesterday: the day before the last event's",
        )
    } else if let Some(rest) = lower.strip_prefix("today") {
        (last_day, rest.trim(), "today: the day of the last event")
    } else if lower == "now" {
        return Ok(said(now, text, "the wall clock", last));
    } else if lower == "end" {
        return Ok(said(
            last.unwrap_or(now),
            text,
            "the log's last event",
            last,
        ));
    } else if is_clock(&lower) {
        (last_day, lower.as_str(), "on the day of the last event")
    } else if chrono::NaiveDate::parse_from_str(&lower, "%Y-%m-%d").is_ok() {
        let start = time::parse_user(&lower, now, now).map_err(AskError::Time)?;
        let end = start + DAY - 1;
        let (at, mut when) = said(
            end,
            text,
            "the end of that day; the changes during it follow",
            last,
        );
        when.day = Some((start, end));
        return Ok((at, when));
    } else {
        let at = time::parse_user(text, now, now).map_err(AskError::Time)?;
        let when = match last.filter(|&l| at > l) {
            Some(l) => When {
                read_as: Some(format!(
                    "{text} is {} after the last event ({})",
                    time::format_duration(at - l),
                    time::format_short(l)
                )),
                day: None,
            },
            None => When::default(),
        };
        return Ok((at, when));
    };
    if rest.is_empty() || !rest.contains(':') {
        return Err(AskError::Time(format!(
            "`{text}`: say the time of day too, as in `yesterday 14:00` (UTC)"
        )));
    }
    let at = time::parse_user(rest, now, day).map_err(AskError::Time)?;
    let how = format!("{which}, {}", day_name(day));
    Ok(said(at, text, &how, last))
}

/// `HH:MM` or `HH:MM:SS`.
fn is_clock(text: &str) -> bool {
    ["%H:%M:%S", "%H:%M"]
        .iter()
        .any(|f| chrono::NaiveTime::parse_from_str(text, f).is_ok())
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
            known: asof_core::model::known_ids(header.agents.iter().map(|a| a.id.as_str()), name),
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
            known: asof_core::model::known_ids(header.topics.iter().map(|t| t.id.as_str()), name),
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
pub fn why(log: &asof_core::model::Dataset, agent: &str, claim: &str) -> Vec<Reason> {
    use asof_core::model::EventBody;
    let evidence = log.evidence_by_id();
    let wanted = claim.to_lowercase();
    let mut asserted: Vec<&asof_core::model::Assertion> = log
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

    fn last() -> Option<Micros> {
        time::parse("2026-03-16T10:10:00Z").ok()
    }

    fn q(text: &str) -> Result<Question, AskError> {
        parse(text, &header(), NOW, last()).map(|(q, _)| q)
    }

    fn read_as(text: &str) -> String {
        parse(text, &header(), NOW, last())
            .map(|(_, w)| w.read_as.unwrap_or_default())
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn each_form_reads_its_names_and_times() {
        let at = |t: &str| time::parse(t).unwrap();
        assert_eq!(
            q("What did Triage bot believe about the root cause at 2026-03-03 12:00?"),
            Ok(Question::Believed {
                agent: "triage".into(),
                topic: Some("root-cause".into()),
                at: at("2026-03-03T12:00:00Z")
            })
        );
        assert_eq!(
            q("what was the root_cause now"),
            Ok(Question::Answer {
                topic: "root-cause".into(),
                at: NOW
            })
        );
        // Yesterday is the day before the last event's, not the wall clock's.
        assert_eq!(
            q("what was the root cause yesterday 14:00?"),
            Ok(Question::Answer {
                topic: "root-cause".into(),
                at: at("2026-03-15T14:00:00Z")
            })
        );
        assert_eq!(
            q("why did triage believe \"db\"?"),
            Ok(Question::Why {
                agent: "triage".into(),
                claim: "db".into()
            })
        );
        assert_eq!(
            q("what misled the agents?"),
            Ok(Question::Misled {
                agent: None,
                topic: None
            })
        );
        assert_eq!(
            q("what misled triage about the root cause?"),
            Ok(Question::Misled {
                agent: Some("triage".into()),
                topic: Some("root-cause".into())
            })
        );
    }

    #[test]
    fn every_time_says_how_it_was_read() {
        let at = |t: &str| time::parse(t).unwrap();
        assert_eq!(
            q("what was the root cause at 12:00?"),
            Ok(Question::Answer {
                topic: "root-cause".into(),
                at: at("2026-03-16T12:00:00Z")
            })
        );
        assert_eq!(
            read_as("what was the root cause at 09:00?"),
            "09:00 → 2026-03-16T09:00:00Z (on the day of the last event, 2026-03-16)"
        );
        assert_eq!(
            read_as("what was the root cause at 12:00?"),
            "12:00 → 2026-03-16T12:00:00Z (on the day of the last event, 2026-03-16), 1h 50m after the last event (03-16 10:10)"
        );
        assert_eq!(
            read_as("what was the root cause yesterday 14:00?"),
            "yesterday 14:00 → 2026-03-15T14:00:00Z (yesterday: the day before the last event's, 2026-03-15)"
        );
        assert_eq!(
            read_as("what was the root cause today 09:00?"),
            "today 09:00 → 2026-03-16T09:00:00Z (today: the day of the last event, 2026-03-16)"
        );
        let (question, when) = parse(
            "what was the root cause on 2026-03-03?",
            &header(),
            NOW,
            last(),
        )
        .unwrap();
        assert_eq!(
            question,
            Question::Answer {
                topic: "root-cause".into(),
                at: at("2026-03-03T23:59:59.999999Z")
            }
        );
        assert_eq!(
            when.day,
            Some((
                at("2026-03-03T00:00:00Z"),
                at("2026-03-03T23:59:59.999999Z")
            ))
        );
        assert!(
            when.read_as
                .unwrap_or_default()
                .contains("the end of that day")
        );
        assert!(
            read_as("what was the root cause?").contains(" after the last event (03-16 10:10)")
        );
        assert_eq!(
            read_as("what was the root cause at 2026-03-04T00:00:00Z?"),
            ""
        );
    }

    #[test]
    fn unknown_names_times_and_questions_say_what_is_known() {
        let e = |text: &str| q(text).unwrap_err().to_string();
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
