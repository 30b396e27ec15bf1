//! `asof ask [SOURCE] "QUESTION"` (design.md §8): a plain question read into
//! the query that answers it ([`question`]), which is run as its own
//! command runs; the answer says which query it was.

use super::forks::{self as whatif, InfluenceArgs};
use super::queries::{self, AnswerArgs, BelievedArgs, ChangesArgs, HistoryArgs};
use super::when::TimeArg;
use super::{CliError, FormatArg, OutputFormat, SourceArg, source};
use crate::export::table::Table;
use crate::model::EventBody;
mod question;

use clap::Args;
use question::{self as ask, Question};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct AskArgs {
    /// `[SOURCE] QUESTION`: a store or dataset (omitted: the bundled demo),
    /// then the question in quotes, e.g. "what was the root cause at 2026-03-03 12:00?".
    #[arg(value_name = "[SOURCE] QUESTION", num_args = 1..=2, required = true)]
    pub words: Vec<String>,
    #[command(flatten)]
    pub format: FormatArg,
}

impl AskArgs {
    /// SOURCE, when the words name one before the question.
    pub(super) fn source(&self) -> Option<&str> {
        match self.words.as_slice() {
            [source, _] => Some(source),
            _ => None,
        }
    }
}

pub fn run(args: AskArgs, out: &mut impl Write) -> Result<(), CliError> {
    let source = args.source().map(PathBuf::from);
    let question = match args.words.as_slice() {
        [question] | [_, question] => question.clone(),
        _ => return Err(CliError::Input("ask takes [SOURCE] QUESTION".to_owned())),
    };
    let now = crate::time::now();
    let store = source::open(source.as_deref())?;
    let last = crate::query::recorded_span(&store)?.map(|(_, last)| last);
    let (asked, when) = ask::parse(&question, store.header(), now, last)
        .map_err(|e| CliError::Input(format!("{}: {e}", store.label())))?;
    let format = args.format.format;
    // The query named runs on the store opened here (`source` is not read again).
    let sourced = || SourceArg::default();
    let as_asked = FormatArg { format };
    let mut answer = Vec::new();
    match &asked {
        Question::Believed { agent, topic, at } => queries::believed_on(
            &store,
            BelievedArgs {
                source: sourced(),
                at: TimeArg::instant(*at),
                about: None,
                filter: queries::FilterArgs {
                    agent: Some(agent.clone()),
                    topic: topic.clone(),
                },
                review: Default::default(),
                redact: Default::default(),
                format: as_asked,
            },
            &mut answer,
        )?,
        Question::Answer { topic, at } => {
            let args = AnswerArgs {
                source: sourced(),
                topic: topic.clone(),
                at: TimeArg::instant(*at),
                about: None,
                agent: None,
                redact: Default::default(),
                format: as_asked,
            };
            // The evidence each agent's answer rests on, after it.
            let named = queries::answer_on(&store, args, &mut answer)?;
            answer = with_evidence(&store, answer, &named, format)?;
        }
        Question::Changes { agent, topic } => queries::history_on(
            &store,
            HistoryArgs {
                source: sourced(),
                topic: Some(topic.clone()),
                agent: Some(agent.clone()),
                review: Default::default(),
                redact: Default::default(),
                format: as_asked,
            },
            &mut answer,
        )?,
        Question::Why { agent, claim } => why(&store, agent, claim, format, &mut answer)?,
        Question::Misled { agent, topic } => whatif::influence_on(
            &store,
            InfluenceArgs {
                source: sourced(),
                top: None,
                agent: agent.clone(),
                topic: topic.clone(),
                format: as_asked,
            },
            &mut answer,
        )?,
    }
    // A date alone: the changes during that day, after the answer.
    let mut during = Vec::new();
    let day_changes = match (&asked, when.day) {
        (Question::Believed { agent, topic, .. }, Some(day)) => {
            Some((Some(agent.clone()), topic.clone(), day))
        }
        (Question::Answer { topic, .. }, Some(day)) => Some((None, Some(topic.clone()), day)),
        _ => None,
    };
    if let Some((agent, topic, (start, end))) = &day_changes {
        queries::changes_on(
            &store,
            ChangesArgs {
                source: sourced(),
                after: TimeArg::instant(start - 1),
                until: TimeArg::instant(*end),
                filter: queries::FilterArgs {
                    agent: agent.clone(),
                    topic: topic.clone(),
                },
                redact: Default::default(),
                format: FormatArg { format },
            },
            &mut during,
        )?;
    }
    if format == OutputFormat::Json {
        let json = |bytes: &[u8]| -> Result<serde_json::Value, CliError> {
            serde_json::from_slice(bytes).map_err(|e| CliError::Runtime(e.to_string()))
        };
        let mut v = serde_json::json!({
            "question": question,
            "parsed": asked,
            "read_as": when.read_as,
            "query": asked.command(),
            "result": json(&answer)?,
        });
        if !during.is_empty() {
            v["changes_that_day"] = json(&during)?;
        }
        writeln!(out, "{}", pretty(&v)?)?;
        return Ok(());
    }
    writeln!(out, "→ {}", asked.command())?;
    if let Some(read_as) = &when.read_as {
        writeln!(out, "  time read: {read_as}")?;
    }
    out.write_all(&answer)?;
    if !during.is_empty() {
        writeln!(out, "\nChanges during that day:")?;
        out.write_all(&during)?;
    }
    Ok(())
}

fn pretty(v: &serde_json::Value) -> Result<String, CliError> {
    serde_json::to_string_pretty(v).map_err(|e| CliError::Runtime(e.to_string()))
}

/// `answer` followed by the evidence each of the `named` assertions cites
/// (in JSON, as `evidence` beside the answer's own fields).
fn with_evidence(
    store: &crate::store::Store,
    answer: Vec<u8>,
    named: &[queries::Answering],
    format: OutputFormat,
) -> Result<Vec<u8>, CliError> {
    let log = store.log()?;
    let evidence = log.evidence_by_id();
    let assertions: std::collections::HashMap<&str, &crate::model::Assertion> = log
        .events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Believe(a) => Some((a.id.as_str(), a)),
            _ => None,
        })
        .collect();
    // Each named assertion, then those that restated it (same agent, topic,
    // claim and confidence, recorded at an instant that supported it anew),
    // in recorded order.
    let mut listed: Vec<(&crate::model::Assertion, Option<&str>)> = Vec::new();
    for n in named {
        let Some(&a) = assertions.get(n.assertion.as_str()) else {
            continue;
        };
        listed.push((a, None));
        let mut restating: Vec<&crate::model::Assertion> = assertions
            .values()
            .copied()
            .filter(|b| {
                b.id != a.id
                    && n.restated_at.contains(&b.recorded_at)
                    && (&b.agent, &b.topic, &b.claim) == (&a.agent, &a.topic, &a.claim)
                    && crate::model::permille(b.confidence) == crate::model::permille(a.confidence)
            })
            .collect();
        restating.sort_by_key(|b| (b.recorded_at, b.id.clone()));
        listed.extend(restating.into_iter().map(|b| (b, Some(a.id.as_str()))));
    }
    let cited: Vec<(&str, Option<&str>, Vec<&crate::model::Evidence>)> = listed
        .iter()
        .map(|(a, restates)| {
            (
                a.id.as_str(),
                *restates,
                a.supported_by
                    .iter()
                    .filter_map(|ev| evidence.get(ev.as_str()).copied())
                    .collect(),
            )
        })
        .collect();
    let mut with = Vec::new();
    if format == OutputFormat::Json {
        let mut v: serde_json::Value =
            serde_json::from_slice(&answer).map_err(|e| CliError::Runtime(e.to_string()))?;
        v["evidence"] = cited
            .iter()
            .map(|(assertion, restates, cites)| {
                let cites: Vec<serde_json::Value> = cites
                    .iter()
                    .map(|ev| serde_json::json!({"id": ev.id, "summary": ev.summary}))
                    .collect();
                serde_json::json!({"assertion": assertion, "restates": restates, "cites": cites})
            })
            .collect();
        writeln!(with, "{}", pretty(&v)?)?;
        return Ok(with);
    }
    with.extend_from_slice(&answer);
    let mut t = Table::new(vec!["ASSERTION", "EVIDENCE", "SUMMARY"]);
    for (assertion, restates, cites) in &cited {
        for ev in cites {
            t.row(vec![
                match restates {
                    Some(origin) => format!("{assertion} (restates {origin})"),
                    None => assertion.to_string(),
                },
                ev.id.clone(),
                ev.summary.clone(),
            ]);
        }
    }
    if !t.is_empty() {
        let table = if format == OutputFormat::Md {
            t.markdown()
        } else {
            t.text()
        };
        write!(with, "\non the evidence:\n{table}")?;
    }
    Ok(with)
}

/// "why did AGENT believe CLAIM?": the assertions, their rationale and evidence.
fn why(
    store: &crate::store::Store,
    agent: &str,
    claim: &str,
    format: OutputFormat,
    out: &mut Vec<u8>,
) -> Result<(), CliError> {
    let reasons = ask::why(&store.log()?, agent, claim);
    if reasons.is_empty() {
        return Err(CliError::Input(format!(
            "{}: {agent} never asserted a claim containing `{claim}`",
            store.label()
        )));
    }
    if format == OutputFormat::Json {
        writeln!(
            out,
            "{}",
            pretty(&serde_json::json!({"assertions": reasons}))?
        )?;
        return Ok(());
    }
    for r in &reasons {
        writeln!(
            out,
            "{} ({}, recorded {}): \"{}\" at {:.2}, valid from {}{}",
            r.assertion,
            r.topic,
            r.recorded_at,
            r.claim,
            r.confidence,
            r.valid_from,
            r.valid_to
                .as_ref()
                .map(|t| format!(" to {t}"))
                .unwrap_or_default()
        )?;
        writeln!(
            out,
            "  because: {}",
            r.rationale.as_deref().unwrap_or("(no rationale recorded)")
        )?;
        for ev in &r.evidence {
            writeln!(
                out,
                "  on {} ({}, {}): {}",
                ev.id, ev.kind, ev.recorded_at, ev.summary
            )?;
        }
    }
    Ok(())
}
