//! The review record (docs/review.md): a reviewer's findings about an agent's
//! log, kept apart from it. A finding is made at its own wall-clock instant
//! (`made_at`) about an instant of the log (`about`); it never becomes an
//! event of the log, and no as-of answer reads it as something the agent
//! knew. A review file is JSON Lines, one finding per line, appended and
//! synced, never rewritten:
//!
//! ```text
//! {"id":"F1","target":{"kind":"evidence","id":"E15"},"verdict":"rejected",
//!  "note":"a traffic lull","reviewer":"ana","made_at":"2026-12-06T09:12:03Z",
//!  "about":"2026-03-03T12:10:00Z"}
//! ```

pub mod otlp;

use crate::dataset::{DatasetError, DatasetErrors, Location, MAX_JSONL_LINE};
use crate::model::{Dataset, EventBody, VerifyState};
use crate::time::{self, Micros};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The longest note or reviewer name a finding may carry.
pub const MAX_NOTE: usize = 64 * 1024;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TargetKind {
    /// An evidence item (`id`).
    Evidence,
    /// An assertion event (`id`).
    Assertion,
    /// The belief version an assertion put in place for (`agent`, `topic`):
    /// `id` is that assertion; `about` picks the version held then.
    Version,
    /// A topic, or one agent's beliefs about it (`topic`, `agent`?).
    Topic,
    /// The log at `about` as a whole.
    Instant,
}

impl TargetKind {
    /// Every kind, in the order docs/review.md lists them.
    pub const ALL: [TargetKind; 5] = [
        TargetKind::Evidence,
        TargetKind::Assertion,
        TargetKind::Version,
        TargetKind::Topic,
        TargetKind::Instant,
    ];

    /// The kind as a review file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Evidence => "evidence",
            TargetKind::Assertion => "assertion",
            TargetKind::Version => "version",
            TargetKind::Topic => "topic",
            TargetKind::Instant => "instant",
        }
    }

    /// The kind a review file writes as `text`, if it is one.
    pub fn parse(text: &str) -> Option<TargetKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// The verdicts a finding about this kind may give.
    pub fn verdicts(self) -> Vec<Verdict> {
        let mut out: Vec<Verdict> = match self {
            TargetKind::Evidence => VerifyState::ALL.into_iter().map(Verdict::State).collect(),
            TargetKind::Assertion | TargetKind::Version => BeliefVerdict::ALL
                .into_iter()
                .map(Verdict::Belief)
                .collect(),
            TargetKind::Topic | TargetKind::Instant => Vec::new(),
        };
        out.push(Verdict::Note);
        out
    }
}

/// What a finding names: an evidence item, an assertion, a version, a topic
/// or an instant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target {
    /// What kind of thing it names.
    pub kind: TargetKind,
    /// The evidence or assertion id (evidence, assertion, version).
    pub id: Option<String>,
    /// The topic (version, topic).
    pub topic: Option<String>,
    /// The agent (version; optionally topic).
    pub agent: Option<String>,
}

impl Target {
    /// The evidence item `id`.
    pub fn evidence(id: &str) -> Target {
        Target {
            kind: TargetKind::Evidence,
            id: Some(id.to_owned()),
            topic: None,
            agent: None,
        }
    }

    /// The assertion `id`.
    pub fn assertion(id: &str) -> Target {
        Target {
            kind: TargetKind::Assertion,
            id: Some(id.to_owned()),
            topic: None,
            agent: None,
        }
    }

    /// The version `assertion` put in place for `agent` on `topic`.
    pub fn version(assertion: &str, agent: &str, topic: &str) -> Target {
        Target {
            kind: TargetKind::Version,
            id: Some(assertion.to_owned()),
            topic: Some(topic.to_owned()),
            agent: Some(agent.to_owned()),
        }
    }

    /// The topic, or one agent's beliefs about it.
    pub fn topic(topic: &str, agent: Option<&str>) -> Target {
        Target {
            kind: TargetKind::Topic,
            id: None,
            topic: Some(topic.to_owned()),
            agent: agent.map(str::to_owned),
        }
    }

    /// The log as a whole, at the finding's `about`.
    pub fn instant() -> Target {
        Target {
            kind: TargetKind::Instant,
            id: None,
            topic: None,
            agent: None,
        }
    }

    /// Reads a target as a person types it: `E15` (evidence or assertion, by
    /// what the log holds), `version:B19`, `topic:root-cause[@agent]`,
    /// `instant`, or `evidence:E15` / `assertion:B19` to say which.
    pub fn parse_user(text: &str, subjects: &Subjects) -> Result<Target, String> {
        let text = text.trim();
        let (kind, rest) = match text.split_once(':') {
            Some((k, rest)) => match TargetKind::parse(k) {
                Some(kind) => (Some(kind), rest.trim()),
                None => (None, text),
            },
            None => (None, text),
        };
        let target = match kind {
            Some(TargetKind::Instant) if rest.is_empty() => Target::instant(),
            None if text == "instant" => Target::instant(),
            Some(TargetKind::Topic) => match rest.split_once('@') {
                Some((topic, agent)) => Target::topic(topic, Some(agent)),
                None => Target::topic(rest, None),
            },
            Some(TargetKind::Version) => match subjects.assertions.get(rest) {
                Some(a) => Target::version(rest, &a.agent, &a.topic),
                None => {
                    return Err(format!(
                        "`{rest}` is not an assertion of the log (a version is named by the assertion it descends from)"
                    ));
                }
            },
            Some(TargetKind::Evidence) => Target::evidence(rest),
            Some(TargetKind::Assertion) => Target::assertion(rest),
            Some(TargetKind::Instant) => {
                return Err(format!(
                    "`{text}`: an instant target takes no id (`instant`)"
                ));
            }
            None if subjects.evidence.contains_key(text) => Target::evidence(text),
            None if subjects.assertions.contains_key(text) => Target::assertion(text),
            None if subjects.topics.contains(text) => Target::topic(text, None),
            None => {
                return Err(format!(
                    "`{text}` is not an evidence item, assertion or topic of the log; name one, or `version:ASSERTION`, `topic:TOPIC@AGENT` or `instant`"
                ));
            }
        };
        subjects.check(&target)?;
        Ok(target)
    }

    /// The target as one short phrase: `E15`, `B19 (triage · root-cause)`,
    /// `topic root-cause`, `the log`.
    pub fn label(&self) -> String {
        let id = self.id.as_deref().unwrap_or("?");
        match self.kind {
            TargetKind::Evidence | TargetKind::Assertion => id.to_owned(),
            TargetKind::Version => format!(
                "{id} ({} · {})",
                self.agent.as_deref().unwrap_or("?"),
                self.topic.as_deref().unwrap_or("?")
            ),
            TargetKind::Topic => match &self.agent {
                Some(agent) => format!("topic {} ({agent})", self.topic.as_deref().unwrap_or("?")),
                None => format!("topic {}", self.topic.as_deref().unwrap_or("?")),
            },
            TargetKind::Instant => "the log".to_owned(),
        }
    }

    /// The target as a review file writes it (`{"kind": …, "id": …}`).
    pub fn to_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        map.insert("kind".into(), json!(self.kind.as_str()));
        for (key, value) in [
            ("id", &self.id),
            ("topic", &self.topic),
            ("agent", &self.agent),
        ] {
            if let Some(v) = value {
                map.insert(key.into(), json!(v));
            }
        }
        Value::Object(map)
    }
}

/// A verdict on an assertion or a belief version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BeliefVerdict {
    /// What the agent believed was so.
    Right,
    /// What the agent believed was not so.
    Wrong,
    /// The evidence cited did not support it.
    Unsupported,
    /// Evidence led the agent to it wrongly.
    Misleading,
}

impl BeliefVerdict {
    /// The four verdicts, in the order docs/review.md lists them.
    pub const ALL: [BeliefVerdict; 4] = [
        BeliefVerdict::Right,
        BeliefVerdict::Wrong,
        BeliefVerdict::Unsupported,
        BeliefVerdict::Misleading,
    ];

    /// The verdict as a review file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            BeliefVerdict::Right => "right",
            BeliefVerdict::Wrong => "wrong",
            BeliefVerdict::Unsupported => "unsupported",
            BeliefVerdict::Misleading => "misleading",
        }
    }
}

/// A finding's verdict: an evidence state (§9's six), a belief verdict, or
/// a note alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// One of the six verification states (evidence).
    State(VerifyState),
    /// A verdict on a belief (assertion, version).
    Belief(BeliefVerdict),
    /// A note, with no verdict.
    Note,
}

impl Verdict {
    /// The verdict as a review file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::State(s) => s.as_str(),
            Verdict::Belief(b) => b.as_str(),
            Verdict::Note => "note",
        }
    }

    /// The verdict a review file writes as `text`, if it is one.
    pub fn parse(text: &str) -> Option<Verdict> {
        if text == "note" {
            return Some(Verdict::Note);
        }
        VerifyState::parse(text).map(Verdict::State).or_else(|| {
            BeliefVerdict::ALL
                .into_iter()
                .find(|b| b.as_str() == text)
                .map(Verdict::Belief)
        })
    }

    /// Whether a finding about `kind` may give this verdict.
    pub fn fits(self, kind: TargetKind) -> bool {
        kind.verdicts().contains(&self)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding of a review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Its id (`F1`, `F2`, …), unique in its review.
    pub id: String,
    /// What it is about.
    pub target: Target,
    /// The reviewer's verdict.
    pub verdict: Verdict,
    /// The reviewer's words (a `note` verdict needs them).
    pub note: Option<String>,
    /// Who made it.
    pub reviewer: String,
    /// The wall clock when the finding was made.
    pub made_at: Micros,
    /// The instant of the log the reviewer was looking at.
    pub about: Micros,
}

impl Finding {
    /// The finding in §20's JSON shape (one line of a review file).
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "target": self.target.to_json(),
            "verdict": self.verdict.as_str(),
            "note": self.note,
            "reviewer": self.reviewer,
            "made_at": time::format(self.made_at),
            "about": time::format(self.about),
        })
    }

    /// The finding as a review file's line (no newline), its fields in the
    /// order §20 lists them (a person reads these files too).
    pub fn line(&self) -> String {
        #[derive(serde::Serialize)]
        struct Target<'a> {
            kind: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            id: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            topic: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            agent: Option<&'a str>,
        }
        #[derive(serde::Serialize)]
        struct Line<'a> {
            id: &'a str,
            target: Target<'a>,
            verdict: &'a str,
            note: Option<&'a str>,
            reviewer: &'a str,
            made_at: String,
            about: String,
        }
        let line = Line {
            id: &self.id,
            target: Target {
                kind: self.target.kind.as_str(),
                id: self.target.id.as_deref(),
                topic: self.target.topic.as_deref(),
                agent: self.target.agent.as_deref(),
            },
            verdict: self.verdict.as_str(),
            note: self.note.as_deref(),
            reviewer: &self.reviewer,
            made_at: time::format(self.made_at),
            about: time::format(self.about),
        };
        // A struct of strings always serializes.
        serde_json::to_string(&line).unwrap_or_else(|_| self.to_json().to_string())
    }

    /// Reads one finding from its JSON shape; the error is one sentence.
    pub fn from_json(value: &Value) -> Result<Finding, String> {
        let Some(obj) = value.as_object() else {
            return Err("a finding is a JSON object".into());
        };
        if obj.contains_key("verify") {
            return Err("this is a `verify` event of an older asof's review file; a review file now holds findings ({\"id\", \"target\", \"verdict\", \"note\", \"reviewer\", \"made_at\", \"about\"}), so mark it again or rewrite the line".into());
        }
        for key in obj.keys() {
            if !matches!(
                key.as_str(),
                "id" | "target" | "verdict" | "note" | "reviewer" | "made_at" | "about"
            ) {
                return Err(format!("unknown field `{key}` in a finding"));
            }
        }
        let text = |key: &str| -> Result<Option<String>, String> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("`{key}` is not a string")),
            }
        };
        let need = |key: &str| -> Result<String, String> {
            text(key)?.ok_or_else(|| format!("the finding has no `{key}`"))
        };
        let when = |key: &str| -> Result<Micros, String> {
            let t = need(key)?;
            time::parse(&t).map_err(|e| format!("`{key}`: {e}"))
        };
        let id = need("id")?;
        if id.trim().is_empty() || id.chars().any(char::is_whitespace) {
            return Err(format!("id `{id}` is empty or has spaces"));
        }
        let target = match obj.get("target") {
            Some(Value::Object(t)) => {
                let field = |key: &str| -> Result<Option<String>, String> {
                    match t.get(key) {
                        None | Some(Value::Null) => Ok(None),
                        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
                        Some(_) => Err(format!("`target.{key}` is not a non-empty string")),
                    }
                };
                for key in t.keys() {
                    if !matches!(key.as_str(), "kind" | "id" | "topic" | "agent") {
                        return Err(format!("unknown field `target.{key}`"));
                    }
                }
                let kind = field("kind")?.ok_or("the target has no `kind`")?;
                let kind = TargetKind::parse(&kind).ok_or_else(|| {
                    format!(
                        "target kind `{kind}` is none of evidence, assertion, version, topic, instant"
                    )
                })?;
                let target = Target {
                    kind,
                    id: field("id")?,
                    topic: field("topic")?,
                    agent: field("agent")?,
                };
                shape(&target)?;
                target
            }
            Some(_) => return Err("`target` is not an object".into()),
            None => return Err("the finding has no `target`".into()),
        };
        let verdict = need("verdict")?;
        let verdict = Verdict::parse(&verdict)
            .filter(|v| v.fits(target.kind))
            .ok_or_else(|| {
                format!(
                    "verdict `{verdict}` is not one for a finding about {} (one of: {})",
                    target.kind.as_str(),
                    names(target.kind)
                )
            })?;
        let note = text("note")?;
        let reviewer = need("reviewer")?;
        checked_text("reviewer", &reviewer)?;
        if reviewer.trim().is_empty() {
            return Err("`reviewer` is empty".into());
        }
        if let Some(note) = &note {
            checked_text("note", note)?;
        }
        if verdict == Verdict::Note && note.as_deref().is_none_or(|n| n.trim().is_empty()) {
            return Err("a `note` finding needs a note".into());
        }
        Ok(Finding {
            id,
            target,
            verdict,
            note,
            reviewer,
            made_at: when("made_at")?,
            about: when("about")?,
        })
    }
}

/// The verdicts a finding about `kind` may give, as a list to print.
pub fn names(kind: TargetKind) -> String {
    let names: Vec<&str> = kind.verdicts().into_iter().map(Verdict::as_str).collect();
    names.join(", ")
}

/// Which fields each kind of target must and must not name.
fn shape(t: &Target) -> Result<(), String> {
    let kind = t.kind.as_str();
    let (id, topic, agent) = (t.id.is_some(), t.topic.is_some(), t.agent.is_some());
    let ok = match t.kind {
        TargetKind::Evidence | TargetKind::Assertion => id && !topic && !agent,
        TargetKind::Version => id && topic && agent,
        TargetKind::Topic => !id && topic,
        TargetKind::Instant => !id && !topic && !agent,
    };
    if ok {
        return Ok(());
    }
    Err(match t.kind {
        TargetKind::Evidence | TargetKind::Assertion => {
            format!("a target of kind {kind} names its `id` alone")
        }
        TargetKind::Version => {
            "a version target names its assertion (`id`), `agent` and `topic`".into()
        }
        TargetKind::Topic => "a topic target names its `topic` (and an `agent`, optionally)".into(),
        TargetKind::Instant => "an instant target names nothing: `about` is the instant".into(),
    })
}

fn checked_text(field: &str, value: &str) -> Result<(), String> {
    if value.len() > MAX_NOTE {
        return Err(format!(
            "`{field}` is {} bytes long, over the {MAX_NOTE}-byte limit",
            value.len()
        ));
    }
    if value
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(format!("`{field}` holds a control character"));
    }
    Ok(())
}

/// An assertion as a finding may name it.
#[derive(Debug, Clone)]
pub struct AssertionSubject {
    /// The agent who made it.
    pub agent: String,
    /// The topic it answers.
    pub topic: String,
    /// When it was recorded.
    pub recorded_at: Micros,
}

/// What a log holds that findings may name: evidence and assertions with
/// their recorded times, topics and agents.
#[derive(Debug, Clone, Default)]
pub struct Subjects {
    /// Each evidence item's recorded time, by id.
    pub evidence: HashMap<String, Micros>,
    /// Each assertion, by id.
    pub assertions: HashMap<String, AssertionSubject>,
    /// The topics' ids.
    pub topics: HashSet<String>,
    /// The agents' ids.
    pub agents: HashSet<String>,
}

impl Subjects {
    /// What `dataset` holds that findings may name.
    pub fn of(dataset: &Dataset) -> Subjects {
        let mut s = Subjects {
            topics: dataset
                .header
                .topics
                .iter()
                .map(|t| t.id.to_string())
                .collect(),
            agents: dataset
                .header
                .agents
                .iter()
                .map(|a| a.id.to_string())
                .collect(),
            ..Subjects::default()
        };
        for e in &dataset.events {
            match &e.body {
                EventBody::Evidence(ev) => {
                    s.evidence.insert(ev.id.to_string(), ev.recorded_at);
                }
                EventBody::Believe(a) => {
                    s.assertions.insert(
                        a.id.to_string(),
                        AssertionSubject {
                            agent: a.agent.to_string(),
                            topic: a.topic.to_string(),
                            recorded_at: a.recorded_at,
                        },
                    );
                }
                _ => {}
            }
        }
        s
    }

    /// Whether the log holds what `target` names.
    pub fn check(&self, target: &Target) -> Result<(), String> {
        let id = target.id.as_deref().unwrap_or_default();
        match target.kind {
            TargetKind::Evidence if !self.evidence.contains_key(id) => {
                return Err(format!("evidence `{id}` is not in the log"));
            }
            TargetKind::Assertion if !self.assertions.contains_key(id) => {
                return Err(format!("assertion `{id}` is not in the log"));
            }
            TargetKind::Version => match self.assertions.get(id) {
                None => return Err(format!("assertion `{id}` is not in the log")),
                Some(a)
                    if Some(a.agent.as_str()) != target.agent.as_deref()
                        || Some(a.topic.as_str()) != target.topic.as_deref() =>
                {
                    return Err(format!(
                        "assertion `{id}` is {}'s about `{}`, not {}'s about `{}`",
                        a.agent,
                        a.topic,
                        target.agent.as_deref().unwrap_or("?"),
                        target.topic.as_deref().unwrap_or("?")
                    ));
                }
                Some(_) => {}
            },
            _ => {}
        }
        if let Some(topic) = &target.topic
            && !self.topics.contains(topic)
        {
            return Err(format!("topic `{topic}` is not in the log"));
        }
        if let Some(agent) = &target.agent
            && !self.agents.contains(agent)
        {
            return Err(format!("agent `{agent}` is not in the log"));
        }
        Ok(())
    }

    /// When what `target` names was recorded (none for a topic or instant).
    pub fn recorded(&self, target: &Target) -> Option<Micros> {
        let id = target.id.as_deref()?;
        match target.kind {
            TargetKind::Evidence => self.evidence.get(id).copied(),
            TargetKind::Assertion | TargetKind::Version => {
                self.assertions.get(id).map(|a| a.recorded_at)
            }
            _ => None,
        }
    }

    /// Why `f` cannot be a finding about this log, if it cannot.
    pub fn refuse(&self, f: &Finding) -> Option<String> {
        if let Err(e) = self.check(&f.target) {
            return Some(e);
        }
        match self.recorded(&f.target) {
            Some(at) if at > f.about => Some(format!(
                "is about {}, before {} was recorded ({})",
                time::format(f.about),
                f.target.id.as_deref().unwrap_or("?"),
                time::format(at)
            )),
            _ => None,
        }
    }
}

/// Where a review's findings came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A review file (JSON Lines, or OTLP/JSON logs).
    File(PathBuf),
    /// A store's review table, loaded from the file it names.
    Table {
        /// The store, as the user named it.
        store: String,
        /// The review file it was loaded from.
        loaded_from: String,
    },
}

/// One source of a review: its place, its bytes' SHA-256, its findings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// Where they came from.
    pub place: Place,
    /// The SHA-256 of its bytes.
    pub sha256: String,
    /// How many findings it held.
    pub findings: usize,
    /// Whether the file was only named and does not exist yet (new findings
    /// go there).
    pub missing: bool,
}

impl Source {
    /// The place as a sentence names it.
    pub fn name(&self) -> String {
        match &self.place {
            Place::File(p) => p.display().to_string(),
            Place::Table { store, loaded_from } => {
                format!("{store}'s review table (loaded from {loaded_from})")
            }
        }
    }
}

/// A review: its findings in the order they were made (file order), and
/// where they came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Review {
    /// Where the findings came from.
    pub sources: Vec<Source>,
    /// The findings, in the order they were made.
    pub findings: Vec<Finding>,
}

impl Review {
    /// Adds `findings` from `source`; one already there (the same id and the
    /// same content) is kept once, and one that reuses an id for something
    /// else is refused.
    pub fn add(&mut self, mut source: Source, findings: Vec<Finding>) -> Result<(), String> {
        let mut added = 0;
        for f in findings {
            match self.findings.iter().find(|g| g.id == f.id) {
                Some(g) if *g == f => {}
                Some(_) => {
                    return Err(format!(
                        "{}: finding {} differs from the finding {} already read from {}",
                        source.name(),
                        f.id,
                        f.id,
                        self.sources
                            .iter()
                            .map(Source::name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                None => {
                    self.findings.push(f);
                    added += 1;
                }
            }
        }
        source.findings = added;
        self.sources.push(source);
        Ok(())
    }

    /// The reviewers, in the order they first appear.
    pub fn reviewers(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for f in &self.findings {
            if !out.contains(&f.reviewer.as_str()) {
                out.push(&f.reviewer);
            }
        }
        out
    }

    /// The latest `made_at`.
    pub fn last_made(&self) -> Option<Micros> {
        self.findings.iter().map(|f| f.made_at).max()
    }

    /// The one line every screen and output that uses the review shows:
    /// `review: FILE — 3 findings by ana, last 2026-12-06 09:12`.
    pub fn announce(&self) -> Option<String> {
        self.announce_as(Source::name)
    }

    /// The announcement for a screen's header, where the end may be cut:
    /// counts, reviewers and the last finding first, then each file by its
    /// name alone (`review: 3 findings by ana, last 2026-12-06 09:12 ·
    /// payment-outage.review.jsonl`).
    pub fn announce_short(&self) -> Option<String> {
        let names: Vec<String> = self
            .sources
            .iter()
            .filter(|s| !s.missing)
            .map(|s| match &s.place {
                Place::File(p) => p
                    .file_name()
                    .map_or_else(|| s.name(), |n| n.to_string_lossy().into_owned()),
                Place::Table { .. } => "the store's review table".to_owned(),
            })
            .collect();
        if names.is_empty() {
            return None;
        }
        Some(format!("review: {} · {}", self.counts(), names.join(" + ")))
    }

    fn announce_as(&self, name: impl Fn(&Source) -> String) -> Option<String> {
        // A file only named for new findings, not written yet, is not read.
        let names: Vec<String> = self
            .sources
            .iter()
            .filter(|s| !s.missing)
            .map(name)
            .collect();
        if names.is_empty() {
            return None;
        }
        Some(format!("review: {} — {}", names.join(" + "), self.counts()))
    }

    /// `3 findings by ana, bob, last 2026-12-06 09:12`: how many, whose, the
    /// latest made (what both announcements say of the findings).
    fn counts(&self) -> String {
        let n = self.findings.len();
        let mut line = format!("{n} finding{}", if n == 1 { "" } else { "s" });
        let reviewers = self.reviewers();
        if !reviewers.is_empty() {
            line.push_str(&format!(" by {}", reviewers.join(", ")));
        }
        if let Some(last) = self.last_made() {
            line.push_str(&format!(
                ", last {}",
                time::format_with(last, "%Y-%m-%d %H:%M")
            ));
        }
        line
    }

    /// The id the next finding gets: `F` and one more than any `F<n>` so far.
    pub fn next_id(&self) -> String {
        let n = self
            .findings
            .iter()
            .filter_map(|f| f.id.strip_prefix('F')?.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        format!("F{}", n + 1)
    }

    /// Findings about evidence item `id`, in order.
    pub fn about_evidence<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Finding> + 'a {
        self.findings.iter().filter(move |f| {
            f.target.kind == TargetKind::Evidence && f.target.id.as_deref() == Some(id)
        })
    }

    /// Findings about assertion `id` or a version it put in place, in order.
    pub fn about_assertion<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Finding> + 'a {
        self.findings.iter().filter(move |f| {
            matches!(f.target.kind, TargetKind::Assertion | TargetKind::Version)
                && f.target.id.as_deref() == Some(id)
        })
    }

    /// The review's verdict on evidence item `id`: its latest finding about
    /// the item with a verdict other than `note` (latest made; ties: file order).
    pub fn evidence_verdict<'a>(&'a self, id: &'a str) -> Option<&'a Finding> {
        latest(
            self.about_evidence(id)
                .filter(|f| f.verdict != Verdict::Note),
        )
    }

    /// The review's verdict on the beliefs of assertion `id`.
    pub fn assertion_verdict<'a>(&'a self, id: &'a str) -> Option<&'a Finding> {
        latest(
            self.about_assertion(id)
                .filter(|f| f.verdict != Verdict::Note),
        )
    }

    /// The evidence items the review rejects: those whose verdict
    /// ([`Review::evidence_verdict`]) is `rejected`, in finding order.
    pub fn rejected_evidence(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for f in &self.findings {
            let Some(id) = f.target.id.as_deref() else {
                continue;
            };
            if f.target.kind == TargetKind::Evidence
                && !out.iter().any(|o| o == id)
                && self
                    .evidence_verdict(id)
                    .is_some_and(|v| v.verdict == Verdict::State(VerifyState::Rejected))
            {
                out.push(id.to_owned());
            }
        }
        out
    }

    /// Where reviewers disagree: each target on which two reviewers' latest
    /// verdicts differ, with every reviewer's latest verdict on it.
    pub fn disagreements(&self) -> Vec<Disagreement<'_>> {
        let mut by_target: BTreeMap<&Target, Vec<&Finding>> = BTreeMap::new();
        for f in self.findings.iter().filter(|f| f.verdict != Verdict::Note) {
            by_target.entry(&f.target).or_default().push(f);
        }
        let mut out = Vec::new();
        for (target, findings) in by_target {
            let mut latest_by: Vec<&Finding> = Vec::new();
            for reviewer in self.reviewers() {
                if let Some(f) = latest(findings.iter().copied().filter(|f| f.reviewer == reviewer))
                {
                    latest_by.push(f);
                }
            }
            let first = latest_by.first().map(|f| f.verdict);
            if latest_by.iter().any(|f| Some(f.verdict) != first) {
                out.push(Disagreement {
                    target,
                    verdicts: latest_by,
                });
            }
        }
        out
    }
}

/// The latest made of `findings` (ties: the later in order).
fn latest<'a>(findings: impl Iterator<Item = &'a Finding>) -> Option<&'a Finding> {
    findings.fold(None, |best: Option<&Finding>, f| match best {
        Some(b) if b.made_at > f.made_at => Some(b),
        _ => Some(f),
    })
}

/// Reviewers' latest verdicts that differ on one target.
#[derive(Debug)]
pub struct Disagreement<'a> {
    /// What the reviewers disagree about.
    pub target: &'a Target,
    /// Each reviewer's latest verdict on it.
    pub verdicts: Vec<&'a Finding>,
}

impl Disagreement<'_> {
    /// Each reviewer's verdict: `ana rejected (F1); bob direct-read (F3)`.
    pub fn said(&self) -> String {
        let each: Vec<String> = self
            .verdicts
            .iter()
            .map(|f| format!("{} {} ({})", f.reviewer, f.verdict, f.id))
            .collect();
        each.join("; ")
    }
}

/// Reads a review file's JSON Lines: every finding with its line, or every
/// broken line with its number (one sentence each).
pub fn parse_lines(file: &str, text: &str) -> Result<Vec<(usize, Finding)>, DatasetErrors> {
    let error = |line: usize, event: Option<&str>, message: String| DatasetError {
        file: file.to_owned(),
        location: Some(Location::line(line)),
        event: event.map(str::to_owned),
        message,
    };
    let mut errors = Vec::new();
    let mut out: Vec<(usize, Finding)> = Vec::new();
    let mut ids: HashSet<String> = HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_JSONL_LINE {
            errors.push(error(
                line_no,
                None,
                format!("the line is over the {MAX_JSONL_LINE}-byte limit"),
            ));
            continue;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                errors.push(error(
                    line_no,
                    None,
                    crate::dataset::strip_location(&e.to_string()),
                ));
                continue;
            }
        };
        match Finding::from_json(&value) {
            Ok(f) => {
                if !ids.insert(f.id.clone()) {
                    errors.push(error(
                        line_no,
                        Some(&f.id),
                        format!("id `{}` is used twice", f.id),
                    ));
                }
                out.push((line_no, f));
            }
            Err(message) => errors.push(error(line_no, None, message)),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(DatasetErrors(errors))
    }
}

/// Reads a review file: JSON Lines of findings, or OTLP/JSON logs of
/// `gen_ai.evaluation.result` records ([`otlp`]). Each finding comes with its
/// line (0 for an OTLP record, named by its position in errors instead).
pub fn read_file(path: &Path) -> Result<Vec<(usize, Finding)>, DatasetErrors> {
    let file = path.display().to_string();
    let whole = |message: String| {
        DatasetErrors(vec![DatasetError {
            file: file.clone(),
            location: None,
            event: None,
            message,
        }])
    };
    let bytes =
        std::fs::read(path).map_err(|e| whole(format!("cannot read the review file: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        whole(format!(
            "the review file is not valid UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    if otlp::looks_like(&text) {
        let findings = otlp::from_logs(&text).map_err(whole)?;
        let mut ids = HashSet::new();
        for f in &findings {
            if !ids.insert(f.id.as_str()) {
                return Err(whole(format!("finding id `{}` is used twice", f.id)));
            }
        }
        return Ok(findings.into_iter().map(|f| (0, f)).collect());
    }
    parse_lines(&file, &text)
}

/// Checks findings (each with its line, or 0 when it has none) against the
/// log they judge.
pub fn check(
    file: &str,
    findings: &[(usize, Finding)],
    subjects: &Subjects,
) -> Result<(), DatasetErrors> {
    let errors: Vec<DatasetError> = findings
        .iter()
        .filter_map(|(line, f)| {
            subjects.refuse(f).map(|message| DatasetError {
                file: file.to_owned(),
                location: (*line > 0).then(|| Location::line(*line)),
                event: Some(f.id.clone()),
                message,
            })
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(DatasetErrors(errors))
    }
}

/// Appends `finding` to the review file at `path` (created if missing) and
/// syncs it to disk: a review file is never rewritten.
pub fn append(path: &Path, finding: &Finding) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    // A file whose last line lacks its newline (cut by a crash) gets one
    // first, so the new finding is a line of its own.
    let len = file.metadata()?.len();
    let mut line = String::new();
    if len > 0 && !ends_with_newline(path)? {
        line.push('\n');
    }
    line.push_str(&finding.line());
    line.push('\n');
    file.write_all(line.as_bytes())?;
    file.sync_all()
}

fn ends_with_newline(path: &Path) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    f.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// Who is reviewing: `ASOF_REVIEWER`, else the login name, else `reviewer`.
pub fn reviewer_from_env() -> String {
    ["ASOF_REVIEWER", "USER", "USERNAME", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "reviewer".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(id: &str, target: Target, verdict: &str, reviewer: &str, made: &str) -> Finding {
        Finding {
            id: id.into(),
            target,
            verdict: Verdict::parse(verdict).expect("a verdict"),
            note: Some("why".into()),
            reviewer: reviewer.into(),
            made_at: time::parse(made).expect("a time"),
            about: time::parse("2026-03-03T12:10:00Z").expect("a time"),
        }
    }

    #[test]
    fn a_finding_round_trips_through_its_line() {
        let f = finding(
            "F1",
            Target::version("B19", "triage", "root-cause"),
            "misleading",
            "ana",
            "2026-12-06T09:12:03Z",
        );
        let back = parse_lines("r.jsonl", &f.line()).expect("parses");
        assert_eq!(back, vec![(1, f)]);
    }

    #[test]
    fn verdicts_fit_their_target() {
        assert!(Verdict::parse("rejected").is_some_and(|v| v.fits(TargetKind::Evidence)));
        assert!(!Verdict::parse("rejected").is_some_and(|v| v.fits(TargetKind::Version)));
        assert!(Verdict::parse("wrong").is_some_and(|v| v.fits(TargetKind::Assertion)));
        assert!(!Verdict::parse("wrong").is_some_and(|v| v.fits(TargetKind::Evidence)));
        assert!(Verdict::Note.fits(TargetKind::Instant));
        assert!(!Verdict::parse("right").is_some_and(|v| v.fits(TargetKind::Topic)));
    }

    #[test]
    fn bad_lines_are_named_with_their_line() {
        let text = concat!(
            r#"{"verify":{"evidence":"E1","state":"rejected"}}"#,
            "\n",
            r#"{"id":"F2","target":{"kind":"evidence","id":"E1"},"verdict":"wrong","reviewer":"a","made_at":"2026-12-06T09:00:00Z","about":"2026-03-03T00:00:00Z"}"#,
            "\n",
            r#"{"id":"F3","target":{"kind":"topic"},"verdict":"note","note":"x","reviewer":"a","made_at":"2026-12-06T09:00:00Z","about":"2026-03-03T00:00:00Z"}"#,
        );
        let errors = parse_lines("r.jsonl", text).expect_err("refused").0;
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].starts_with("r.jsonl:1: ") && lines[0].contains("older asof"));
        assert!(lines[1].starts_with("r.jsonl:2: ") && lines[1].contains("verdict `wrong`"));
        assert!(lines[2].starts_with("r.jsonl:3: ") && lines[2].contains("topic target"));
    }

    #[test]
    fn the_latest_verdict_counts_and_disagreements_are_found() {
        let e15 = Target::evidence("E15");
        let review = Review {
            sources: Vec::new(),
            findings: vec![
                finding("F1", e15.clone(), "rejected", "ana", "2026-12-06T09:00:00Z"),
                finding(
                    "F2",
                    e15.clone(),
                    "direct-read",
                    "bob",
                    "2026-12-06T09:05:00Z",
                ),
                finding(
                    "F3",
                    Target::evidence("E7"),
                    "rejected",
                    "ana",
                    "2026-12-06T09:06:00Z",
                ),
                finding(
                    "F4",
                    Target::evidence("E7"),
                    "candidate",
                    "ana",
                    "2026-12-06T09:07:00Z",
                ),
                finding(
                    "F5",
                    Target::evidence("E9"),
                    "rejected",
                    "bob",
                    "2026-12-06T09:08:00Z",
                ),
                finding(
                    "F6",
                    Target::evidence("E9"),
                    "rejected",
                    "ana",
                    "2026-12-06T09:09:00Z",
                ),
            ],
        };
        // E15's latest verdict is bob's; E7 was rejected, then not; E9 both.
        assert_eq!(review.rejected_evidence(), vec!["E9".to_owned()]);
        let d = review.disagreements();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].target, &e15);
        let who: Vec<(&str, &str)> = d[0]
            .verdicts
            .iter()
            .map(|f| (f.reviewer.as_str(), f.verdict.as_str()))
            .collect();
        assert_eq!(who, vec![("ana", "rejected"), ("bob", "direct-read")]);
        assert_eq!(review.next_id(), "F7");
    }

    #[test]
    fn the_same_finding_read_twice_is_kept_once_and_a_reused_id_is_refused() {
        let f = finding(
            "F1",
            Target::evidence("E1"),
            "rejected",
            "ana",
            "2026-12-06T09:00:00Z",
        );
        let source = |name: &str| Source {
            place: Place::File(name.into()),
            sha256: String::new(),
            findings: 0,
            missing: false,
        };
        let mut review = Review::default();
        review.add(source("a"), vec![f.clone()]).expect("added");
        review
            .add(source("b"), vec![f.clone()])
            .expect("the same finding");
        assert_eq!(review.findings.len(), 1);
        let other = Finding {
            verdict: Verdict::State(VerifyState::Stale),
            ..f
        };
        assert!(review.add(source("c"), vec![other]).is_err());
    }
}
