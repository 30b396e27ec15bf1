//! `asof import otlp TRACE`: an agent's OpenTelemetry trace read as evidence and
//! beliefs (design.md §7).
//!
//! ```text
//! OTLP/JSON lines ─▶ spans ─▶ roles (dialect.rs): model calls, tool runs, agents
//!                                │
//!   evidence: every tool result and user/system message, recorded when a model
//!             call first shows it to the agent (or at the tool's end), T1, T2, …
//!   beliefs:  belief-tool calls in model output, asof.belief/asof.retract span
//!             events, rules over the output's prose (rules.rs); citations
//!             default to what was in front of the agent
//!                                │
//!                                ▼
//!                 raw dataset events ─▶ the dataset rules and replay as for any file
//! ```
//!
//! Every default used, every span or message that could not be read and every
//! citation dropped is counted in the import summary.

pub mod dialect;
mod read;
pub mod rules;
pub mod wire;

use read::kind_of;
pub use read::{Named, Source};

use super::{Draft, ImportReport, Skipped, instant};
use crate::dataset::raw::{RawBelieve, RawEvent, RawEvidence, RawHeader, RawRetract};
use crate::dataset::{DatasetErrors, Location};
use crate::model::Cardinality;
use crate::time::{self, Micros};
use dialect::{MemoryOp, Msg, Part, Role};
use rules::{Rule, Within};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Inputs read whole above this size are refused: a single request over many
/// lines, or text handed over in memory. JSON Lines files stream, whatever
/// their size.
pub const MAX_BYTES: u64 = 1 << 30;

/// How long an evidence summary is.
const SUMMARY_CHARS: usize = 200;

/// Where beliefs that name no `valid_from` start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidFrom {
    /// The start of the trace the belief is in.
    TraceStart,
    At(Micros),
}

#[derive(Debug, Clone)]
pub struct Options {
    /// Every span's agent, overriding what the trace says.
    pub agent: Option<String>,
    pub belief_tool: String,
    pub retract_tool: String,
    pub valid_from: ValidFrom,
    /// Topics that hold a set of claims at once.
    pub many: Vec<String>,
    pub rules: Vec<Rule>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            agent: None,
            belief_tool: "record_belief".into(),
            retract_tool: "retract_belief".into(),
            valid_from: ValidFrom::TraceStart,
            many: Vec::new(),
            rules: Vec::new(),
        }
    }
}

/// Whether `text` looks like OTLP/JSON: its first JSON object has
/// `resourceSpans` or `resourceLogs` (or their proto names) at the top level.
pub fn looks_like(text: &str) -> bool {
    let head: String = text.trim_start().chars().take(4096).collect();
    head.starts_with('{')
        && [
            "\"resourceSpans\"",
            "\"resource_spans\"",
            "\"resourceLogs\"",
            "\"resource_logs\"",
        ]
        .iter()
        .any(|k| head.contains(k))
}

/// Where a belief or retraction came from, as the summary counts it.
#[derive(Clone, Copy)]
enum SaidBy {
    Tool,
    Event,
}

impl SaidBy {
    fn name(self, retract: bool) -> &'static str {
        match (self, retract) {
            (SaidBy::Tool, false) => "belief tool calls",
            (SaidBy::Tool, true) => "retract tool calls",
            (SaidBy::Event, false) => "asof.belief span events",
            (SaidBy::Event, true) => "asof.retract span events",
        }
    }
}

/// A span (by id) left out, or part of it, and why.
fn skip(report: &mut ImportReport, span: &str, reason: String) {
    report.skipped.push(Skipped {
        location: format!("span {span}"),
        reason,
    });
}

/// One span, its ids and times read.
struct SpanRec {
    trace: String,
    id: String,
    parent: Option<String>,
    name: String,
    start: Micros,
    end: Micros,
    service: Option<String>,
    role: Role,
    events: Vec<wire::SpanEvent>,
    /// The status message of a span that ended in error.
    error: Option<String>,
    /// An MCP tool call's session (`mcp.session.id`), kept in its locator.
    mcp_session: Option<String>,
}

impl SpanRec {
    fn locator(&self) -> String {
        match &self.mcp_session {
            Some(session) => format!(
                "trace {} span {} mcp session {session}",
                self.trace, self.id
            ),
            None => format!("trace {} span {}", self.trace, self.id),
        }
    }
}

/// One evidence item being assembled.
struct Ev {
    source: String,
    kind: &'static str,
    content: String,
    observed: Micros,
    recorded: Micros,
    locator: String,
    call_id: Option<String>,
    /// Seen in a model call's input yet (its `recorded` is then final).
    seen: bool,
    order: usize,
}

/// Something the agent said it believes or no longer believes.
struct Said {
    retract: bool,
    agent: String,
    topic: String,
    claim: Option<String>,
    confidence: Option<f64>,
    valid_from: Option<Micros>,
    valid_to: Option<Micros>,
    cites: Option<Vec<String>>,
    note: Option<String>,
    recorded: Micros,
    /// The model call whose input was in front of the agent (index into `calls`).
    call: Option<usize>,
    trace: String,
    origin: String,
    source: &'static str,
}

/// One input in memory: its name as the user gave it, and its text.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// Reads an OTLP/JSON trace (one request, or JSON Lines of requests); see
/// [`read_named`].
pub fn read(file: &str, text: &str, options: &Options) -> Result<Draft, DatasetErrors> {
    read_all(&[Input { name: file, text }], options)
}

/// [`read_named`] of texts in memory.
pub fn read_all(inputs: &[Input], options: &Options) -> Result<Draft, DatasetErrors> {
    let named: Vec<Named> = inputs
        .iter()
        .map(|i| Named {
            name: i.name,
            source: Source::Text(i.text),
        })
        .collect();
    read_named(&named, options, &mut |_, _| {})
}

/// [`read_named`] of files, each read a line at a time: a trace of any size
/// imports in memory that grows with what its agent said, not with the file
/// (design.md §7). `progress` hears (bytes read, bytes in all).
pub fn read_files(
    paths: &[(&str, &std::path::Path)],
    options: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Draft, DatasetErrors> {
    let named: Vec<Named> = paths
        .iter()
        .map(|&(name, path)| Named {
            name,
            source: Source::File(path),
        })
        .collect();
    read_named(&named, options, progress)
}

/// Reads OTLP/JSON inputs — trace requests, logs requests, or both — as one
/// run, in passes: spans, with the log records joined to them (read.rs) →
/// the run's shape (agents, model calls, tools) → evidence → what the agent
/// said → events → header.
pub fn read_named(
    inputs: &[Named],
    options: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Draft, DatasetErrors> {
    let first = inputs.first().map(|i| i.name).unwrap_or("trace");
    let mut report = ImportReport {
        format: "otlp".into(),
        input: inputs.iter().map(|i| i.name).collect::<Vec<_>>().join(", "),
        ..ImportReport::default()
    };
    let spans = read::read_spans(inputs, &mut report, progress)?;
    let run = Run::new(spans, options, &mut report);
    let gathered = gather_evidence(&run, options);
    let numbered = Numbered::of(&gathered.items);
    let (mut said, from_output) = said_in_outputs(&run, options, &mut report);
    said.extend(said_by_belief_tools(
        &run,
        options,
        &from_output,
        &mut report,
    ));
    said.extend(said_in_span_events(&run, &mut report));
    said.extend(said_in_memory(&run, options, &mut report));
    let mut built = evidence_events(&gathered, &numbered, &mut report);
    report.evidence = gathered.items.len();
    said_events(
        &run,
        &gathered,
        &numbered,
        &said,
        options,
        &mut built,
        &mut report,
    );
    evaluations(&run, &gathered, &numbered, &said, &built, &mut report);
    notes(options, &mut report);
    let header = header(first, &run, built.agents, built.topics, options);
    Ok(Draft {
        header,
        events: built.events,
        origins: built.origins,
        report,
    })
}

/// The run's shape, read once from its spans: each span's agent, each
/// trace's start, the model calls (by start) and tool spans (by end), and
/// the tool calls the model emitted, by (trace, call id): (tool, call).
struct Run {
    spans: Vec<SpanRec>,
    agents: Vec<String>,
    trace_start: HashMap<String, Micros>,
    calls: Vec<usize>,
    tools: Vec<usize>,
    emitted: HashMap<(String, String), (String, usize)>,
}

impl Run {
    /// Pass 2.
    fn new(spans: Vec<SpanRec>, options: &Options, report: &mut ImportReport) -> Run {
        let by_id: HashMap<(&str, &str), usize> = spans
            .iter()
            .enumerate()
            .map(|(i, s)| ((s.trace.as_str(), s.id.as_str()), i))
            .collect();
        let agents = agents_of(&spans, &by_id, options, report);
        let mut trace_start: HashMap<String, Micros> = HashMap::new();
        for s in &spans {
            let e = trace_start.entry(s.trace.clone()).or_insert(s.start);
            *e = (*e).min(s.start);
        }
        let mut calls: Vec<usize> = (0..spans.len())
            .filter(|&i| matches!(spans[i].role, Role::Call { .. }))
            .collect();
        calls.sort_by_key(|&i| (spans[i].start, spans[i].end, i));
        let mut tools: Vec<usize> = (0..spans.len())
            .filter(|&i| matches!(spans[i].role, Role::Tool { .. }))
            .collect();
        tools.sort_by_key(|&i| (spans[i].end, i));
        report.read.add("model calls", calls.len());
        report.read.add("tool spans", tools.len());
        for (what, count) in [
            (
                "memory searches",
                spans
                    .iter()
                    .filter(|s| {
                        matches!(
                            s.role,
                            Role::Memory {
                                op: MemoryOp::Search,
                                ..
                            }
                        )
                    })
                    .count(),
            ),
            (
                "memory writes and deletes",
                spans
                    .iter()
                    .filter(
                        |s| matches!(&s.role, Role::Memory { op, .. } if *op != MemoryOp::Search),
                    )
                    .count(),
            ),
            (
                "retrievals",
                spans
                    .iter()
                    .filter(|s| matches!(s.role, Role::Retrieval { .. }))
                    .count(),
            ),
        ] {
            if count > 0 {
                report.read.add(what, count);
            }
        }
        report.read.add(
            "agent spans",
            spans
                .iter()
                .filter(|s| matches!(s.role, Role::Agent { .. }))
                .count(),
        );
        let empty = calls
            .iter()
            .filter(|&&c| {
                matches!(&spans[c].role, Role::Call { input, output, .. }
                    if input.is_empty() && output.is_empty())
            })
            .count();
        if empty > 0 {
            report.notes.push(format!(
                "{empty} of {} model calls carry no message content (capture was off, or it went to OTLP log records not given: add the logs file): nothing they read is evidence",
                calls.len()
            ));
        }
        let mut emitted: HashMap<(String, String), (String, usize)> = HashMap::new();
        for (k, &c) in calls.iter().enumerate() {
            if let Role::Call {
                dialect, output, ..
            } = &spans[c].role
            {
                report.cases.bump(dialect.describe());
                for part in output.iter().flat_map(|m| &m.parts) {
                    if let Part::ToolCall {
                        id: Some(id), name, ..
                    } = part
                    {
                        emitted
                            .entry((spans[c].trace.clone(), id.clone()))
                            .or_insert((name.clone(), k));
                    }
                }
            }
        }
        Run {
            spans,
            agents,
            trace_start,
            calls,
            tools,
            emitted,
        }
    }

    /// The latest model call of `agent` started by `at` (index into `calls`).
    fn latest_call(&self, agent: &str, at: Micros) -> Option<usize> {
        latest_call(&self.calls, &self.spans, &self.agents, agent, at)
    }
}

/// Whether `name` is the tool through which the agent states or drops a belief.
fn is_belief_tool(options: &Options, name: &str) -> bool {
    name == options.belief_tool || name == options.retract_tool
}

/// The evidence of a run: tool results (from their spans, then from the
/// messages that show them) and user/system input messages; what each model
/// call's input held (indices into `items`); tool results by call id.
struct Gathered {
    items: Vec<Ev>,
    in_front: Vec<Vec<usize>>,
    by_call: HashMap<(String, String), usize>,
}

/// Pass 3.
fn gather_evidence(run: &Run, options: &Options) -> Gathered {
    let spans = &run.spans;
    let mut evidence: Vec<Ev> = Vec::new();
    let mut by_call: HashMap<(String, String), usize> = HashMap::new();
    // An id-less tool result, by (trace, agent, input message, part): the
    // same message in the history every later call repeats.
    let mut by_place: HashMap<(String, String, usize, usize), usize> = HashMap::new();
    // Each trace's tool results not yet read by a model call, in the order
    // the tools ended (read ones are dropped from the front as they are met).
    let mut unread: HashMap<String, std::collections::VecDeque<usize>> = HashMap::new();
    let mut by_message: HashMap<(String, String, String), usize> = HashMap::new();
    // Each tool span's start, by evidence index.
    let mut started: Vec<Micros> = Vec::new();
    for &t in &run.tools {
        let s = &spans[t];
        let Role::Tool {
            name,
            call_id,
            result,
            ..
        } = &s.role
        else {
            continue;
        };
        if is_belief_tool(options, name) {
            continue;
        }
        let content = match (result, &s.error) {
            (Some(r), _) => r.clone(),
            (None, Some(e)) => format!("error: {e}"),
            (None, None) => String::new(),
        };
        let n = evidence.len();
        evidence.push(Ev {
            source: name.clone(),
            kind: "other",
            content: content.clone(),
            observed: s.end,
            recorded: s.end,
            locator: s.locator(),
            call_id: call_id.clone(),
            seen: false,
            order: n,
        });
        if let Some(id) = call_id {
            by_call.entry((s.trace.clone(), id.clone())).or_insert(n);
        }
        unread.entry(s.trace.clone()).or_default().push_back(n);
        started.push(s.start);
    }
    // The n-th tool span run after a model call's tool calls answers the n-th
    // of them: queues are in the order the tools started (parallel tools
    // may end in another order).
    for queue in unread.values_mut() {
        queue
            .make_contiguous()
            .sort_by_key(|&n| (started[n], evidence[n].observed, n));
    }
    let mut in_front: Vec<Vec<usize>> = vec![Vec::new(); run.calls.len()];
    // What a memory search or a retrieval returned is in front of the
    // agent's next model call (design.md §7): it was fetched for it.
    for (i, s) in spans.iter().enumerate() {
        let (source, records, what) = match &s.role {
            Role::Memory {
                op: MemoryOp::Search,
                store,
                records,
                ..
            } => (
                match store {
                    Some(id) => format!("memory:{id}"),
                    None => "memory".to_owned(),
                },
                records,
                "memory record",
            ),
            Role::Retrieval { documents } => ("retrieval".to_owned(), documents, "document"),
            _ => continue,
        };
        let next = run.calls.iter().position(|&c| {
            spans[c].trace == s.trace && run.agents[c] == run.agents[i] && spans[c].start >= s.end
        });
        for (j, r) in records.iter().enumerate() {
            let n = evidence.len();
            let place = match &r.id {
                Some(id) => format!("{what} {id}"),
                None => format!("{what} {j}"),
            };
            evidence.push(Ev {
                source: source.clone(),
                kind: "other",
                content: r.content.clone(),
                observed: s.end,
                recorded: s.end,
                locator: format!("{} {place}", s.locator()),
                call_id: None,
                seen: true,
                order: n,
            });
            if let Some(k) = next {
                in_front[k].push(n);
            }
        }
    }
    // Each call repeats the history before it: a message at the same place of
    // the same agent's history in the same trace, the same (shared) message,
    // is what it was when first read — its items are taken as they were, so
    // a long run is read in time that grows with its calls, not their square.
    // (trace, agent, place in the history) → the message read there and its items.
    type Place = (usize, usize, usize);
    let mut read_before: HashMap<Place, (Arc<Msg>, Vec<usize>)> = HashMap::new();
    let mut ix: HashMap<&str, usize> = HashMap::new();
    // The call (k + 1) whose input last listed each item.
    let mut listed: Vec<usize> = Vec::new();
    for (k, &c) in run.calls.iter().enumerate() {
        let s = &spans[c];
        let Role::Call { input, .. } = &s.role else {
            continue;
        };
        let next = ix.len();
        let t = *ix.entry(s.trace.as_str()).or_insert(next);
        let next = ix.len();
        let ag = *ix.entry(run.agents[c].as_str()).or_insert(next);
        // The items one input message shows, read the first time it is met.
        let mut read_message = |i: usize, m: &Arc<Msg>| -> Vec<usize> {
            let mut found_all = Vec::new();
            for (j, part) in m.parts.iter().enumerate() {
                let locator = || {
                    if m.parts.len() > 1 {
                        format!("{} input message {i} part {j}", s.locator())
                    } else {
                        format!("{} input message {i}", s.locator())
                    }
                };
                let found = match part {
                    Part::Text(text)
                        if (m.role == "user" || m.role == "system") && !text.trim().is_empty() =>
                    {
                        let key = (s.trace.clone(), m.role.clone(), text.clone());
                        Some(*by_message.entry(key).or_insert_with(|| {
                            let n = evidence.len();
                            evidence.push(Ev {
                                source: m.role.clone(),
                                kind: if m.role == "user" { "human" } else { "other" },
                                content: text.clone(),
                                observed: s.start,
                                recorded: s.start,
                                locator: locator(),
                                call_id: None,
                                seen: true,
                                order: n,
                            });
                            n
                        }))
                    }
                    // Media the model was given is evidence it read, like a
                    // message (design.md §7): once per trace, role and media.
                    Part::Media(what) => {
                        let key = (s.trace.clone(), m.role.clone(), what.clone());
                        Some(*by_message.entry(key).or_insert_with(|| {
                            let n = evidence.len();
                            evidence.push(Ev {
                                source: m.role.clone(),
                                kind: if m.role == "user" { "human" } else { "other" },
                                content: what.clone(),
                                observed: s.start,
                                recorded: s.start,
                                locator: locator(),
                                call_id: None,
                                seen: true,
                                order: n,
                            });
                            n
                        }))
                    }
                    Part::ToolResult { id, content } => {
                        let tool_name = id
                            .as_ref()
                            .and_then(|id| run.emitted.get(&(s.trace.clone(), id.clone())))
                            .map(|(name, _)| name.clone())
                            .or_else(|| m.name.clone());
                        if tool_name
                            .as_deref()
                            .is_some_and(|name| is_belief_tool(options, name))
                        {
                            None
                        } else {
                            // A tool result is its tool call (design.md §7): by its
                            // call id; an id-less one by its place in the history;
                            // else the next tool span of this trace not yet read,
                            // in the order the tools ended. Content never merges
                            // two calls: identical outputs stay two items.
                            let place = (s.trace.clone(), run.agents[c].clone(), i, j);
                            let known = match id {
                                Some(id) => by_call.get(&(s.trace.clone(), id.clone())).copied(),
                                None => by_place.get(&place).copied(),
                            }
                            .or_else(|| {
                                let queue = unread.get_mut(&s.trace)?;
                                while queue.front().is_some_and(|&n| evidence[n].seen) {
                                    queue.pop_front();
                                }
                                queue.iter().copied().find(|&n| {
                                    let e = &evidence[n];
                                    !e.seen
                                        && e.recorded <= s.start
                                        && match (id, &e.call_id) {
                                            (Some(id), Some(own)) => id == own,
                                            _ => true,
                                        }
                                })
                            });
                            let n = match known {
                                Some(n) => {
                                    let e = &mut evidence[n];
                                    if !e.seen {
                                        e.seen = true;
                                        e.recorded = s.start;
                                        if e.content.is_empty() {
                                            e.content = content.clone();
                                        }
                                        if e.call_id.is_none() {
                                            e.call_id = id.clone();
                                        }
                                    }
                                    n
                                }
                                None => {
                                    let n = evidence.len();
                                    evidence.push(Ev {
                                        source: tool_name.unwrap_or_else(|| "tool".into()),
                                        kind: "other",
                                        content: content.clone(),
                                        observed: s.start,
                                        recorded: s.start,
                                        locator: locator(),
                                        call_id: id.clone(),
                                        seen: true,
                                        order: n,
                                    });
                                    n
                                }
                            };
                            match id {
                                Some(id) => {
                                    by_call.entry((s.trace.clone(), id.clone())).or_insert(n);
                                }
                                None => {
                                    by_place.entry(place).or_insert(n);
                                }
                            }
                            Some(n)
                        }
                    }
                    _ => None,
                };
                if let Some(n) = found
                    && !found_all.contains(&n)
                {
                    found_all.push(n);
                }
            }
            found_all
        };
        for (i, m) in input.iter().enumerate() {
            let found_before = read_before
                .get(&(t, ag, i))
                .filter(|(known, _)| Arc::ptr_eq(known, m))
                .map(|(_, found)| found.clone());
            let found_here = match found_before {
                Some(found) => found,
                None => {
                    let found = read_message(i, m);
                    read_before.insert((t, ag, i), (m.clone(), found.clone()));
                    found
                }
            };
            for n in found_here {
                if listed.len() <= n {
                    listed.resize(n + 1, 0);
                }
                if listed[n] != k + 1 {
                    listed[n] = k + 1;
                    in_front[k].push(n);
                }
            }
        }
    }
    Gathered {
        items: evidence,
        in_front,
        by_call,
    }
}

/// The evidence ids (`T1`, `T2` … in recorded order) and the order itself.
struct Numbered {
    order: Vec<usize>,
    ids: Vec<String>,
    by_id: HashMap<String, usize>,
}

impl Numbered {
    /// Pass 4.
    fn of(evidence: &[Ev]) -> Numbered {
        let mut order: Vec<usize> = (0..evidence.len()).collect();
        order.sort_by_key(|&n| {
            (
                evidence[n].recorded,
                evidence[n].observed,
                evidence[n].order,
            )
        });
        let mut ids: Vec<String> = vec![String::new(); evidence.len()];
        for (rank, &n) in order.iter().enumerate() {
            ids[n] = format!("T{}", rank + 1);
        }
        let by_id = ids
            .iter()
            .enumerate()
            .map(|(n, id)| (id.clone(), n))
            .collect();
        Numbered { order, ids, by_id }
    }
}

/// Pass 5a: what the agent said in its model calls' outputs — belief-tool
/// calls, and prose a rule reads — with the (trace, call id or arguments)
/// of each belief-tool call, so its tool span is not read twice.
fn said_in_outputs(
    run: &Run,
    options: &Options,
    report: &mut ImportReport,
) -> (Vec<Said>, HashSet<(String, String)>) {
    let mut said: Vec<Said> = Vec::new();
    let mut from_output: HashSet<(String, String)> = HashSet::new();
    for (k, &c) in run.calls.iter().enumerate() {
        let s = &run.spans[c];
        let Role::Call { output, .. } = &s.role else {
            continue;
        };
        let agent = &run.agents[c];
        for (i, m) in output.iter().enumerate() {
            for (j, part) in m.parts.iter().enumerate() {
                let Part::ToolCall { id, name, args } = part else {
                    continue;
                };
                if !is_belief_tool(options, name) {
                    continue;
                }
                if let Some(id) = id {
                    from_output.insert((s.trace.clone(), id.clone()));
                }
                from_output.insert((s.trace.clone(), dialect::canonical(args)));
                let origin = format!("{} output message {i} part {j}", s.locator());
                let retract = *name == options.retract_tool;
                match serde_json::from_str::<Value>(args) {
                    Ok(Value::Object(map)) => match fields(&map, "", retract) {
                        Ok(f) => said.push(Said {
                            agent: agent.clone(),
                            recorded: s.end,
                            call: Some(k),
                            trace: s.trace.clone(),
                            origin,
                            source: SaidBy::Tool.name(retract),
                            ..f
                        }),
                        Err(reason) => skip(
                            report,
                            &s.id,
                            format!("{name} call {}: {reason}", id.as_deref().unwrap_or("?")),
                        ),
                    },
                    _ => skip(
                        report,
                        &s.id,
                        format!(
                            "{name} call {}: its arguments are not a JSON object",
                            id.as_deref().unwrap_or("?")
                        ),
                    ),
                }
            }
        }
        for rule in &options.rules {
            matches(rule, k, s, output, agent, &mut said);
        }
    }
    (said, from_output)
}

/// Pass 5b: belief-tool spans whose call is in no model call's output.
fn said_by_belief_tools(
    run: &Run,
    options: &Options,
    from_output: &HashSet<(String, String)>,
    report: &mut ImportReport,
) -> Vec<Said> {
    let mut said = Vec::new();
    for &t in &run.tools {
        let s = &run.spans[t];
        let Role::Tool {
            name,
            call_id,
            args,
            ..
        } = &s.role
        else {
            continue;
        };
        if !is_belief_tool(options, name) {
            continue;
        }
        let known = |key: String| from_output.contains(&(s.trace.clone(), key));
        if call_id.clone().is_some_and(known)
            || args.as_deref().map(dialect::canonical).is_some_and(known)
        {
            continue;
        }
        let retract = *name == options.retract_tool;
        let parsed = args
            .as_deref()
            .map(serde_json::from_str::<Value>)
            .and_then(Result::ok);
        let Some(Value::Object(map)) = parsed else {
            skip(
                report,
                &s.id,
                format!("{name} span: its arguments are missing or not a JSON object"),
            );
            continue;
        };
        match fields(&map, "", retract) {
            Ok(f) => {
                report.defaults.bump(
                    "belief-tool calls in no model call's output: recorded at the tool span's start",
                );
                said.push(Said {
                    agent: run.agents[t].clone(),
                    recorded: s.start,
                    call: run.latest_call(&run.agents[t], s.start),
                    trace: s.trace.clone(),
                    origin: s.locator(),
                    source: SaidBy::Tool.name(retract),
                    ..f
                });
            }
            Err(reason) => skip(report, &s.id, format!("{name} span: {reason}")),
        }
    }
    said
}

/// Pass 5c: `asof.belief` / `asof.retract` span events.
fn said_in_span_events(run: &Run, report: &mut ImportReport) -> Vec<Said> {
    let mut said = Vec::new();
    for (i, s) in run.spans.iter().enumerate() {
        for e in &s.events {
            let retract = match e.name.as_str() {
                "asof.belief" => false,
                "asof.retract" => true,
                _ => continue,
            };
            report.read.bump("asof span events");
            let map: Map<String, Value> = e
                .attributes
                .iter()
                .map(|kv| (kv.key.clone(), kv.value.to_json()))
                .collect();
            let Some(at) =
                wire::nanos_to_micros(&e.time).filter(|t| time::format_opt(*t).is_some())
            else {
                skip(
                    report,
                    &s.id,
                    format!("{} event: its time is missing or unreadable", e.name),
                );
                continue;
            };
            match fields(&map, "asof.", retract) {
                Ok(f) => {
                    let call = match s.role {
                        Role::Call { .. } => run.calls.iter().position(|&c| c == i),
                        _ => run.latest_call(&run.agents[i], at),
                    };
                    said.push(Said {
                        agent: run.agents[i].clone(),
                        recorded: at,
                        call,
                        trace: s.trace.clone(),
                        origin: format!("{} event {}", s.locator(), e.name),
                        source: SaidBy::Event.name(retract),
                        ..f
                    });
                }
                Err(reason) => skip(report, &s.id, format!("{} event: {reason}", e.name)),
            }
        }
    }
    said
}

/// Pass 5d: what the agent wrote to its memory, read by the rules with
/// `in: memory` (an assertion recorded when the write ended); a
/// `delete_memory` of a record that gave a belief retracts it.
fn said_in_memory(run: &Run, options: &Options, report: &mut ImportReport) -> Vec<Said> {
    let mut said = Vec::new();
    let rules: Vec<&Rule> = options
        .rules
        .iter()
        .filter(|r| r.within.contains(&Within::Memory))
        .collect();
    let mut spans: Vec<usize> = (0..run.spans.len())
        .filter(|&i| matches!(run.spans[i].role, Role::Memory { op, .. } if op != MemoryOp::Search))
        .collect();
    spans.sort_by_key(|&i| (run.spans[i].end, i));
    // A memory record (trace, store, record id) → the (topic, claim)s its
    // write gave.
    type RecordKey = (String, Option<String>, String);
    let mut gave: HashMap<RecordKey, Vec<(String, String)>> = HashMap::new();
    for i in spans {
        let s = &run.spans[i];
        let Role::Memory {
            op,
            store,
            records,
            record_id,
        } = &s.role
        else {
            continue;
        };
        let agent = &run.agents[i];
        if *op == MemoryOp::Delete {
            let Some(id) = record_id else {
                continue;
            };
            let key = (s.trace.clone(), store.clone(), id.clone());
            for (topic, claim) in gave.remove(&key).unwrap_or_default() {
                said.push(Said {
                    retract: true,
                    agent: agent.clone(),
                    topic,
                    claim: Some(claim),
                    confidence: None,
                    valid_from: None,
                    valid_to: None,
                    cites: None,
                    note: Some(format!("memory record {id} deleted")),
                    recorded: s.end,
                    call: run.latest_call(agent, s.start),
                    trace: s.trace.clone(),
                    origin: s.locator(),
                    source: "memory deletes",
                });
            }
            continue;
        }
        for (j, r) in records.iter().enumerate() {
            let id = r.id.clone().or_else(|| record_id.clone());
            let place = match &id {
                Some(id) => format!("memory record {id}"),
                None => format!("memory record {j}"),
            };
            for rule in &rules {
                for caps in rule.regex.captures_iter(&r.content) {
                    let (Some(quote), Some(claim)) = (caps.get(0), caps.name("claim")) else {
                        continue;
                    };
                    let claim = claim.as_str().trim();
                    if claim.is_empty() {
                        continue;
                    }
                    if let Some(id) = &id {
                        gave.entry((s.trace.clone(), store.clone(), id.clone()))
                            .or_default()
                            .push((rule.topic.clone(), claim.to_owned()));
                    }
                    said.push(Said {
                        retract: false,
                        agent: agent.clone(),
                        topic: rule.topic.clone(),
                        claim: Some(claim.to_owned()),
                        confidence: rules::confidence_of(&caps).or(rule.confidence),
                        valid_from: None,
                        valid_to: None,
                        cites: None,
                        note: Some(format!(
                            "“{}” ({})",
                            quote.as_str(),
                            Within::Memory.as_str()
                        )),
                        recorded: s.end,
                        call: run.latest_call(agent, s.start),
                        trace: s.trace.clone(),
                        origin: format!("{} {place}", s.locator()),
                        source: "rules",
                    });
                }
            }
        }
    }
    if said.iter().any(|s| s.retract) {
        report
            .notes
            .push("a delete_memory of a record that gave a belief retracts that belief".to_owned());
    }
    said
}

/// The dataset's events so far, where each came from, and the agents and
/// topics they name (in first-seen order).
struct Built {
    events: Vec<RawEvent>,
    origins: Vec<Location>,
    agents: Vec<String>,
    topics: Vec<String>,
}

/// Pass 6a: one evidence event per item, in recorded order.
fn evidence_events(gathered: &Gathered, numbered: &Numbered, report: &mut ImportReport) -> Built {
    let mut events: Vec<RawEvent> = Vec::new();
    let mut origins: Vec<Location> = Vec::new();
    for &n in &numbered.order {
        let e = &gathered.items[n];
        let mut locator = e.locator.clone();
        if let Some(id) = &e.call_id {
            locator.push_str(&format!(" tool call {id}"));
        }
        let summary: String = if e.content.is_empty() {
            format!("{} result (content not captured in the trace)", e.source)
        } else {
            e.content.chars().take(SUMMARY_CHARS).collect()
        };
        events.push(RawEvent::Evidence(RawEvidence {
            id: numbered.ids[n].clone(),
            kind: e.kind.into(),
            source: e.source.clone(),
            locator,
            observed_at: instant(e.observed).into(),
            observed_until: None,
            recorded_at: instant(e.recorded).into(),
            reliability: None,
            content: super::whole_content(&e.content, &summary, report),
            summary,
        }));
        origins.push(Location::record("evidence", events.len()));
    }
    Built {
        events,
        origins,
        agents: Vec::new(),
        topics: Vec::new(),
    }
}

/// The latest assertion on an (agent, topic): when, from which model call,
/// and the cut-off of the evidence that call's assertions cite.
struct Asserted {
    at: Micros,
    call: Option<usize>,
    since: Option<Micros>,
}

/// Pass 6b: a belief or retraction event per thing said, in recorded order,
/// citing what it names (evidence ids or tool call ids) or, naming nothing,
/// what was in front of the agent since its previous assertion on the topic.
#[allow(clippy::too_many_arguments)]
fn said_events(
    run: &Run,
    gathered: &Gathered,
    numbered: &Numbered,
    said: &[Said],
    options: &Options,
    built: &mut Built,
    report: &mut ImportReport,
) {
    let evidence = &gathered.items;
    let evidence_id = &numbered.ids;
    let mut indices: Vec<usize> = (0..said.len()).collect();
    indices.sort_by_key(|&i| (said[i].recorded, i));
    // Per (agent, topic): the latest assertion's time, and the model call it
    // came from with the cut-off that call's assertions share (design.md §7:
    // one call, one set of new evidence).
    let mut last_assertion: HashMap<(String, String), Asserted> = HashMap::new();
    let (mut beliefs, mut retractions) = (0usize, 0usize);
    let mut seen_topics: HashSet<String> = HashSet::new();
    for &c in &run.calls {
        if !built.agents.contains(&run.agents[c]) {
            built.agents.push(run.agents[c].clone());
        }
    }
    for &i in &indices {
        let s = &said[i];
        let key = (s.agent.clone(), s.topic.clone());
        let before = last_assertion.get(&key);
        let since = match (before, s.call) {
            (Some(b), Some(k)) if b.call == Some(k) => b.since,
            (b, _) => b.map(|b| b.at),
        };
        let cites: Vec<String> = match &s.cites {
            Some(named) => {
                let mut out = Vec::new();
                for name in named {
                    let found = numbered.by_id.get(name.as_str()).copied().or_else(|| {
                        gathered
                            .by_call
                            .get(&(s.trace.clone(), name.clone()))
                            .copied()
                    });
                    match found {
                        Some(n) if evidence[n].recorded <= s.recorded => {
                            if !out.contains(&evidence_id[n]) {
                                out.push(evidence_id[n].clone());
                            }
                        }
                        Some(n) => report.skipped.push(Skipped {
                            location: s.origin.clone(),
                            reason: format!(
                                "cites {name} ({}), which reached the agent at {}, after this: citation dropped",
                                evidence_id[n],
                                instant(evidence[n].recorded)
                            ),
                        }),
                        None => report.skipped.push(Skipped {
                            location: s.origin.clone(),
                            reason: format!(
                                "cites {name}, which is no evidence id or tool call id of this trace: citation dropped"
                            ),
                        }),
                    }
                }
                out
            }
            None => {
                let cited: Vec<String> = match s.call {
                    Some(k) => {
                        let mut items: Vec<usize> = gathered.in_front[k]
                            .iter()
                            .copied()
                            .filter(|&n| {
                                evidence[n].recorded <= s.recorded
                                    && since.is_none_or(|t| evidence[n].recorded > t)
                            })
                            .collect();
                        items.sort_by_key(|&n| evidence_id[n][1..].parse::<usize>().unwrap_or(0));
                        items.into_iter().map(|n| evidence_id[n].clone()).collect()
                    }
                    None => Vec::new(),
                };
                report.defaults.bump(if cited.is_empty() {
                    "beliefs and retractions naming no evidence, with no new evidence in front of the agent: they cite nothing"
                } else {
                    "beliefs and retractions naming no evidence: the evidence in front of the agent cited"
                });
                cited
            }
        };
        let valid_from = match s.valid_from {
            Some(t) => t,
            None => match options.valid_from {
                ValidFrom::TraceStart => {
                    report
                        .defaults
                        .bump("beliefs without valid_from: the trace's start");
                    run.trace_start[&s.trace]
                }
                ValidFrom::At(t) => {
                    report
                        .defaults
                        .bump("beliefs without valid_from: --valid-from");
                    t
                }
            },
        };
        if !s.retract && s.confidence.is_none() {
            report.defaults.bump("beliefs without confidence: 1");
        }
        if seen_topics.insert(s.topic.clone()) {
            built.topics.push(s.topic.clone());
        }
        if !built.agents.contains(&s.agent) {
            built.agents.push(s.agent.clone());
        }
        report.assertions_by_source.bump(s.source);
        let why = match &s.note {
            Some(note) => format!("{note} ({})", s.origin),
            None => s.origin.clone(),
        };
        if s.retract {
            retractions += 1;
            built.events.push(RawEvent::Retract(RawRetract {
                id: Some(format!("R{retractions}")),
                agent: Some(s.agent.clone()),
                topic: Some(s.topic.clone()),
                assertion: None,
                claim: s.claim.clone(),
                valid_from: s.valid_from.map(|t| instant(t).into()),
                valid_to: s.valid_to.map(|t| instant(t).into()),
                recorded_at: instant(s.recorded).into(),
                because: cites,
                reason: Some(why),
            }));
        } else {
            beliefs += 1;
            last_assertion.insert(
                key,
                Asserted {
                    at: s.recorded,
                    call: s.call,
                    since,
                },
            );
            built.events.push(RawEvent::Believe(RawBelieve {
                id: Some(format!("B{beliefs}")),
                agent: s.agent.clone(),
                topic: s.topic.clone(),
                claim: s.claim.clone().unwrap_or_default(),
                confidence: s.confidence,
                valid_from: instant(valid_from).into(),
                valid_to: s.valid_to.map(|t| instant(t).into()),
                clip: None,
                recorded_at: instant(s.recorded).into(),
                supported_by: cites,
                rationale: Some(why),
            }));
        }
        built
            .origins
            .push(Location::record("belief", beliefs + retractions));
    }
    if built.agents.is_empty() {
        built
            .agents
            .push(options.agent.clone().unwrap_or_else(|| "agent".into()));
    }
}

/// The event the GenAI conventions record an evaluation with.
const EVALUATION: &str = "gen_ai.evaluation.result";

/// Pass 6c: each `gen_ai.evaluation.result` on a span, kept with what it
/// judged — the evidence a tool, memory or retrieval span gave, or the
/// assertions a model call made (design.md §7). Kept, not turned into
/// verifications.
fn evaluations(
    run: &Run,
    gathered: &Gathered,
    numbered: &Numbered,
    said: &[Said],
    built: &Built,
    report: &mut ImportReport,
) {
    // Each thing said, by origin, to its event id (B… or R…).
    let ids: Vec<(&str, String)> = built
        .events
        .iter()
        .filter_map(|e| match e {
            RawEvent::Believe(b) => Some((b.rationale.as_deref()?, b.id.clone()?)),
            RawEvent::Retract(r) => Some((r.reason.as_deref()?, r.id.clone()?)),
            _ => None,
        })
        .collect();
    for (i, s) in run.spans.iter().enumerate() {
        for e in s.events.iter().filter(|e| e.name == EVALUATION) {
            let attr = |k: &str| {
                e.attributes
                    .iter()
                    .find(|kv| kv.key == k)
                    .map(|kv| kv.value.to_json())
                    .filter(|v| !v.is_null())
            };
            let value = serde_json::json!({
                "name": attr("gen_ai.evaluation.name"),
                "score_value": attr("gen_ai.evaluation.score.value"),
                "score_label": attr("gen_ai.evaluation.score.label"),
                "explanation": attr("gen_ai.evaluation.explanation"),
                "at": wire::nanos_to_micros(&e.time).map(instant),
                "locator": s.locator(),
            });
            let prefix = s.locator();
            let mut judged: Vec<String> = match &s.role {
                Role::Call { .. } => {
                    let k = run.calls.iter().position(|&c| c == i);
                    said.iter()
                        .filter(|x| x.call == k && x.origin.starts_with(&prefix))
                        .filter_map(|x| {
                            ids.iter()
                                .find(|(why, _)| {
                                    *why == x.origin || why.ends_with(&format!("({})", x.origin))
                                })
                                .map(|(_, id)| id.clone())
                        })
                        .collect()
                }
                _ => gathered
                    .items
                    .iter()
                    .enumerate()
                    .filter(|(_, ev)| ev.locator.starts_with(&prefix))
                    .map(|(n, _)| numbered.ids[n].clone())
                    .collect(),
            };
            judged.dedup();
            report.read.bump("evaluations");
            if judged.is_empty() {
                report.skipped.push(Skipped {
                    location: format!("span {}", s.id),
                    reason: "an evaluation of a span that gave no evidence or assertion: kept in no item's details".into(),
                });
            }
            for id in judged {
                report
                    .evaluations
                    .entry(id)
                    .or_default()
                    .push(value.clone());
            }
        }
    }
}

/// The import summary's notes on the options that shaped it.
fn notes(options: &Options, report: &mut ImportReport) {
    if options.agent.is_some() {
        report.notes.push(format!(
            "every span's agent is {} (--agent)",
            options.agent.as_deref().unwrap_or_default()
        ));
    }
    if !options.rules.is_empty() {
        report.notes.push(format!(
            "{} rules read prose into beliefs (--rules)",
            options.rules.len()
        ));
    }
    report.notes.push(if options.many.is_empty() {
        "every topic is single-valued; --many names multi-valued ones".to_owned()
    } else {
        format!("multi-valued topics: {}", options.many.join(", "))
    });
}

/// Pass 7: the dataset's header — the run named after the file and its root
/// span, the agents and topics the events name.
fn header(
    file: &str,
    run: &Run,
    agents: Vec<String>,
    topics: Vec<String>,
    options: &Options,
) -> RawHeader {
    let root = run
        .spans
        .iter()
        .filter(|s| s.parent.is_none())
        .min_by_key(|s| s.start)
        .map(|s| s.name.clone());
    let base = super::file_base(file, "trace");
    let title = match root {
        Some(name) => format!("Agent run “{name}” ({base})"),
        None => format!("Agent run ({base})"),
    };
    let many: HashSet<&str> = options.many.iter().map(String::as_str).collect();
    super::header(
        super::incident_id(file, "trace", &[".jsonl", ".json", ".otlp"]),
        title,
        agents
            .into_iter()
            .map(|id| (format!("Agent {id} (from the trace)"), id)),
        topics.into_iter().map(|id| {
            let cardinality = if many.contains(id.as_str()) {
                Cardinality::Many
            } else {
                Cardinality::One
            };
            (
                format!("What does the agent hold about {id}?"),
                cardinality,
                id,
            )
        }),
    )
}

/// Each span's agent: `--agent`, else the name of the nearest agent span at or
/// above it, else its resource's `service.name`, else `agent`.
fn agents_of(
    spans: &[SpanRec],
    by_id: &HashMap<(&str, &str), usize>,
    options: &Options,
    report: &mut ImportReport,
) -> Vec<String> {
    if let Some(a) = &options.agent {
        return vec![a.clone(); spans.len()];
    }
    let mut out = Vec::with_capacity(spans.len());
    let (mut from_service, mut unnamed) = (0usize, 0usize);
    for s in spans {
        let mut at = Some(s);
        let mut found = None;
        let mut steps = 0;
        while let Some(span) = at {
            if let Role::Agent { name: Some(name) } = &span.role {
                found = Some(name.clone());
                break;
            }
            steps += 1;
            if steps > spans.len() {
                break;
            }
            at = span
                .parent
                .as_deref()
                .and_then(|p| by_id.get(&(span.trace.as_str(), p)))
                .map(|&i| &spans[i]);
        }
        let agent = match (found, &s.service) {
            (Some(name), _) => name,
            (None, Some(service)) => {
                if matches!(s.role, Role::Call { .. }) {
                    from_service += 1;
                }
                service.clone()
            }
            (None, None) => {
                if matches!(s.role, Role::Call { .. }) {
                    unnamed += 1;
                }
                "agent".into()
            }
        };
        out.push(agent);
    }
    if from_service > 0 {
        report.defaults.add(
            "model calls under no agent span: the resource's service.name is the agent",
            from_service,
        );
    }
    if unnamed > 0 {
        report.defaults.add(
            "model calls with no agent span and no service.name: agent `agent`",
            unnamed,
        );
    }
    out
}

/// The agent's latest model call that started by `at` (index into `calls`).
fn latest_call(
    calls: &[usize],
    spans: &[SpanRec],
    agents: &[String],
    agent: &str,
    at: Micros,
) -> Option<usize> {
    calls
        .iter()
        .enumerate()
        .filter(|&(_, &c)| agents[c] == agent && spans[c].start <= at)
        .map(|(k, _)| k)
        .next_back()
}

/// A belief's or retraction's fields from a JSON object (tool arguments, or a
/// span event's attributes under `prefix`).
fn fields(map: &Map<String, Value>, prefix: &str, retract: bool) -> Result<Said, String> {
    let get = |k: &str| map.get(&format!("{prefix}{k}")).filter(|v| !v.is_null());
    let string = |k: &str| -> Result<Option<String>, String> {
        match get(k) {
            None => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(other) => Err(format!("{prefix}{k} is a {}, not text", kind_of(other))),
        }
    };
    let when = |k: &str| -> Result<Option<Micros>, String> {
        string(k)?
            .map(|t| time::parse(&t).map_err(|e| format!("{prefix}{k}: {e}")))
            .transpose()
    };
    let topic = string("topic")?.ok_or_else(|| format!("it names no {prefix}topic"))?;
    let claim = string("claim")?;
    if !retract && claim.is_none() {
        return Err(format!("it names no {prefix}claim"));
    }
    let confidence = match get("confidence") {
        None => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => Some(
            s.trim()
                .parse::<f64>()
                .map_err(|_| format!("{prefix}confidence {s:?} is not a number"))?,
        ),
        Some(other) => {
            return Err(format!(
                "{prefix}confidence is a {}, not a number",
                kind_of(other)
            ));
        }
    };
    if let Some(c) = confidence
        && !(0.0..=1.0).contains(&c)
    {
        return Err(format!("{prefix}confidence {c} is not in [0, 1]"));
    }
    let valid_from = when("valid_from")?;
    let valid_to = when("valid_to")?;
    if let (Some(a), Some(b)) = (valid_from, valid_to)
        && b <= a
    {
        return Err(format!("{prefix}valid_to is not after {prefix}valid_from"));
    }
    let cite_key = if retract { "because" } else { "supported_by" };
    let cites = match get(cite_key).or_else(|| if retract { get("supported_by") } else { None }) {
        None => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.trim().to_owned(),
                    other => other.to_string(),
                })
                .filter(|s| !s.is_empty())
                .collect(),
        ),
        Some(Value::String(s)) => Some(
            s.split(',')
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect(),
        ),
        Some(other) => {
            return Err(format!(
                "{prefix}{cite_key} is a {}, not a list of ids",
                kind_of(other)
            ));
        }
    };
    let note = if retract {
        string("reason")?
    } else {
        string("rationale")?
    };
    Ok(Said {
        retract,
        agent: String::new(),
        topic,
        claim,
        confidence,
        valid_from,
        valid_to,
        cites,
        note,
        recorded: 0,
        call: None,
        trace: String::new(),
        origin: String::new(),
        source: "",
    })
}

/// Every match of `rule` in a model call's output: an assertion recorded at the
/// call's end, its rationale the verbatim quote and where it stands.
fn matches(
    rule: &Rule,
    k: usize,
    s: &SpanRec,
    output: &[Arc<Msg>],
    agent: &str,
    said: &mut Vec<Said>,
) {
    let makes_calls = output
        .iter()
        .flat_map(|m| &m.parts)
        .any(|p| matches!(p, Part::ToolCall { .. }));
    for (i, m) in output.iter().enumerate() {
        for (j, part) in m.parts.iter().enumerate() {
            let (text, within) = match part {
                Part::Text(t) if m.role == "assistant" => {
                    if rule.within.contains(&Within::Assistant) {
                        (t, Within::Assistant)
                    } else if rule.within.contains(&Within::Final) && !makes_calls {
                        (t, Within::Final)
                    } else {
                        continue;
                    }
                }
                Part::Reasoning(t) if rule.within.contains(&Within::Reasoning) => {
                    (t, Within::Reasoning)
                }
                Part::ToolCall { args, .. } if rule.within.contains(&Within::ToolArgs) => {
                    (args, Within::ToolArgs)
                }
                _ => continue,
            };
            for caps in rule.regex.captures_iter(text) {
                let (Some(quote), Some(claim)) = (caps.get(0), caps.name("claim")) else {
                    continue;
                };
                let claim = claim.as_str().trim();
                if claim.is_empty() {
                    continue;
                }
                let confidence = rules::confidence_of(&caps).or(rule.confidence);
                said.push(Said {
                    retract: false,
                    agent: agent.to_owned(),
                    topic: rule.topic.clone(),
                    claim: Some(claim.to_owned()),
                    confidence,
                    valid_from: None,
                    valid_to: None,
                    cites: None,
                    note: Some(format!("“{}” ({})", quote.as_str(), within.as_str())),
                    recorded: s.end,
                    call: Some(k),
                    trace: s.trace.clone(),
                    origin: format!("{} output message {i} part {j}", s.locator()),
                    source: "rules",
                });
            }
        }
    }
}

#[cfg(test)]
mod passes {
    //! Each pass of [`read`] on the GenAI fixture (written by the real
    //! OpenTelemetry instrumentation), apart.
    use super::*;

    /// Pass 1 of one text in memory.
    fn read_spans(
        inputs: &[Input],
        report: &mut ImportReport,
    ) -> Result<Vec<SpanRec>, DatasetErrors> {
        let named: Vec<Named> = inputs
            .iter()
            .map(|i| Named {
                name: i.name,
                source: Source::Text(i.text),
            })
            .collect();
        read::read_spans(&named, report, &mut |_, _| {})
    }

    const GENAI: &str = include_str!("../../../../../tests/fixtures/otlp/genai.jsonl");

    fn run() -> (Run, ImportReport) {
        let mut report = ImportReport::default();
        let spans = read_spans(
            &[Input {
                name: "genai.jsonl",
                text: GENAI,
            }],
            &mut report,
        )
        .expect("spans");
        let run = Run::new(spans, &Options::default(), &mut report);
        (run, report)
    }

    #[test]
    fn a_span_exported_twice_is_read_once_and_said() {
        let twice = format!("{GENAI}\n{GENAI}");
        let mut report = ImportReport::default();
        let once = read_spans(
            &[Input {
                name: "genai.jsonl",
                text: GENAI,
            }],
            &mut ImportReport::default(),
        )
        .expect("spans")
        .len();
        let spans = read_spans(
            &[Input {
                name: "twice.jsonl",
                text: &twice,
            }],
            &mut report,
        )
        .expect("spans");
        assert_eq!(spans.len(), once);
        assert_eq!(
            report.skipped.len(),
            once,
            "every copy is listed as skipped"
        );
        assert!(
            read_spans(
                &[Input {
                    name: "empty.jsonl",
                    text: "{}"
                }],
                &mut ImportReport::default()
            )
            .is_err()
        );
    }

    #[test]
    fn the_runs_shape_orders_calls_by_start_and_tools_by_end() {
        let (run, _) = run();
        assert!(!run.calls.is_empty() && !run.tools.is_empty());
        let starts: Vec<Micros> = run.calls.iter().map(|&c| run.spans[c].start).collect();
        assert!(starts.is_sorted());
        let ends: Vec<Micros> = run.tools.iter().map(|&t| run.spans[t].end).collect();
        assert!(ends.is_sorted());
        assert_eq!(run.agents.len(), run.spans.len(), "an agent per span");
    }

    #[test]
    fn evidence_is_numbered_in_recorded_order_and_each_call_sees_its_input() {
        let (run, _) = run();
        let gathered = gather_evidence(&run, &Options::default());
        let numbered = Numbered::of(&gathered.items);
        let recorded: Vec<Micros> = numbered
            .order
            .iter()
            .map(|&n| gathered.items[n].recorded)
            .collect();
        assert!(recorded.is_sorted());
        assert_eq!(numbered.ids[numbered.order[0]], "T1");
        assert_eq!(numbered.by_id["T1"], numbered.order[0]);
        assert_eq!(gathered.in_front.len(), run.calls.len());
        assert!(gathered.in_front.iter().any(|items| !items.is_empty()));
    }

    /// A span of trace `t`, started and ended at `start`/`end` seconds.
    fn span(id: &str, start: i64, end: i64, role: Role) -> SpanRec {
        SpanRec {
            trace: "t".into(),
            id: id.into(),
            parent: None,
            name: id.into(),
            start: start * 1_000_000,
            end: end * 1_000_000,
            service: None,
            role,
            events: Vec::new(),
            error: None,
            mcp_session: None,
        }
    }

    fn tool(id: &str, at: i64, call_id: Option<&str>, output: &str) -> SpanRec {
        span(
            id,
            at,
            at + 1,
            Role::Tool {
                name: "check_node".into(),
                call_id: call_id.map(str::to_owned),
                args: None,
                result: Some(output.into()),
            },
        )
    }

    /// A model call at `at` whose input shows the two tool results.
    fn reading(at: i64, ids: [Option<&str>; 2], output: &str) -> SpanRec {
        let result = |id: Option<&str>| Msg {
            role: "tool".into(),
            name: None,
            parts: vec![Part::ToolResult {
                id: id.map(str::to_owned),
                content: output.into(),
            }],
        };
        span(
            "call",
            at,
            at + 1,
            Role::Call {
                dialect: dialect::Dialect::OpenInference,
                input: vec![Arc::new(result(ids[0])), Arc::new(result(ids[1]))],
                output: Vec::new(),
            },
        )
    }

    /// The agent checked a node twice and read byte-identical output: two
    /// tool calls, two evidence items, each read by the next model call —
    /// whether the results carry their call ids or, as OpenLLMetry's tool
    /// spans, none (then the n-th tool span is the n-th result).
    #[test]
    fn identical_outputs_of_two_tool_calls_are_two_items() {
        let output = "node-5: Ready";
        for (spans_ids, result_ids) in [
            ([Some("c1"), Some("c2")], [Some("c1"), Some("c2")]),
            ([None, None], [Some("c1"), Some("c2")]),
            ([None, None], [None, None]),
        ] {
            let spans = vec![
                tool("a", 10, spans_ids[0], output),
                tool("b", 20, spans_ids[1], output),
                reading(30, result_ids, output),
            ];
            let mut report = ImportReport::default();
            let run = Run::new(spans, &Options::default(), &mut report);
            let gathered = gather_evidence(&run, &Options::default());
            assert_eq!(gathered.items.len(), 2, "{spans_ids:?} {result_ids:?}");
            assert!(gathered.items.iter().all(|e| e.seen), "both read");
            assert_eq!(gathered.in_front[0], vec![0, 1], "each read once, in order");
        }
    }

    /// Two tools run in parallel without call ids; the first called ends
    /// last. The n-th tool span started is the n-th result in the next call's
    /// input, whatever order they ended in.
    #[test]
    fn id_less_parallel_tools_match_results_in_the_order_they_started() {
        let slow = span(
            "slow",
            10,
            19,
            Role::Tool {
                name: "check_node".into(),
                call_id: None,
                args: None,
                result: Some("node-5: NotReady".into()),
            },
        );
        let fast = tool("fast", 11, None, "node-6: Ready");
        let mut call = reading(30, [Some("c1"), Some("c2")], "");
        if let Role::Call { input, .. } = &mut call.role {
            for (m, content) in input.iter_mut().zip(["node-5: NotReady", "node-6: Ready"]) {
                Arc::make_mut(m).parts = vec![Part::ToolResult {
                    id: None,
                    content: content.into(),
                }];
            }
        }
        let mut report = ImportReport::default();
        let run = Run::new(vec![fast, slow, call], &Options::default(), &mut report);
        let gathered = gather_evidence(&run, &Options::default());
        assert_eq!(gathered.items.len(), 2);
        let read: Vec<&str> = gathered.in_front[0]
            .iter()
            .map(|&n| gathered.items[n].locator.as_str())
            .collect();
        assert_eq!(read, ["trace t span slow", "trace t span fast"]);
    }

    /// A screenshot the user gave the model is evidence it read, said as its
    /// type and place; the same image in the next call's history is the same
    /// item.
    #[test]
    fn media_in_the_input_is_evidence() {
        let image = Msg {
            role: "user".into(),
            name: None,
            parts: vec![Part::Media(
                "image/png, https://grafana.example/d/x.png".into(),
            )],
        };
        let call = |id: &str, at: i64| {
            span(
                id,
                at,
                at + 1,
                Role::Call {
                    dialect: dialect::Dialect::GenAi,
                    input: vec![Arc::new(image.clone())],
                    output: Vec::new(),
                },
            )
        };
        let mut report = ImportReport::default();
        let run = Run::new(
            vec![call("c1", 10), call("c2", 20)],
            &Options::default(),
            &mut report,
        );
        let gathered = gather_evidence(&run, &Options::default());
        assert_eq!(gathered.items.len(), 1);
        assert_eq!(
            gathered.items[0].content,
            "image/png, https://grafana.example/d/x.png"
        );
        assert_eq!(gathered.items[0].kind, "human");
        assert_eq!(gathered.in_front, vec![vec![0], vec![0]]);
    }

    /// An MCP tool call is a tool like any other; its session is in the
    /// evidence's locator.
    #[test]
    fn an_mcp_tool_calls_session_is_in_its_locator() {
        let mut call = tool("m", 10, Some("c1"), "ok");
        call.mcp_session = Some("sess-7".into());
        assert_eq!(call.locator(), "trace t span m mcp session sess-7");
        let mut report = ImportReport::default();
        let run = Run::new(vec![call], &Options::default(), &mut report);
        let gathered = gather_evidence(&run, &Options::default());
        assert!(gathered.items[0].locator.ends_with("mcp session sess-7"));
    }

    #[test]
    fn the_header_names_the_run_after_its_file_and_root_span() {
        let (run, _) = run();
        let h = header(
            "/tmp/x.otlp.jsonl",
            &run,
            vec!["triage".into()],
            vec!["root-cause".into()],
            &Options::default(),
        );
        assert_eq!(h.incident.id, "x");
        assert!(
            h.incident.title.ends_with("(x.otlp.jsonl)"),
            "{}",
            h.incident.title
        );
        assert_eq!(h.agents[0].id, "triage");
        assert_eq!(h.topics[0].cardinality, Some(Cardinality::One));
    }
}
