//! `asof import otlp INPUT…`: an agent's OpenTelemetry traces and logs read
//! as evidence and beliefs (design.md §7).
//!
//! ```text
//! OTLP/JSON lines, traces and logs ─▶ spans, log records joined to them (read.rs),
//!   a line at a time, each distinct message kept once
//!        │  roles (dialect.rs): model calls, tool runs, agents, memory, retrieval
//!        ▼
//!   evidence (evidence.rs): every tool call's result, user/system message,
//!             medium, memory record and document, recorded when a model call
//!             first shows it (or when it ended), T1, T2, …, kept whole
//!   beliefs (said.rs): belief-tool calls, asof.belief/asof.retract events,
//!             rules over prose, reasoning and memory writes (rules.rs);
//!             citations default to what the call read new
//!        │
//!        ▼
//!   raw dataset events ─▶ the dataset rules and replay as for any file
//! ```
//!
//! Every default used, every span or message that could not be read and every
//! citation dropped is counted in the import summary.

mod based;
mod calls;
pub mod dialect;
mod evidence;
mod merge;
mod read;
pub mod rules;
mod said;
mod trace;
mod undo;
use asof_otlp as wire;

use evidence::{evidence_event, is_long};
use said::{EVALUATION, evaluations, fields, matches};
use trace::TraceOut;

use read::kind_of;
pub use read::{Named, Source};

use super::{Draft, ImportReport, Skipped, Tally, instant};
use asof_core::dataset::raw::{RawBelieve, RawEvent, RawEvidence, RawHeader, RawRetract, RawTime};
use asof_core::dataset::{DatasetErrors, Location};
use asof_core::model::Cardinality;
use asof_core::time::{self, Micros};
use dialect::{MemoryOp, Msg, Part, Role};
use foldhash::{HashMap, HashMapExt, HashSet};
use rules::{Rule, Within};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};

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
    /// This instant (`--valid-from T`).
    At(Micros),
}

/// How `asof import otlp` reads a trace (its command-line options).
#[derive(Debug, Clone)]
pub struct Options {
    /// Every span's agent, overriding what the trace says.
    pub agent: Option<String>,
    /// The tool whose calls state beliefs (`--belief-tool`).
    pub belief_tool: String,
    /// The tool whose calls retract them (`--retract-tool`).
    pub retract_tool: String,
    /// Where a belief's valid time starts when the call does not say.
    pub valid_from: ValidFrom,
    /// Topics that hold a set of claims at once.
    pub many: Vec<String>,
    /// Rules that read beliefs out of what the model wrote (`--rules`).
    pub rules: Vec<Rule>,
    /// Skip a line that does not parse (counted in the summary's
    /// `bad_lines`) instead of refusing the input.
    pub skip_bad_lines: bool,
    /// The rules file as named, and the SHA-256 of its bytes.
    pub rules_file: Option<(String, String)>,
}

impl Options {
    /// The options as the flags that give them, every one (defaults too):
    /// what a report names so the ids it shows can be had again, and what
    /// `check` passes to import a damaged store again.
    pub fn as_flags(&self) -> String {
        let mut flags = Vec::new();
        match &self.rules_file {
            Some((path, _)) => flags.push(format!("--rules {path}")),
            None if self.rules.is_empty() => {}
            None => flags.push(format!("({} rules given in the code)", self.rules.len())),
        }
        if let Some(agent) = &self.agent {
            flags.push(format!("--agent {agent}"));
        }
        flags.push(format!("--belief-tool {}", self.belief_tool));
        flags.push(format!("--retract-tool {}", self.retract_tool));
        flags.push(format!(
            "--valid-from {}",
            match self.valid_from {
                ValidFrom::TraceStart => "trace-start".to_owned(),
                ValidFrom::At(t) => asof_core::time::format(t),
            }
        ));
        if !self.many.is_empty() {
            flags.push(format!("--many {}", self.many.join(",")));
        }
        if self.skip_bad_lines {
            flags.push("--skip-bad-lines".to_owned());
        }
        flags.join(" ")
    }
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
            skip_bad_lines: false,
            rules_file: None,
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

/// One span, its ids and times read: what later spans consult of it (its
/// ids, times, service and the agent an agent span names) and, while it may
/// be converted again, its body ([`Body`]). A growing import lets the body
/// of a span go once no checkpoint can convert it again, and reads it again
/// from the file should the trace be converted from its start (design.md
/// §7, "What a growing import holds").
#[derive(Clone)]
struct SpanRec {
    trace: Arc<str>,
    id: String,
    parent: Option<String>,
    start: Micros,
    end: Micros,
    service: Option<Arc<str>>,
    /// The agent an agent span names (its body's `Role::Agent`).
    agent: Option<Box<str>>,
    body: Option<Box<Body>>,
}

/// What only converting a span reads of it.
#[derive(Clone)]
struct Body {
    name: String,
    role: Role,
    events: Vec<wire::SpanEvent>,
    /// The status message of a span that ended in error.
    error: Option<String>,
    /// An MCP tool call's session (`mcp.session.id`), kept in its locator.
    mcp_session: Option<String>,
    /// A model call's model (`gen_ai.response.model`, else
    /// `gen_ai.request.model`, else OpenInference's `llm.model_name`).
    model: Option<String>,
}

/// The body of a span let go: what reading one looks like. Never read by a
/// conversion (the span is read again first); a debug build says so.
static GONE: Body = Body::bare(String::new(), Role::Other);

impl Body {
    /// A body of `name` and `role` alone: no events, error, session or model.
    const fn bare(name: String, role: Role) -> Body {
        Body {
            name,
            role,
            events: Vec::new(),
            error: None,
            mcp_session: None,
            model: None,
        }
    }
}

impl std::ops::Deref for SpanRec {
    type Target = Body;

    /// The span's body: what converting it reads.
    fn deref(&self) -> &Body {
        debug_assert!(self.body.is_some(), "span {}: its body was let go", self.id);
        self.body.as_deref().unwrap_or(&GONE)
    }
}

impl SpanRec {
    /// A span read whole: its facts and its body.
    fn new(
        trace: Arc<str>,
        id: String,
        parent: Option<String>,
        (start, end): (Micros, Micros),
        service: Option<Arc<str>>,
        body: Body,
    ) -> SpanRec {
        let agent = match &body.role {
            Role::Agent { name: Some(name) } => Some(name.as_str().into()),
            _ => None,
        };
        SpanRec {
            trace,
            id,
            parent,
            start,
            end,
            service,
            agent,
            body: Some(Box::new(body)),
        }
    }

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
    /// Where the passes first met it: the last tie-break of its number.
    met: Met,
}

/// Where the passes of a whole run first meet an item or a statement, so
/// that runs converted a trace at a time order them as one run would: the
/// pass, then the span's times and its place in the input, then the place
/// within the span. Compared field by field; each pass fills the fields its
/// own order sorts by and leaves the others zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Met(u8, Micros, Micros, usize, usize, usize);

/// Something the agent said it believes or no longer believes.
struct Said {
    retract: bool,
    agent: String,
    /// Whether `agent` is asof's default (the resource's `service.name`, or
    /// `agent`) rather than read from an agent span or `--agent`.
    agent_assumed: bool,
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
    origin: String,
    source: &'static str,
    /// Where the passes met it: its place among what was said at one instant.
    met: Met,
}

/// One input in memory: its name as the user gave it, and its text.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// Its name, as the user gave it.
    pub name: &'a str,
    /// Its text.
    pub text: &'a str,
}

/// Reads an OTLP/JSON trace (one request, or JSON Lines of requests); see
/// [`read_named`].
pub fn read(file: &str, text: &str, options: &Options) -> Result<Draft, DatasetErrors> {
    read_all(&[Input { name: file, text }], options)
}

/// [`read_named`] of texts in memory.
pub fn read_all(inputs: &[Input], options: &Options) -> Result<Draft, DatasetErrors> {
    read_named(&in_memory(inputs), options, &mut |_, _| {})
}

/// Texts in memory as named inputs.
fn in_memory<'a>(inputs: &[Input<'a>]) -> Vec<Named<'a>> {
    inputs
        .iter()
        .map(|i| Named {
            name: i.name,
            source: Source::Text(i.text),
        })
        .collect()
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
    let (reader, lines) = read::read_spans(inputs, options.skip_bad_lines, &mut report, progress)?;
    let mut traces: Vec<TraceOut> =
        on_cores(reader.traces(), |t| TraceOut::of(reader.joined(t), options));
    let joined: Vec<read::JoinCounts> = traces.iter().map(|o| o.joined).collect();
    read::summary(&report.input.clone(), &reader, &joined, lines, &mut report)?;
    let merged = merge::Merged::whole(first, &mut traces, report, options, merge::Content::Take);
    Ok(Draft {
        header: merged.header,
        events: merged.events,
        origins: merged.origins,
        report: merged.report,
    })
}

/// What a growing import's new lines changed ([`Growing::advance`]).
pub struct Advance {
    /// The events of the import's log before the first that changed.
    pub keep: usize,
    /// The log from there on.
    pub events: Vec<RawEvent>,
    /// Where each of those events came from.
    pub origins: Vec<Location>,
    /// The header of the whole import.
    pub header: RawHeader,
    /// The summary of the whole import (what `finish` counts from the
    /// dataset aside); its `calls` are the model calls from `calls_from` on.
    pub report: ImportReport,
    /// The model calls before those in `report.calls`: as the last call
    /// gave them.
    pub calls_from: usize,
    /// Beliefs in the whole log.
    pub assertions: usize,
    /// Retractions in the whole log.
    pub retractions: usize,
}

/// An import that grows with its file: each call reads only the complete
/// lines appended since the last (a followed trace, `asof serve`'s
/// archive) and gives the import of everything so far — what
/// [`read`] of the whole text gives, without parsing it again. Each trace's
/// conversion is kept: the spans new lines add to a trace carry it on from
/// where it was (trace.rs), or, when they change what its earlier spans
/// meant, it is converted again from the trace's start.
pub struct Growing {
    name: String,
    options: Options,
    reader: read::Reader,
    /// The pass-1 summary so far (lines read, spans, what was skipped).
    report: ImportReport,
    /// Lines of the file read, and how many were requests.
    lines: usize,
    requests: usize,
    /// Each trace's conversion, by its number; `None` when new lines fell
    /// into it since and it is to be converted from its start.
    converted: Vec<Option<TraceOut>>,
    /// Why traces were converted again from their start, and how often.
    again: Tally,
    /// Why traces were taken up from a checkpoint before the batch that
    /// came last, and how often.
    taken_up: Tally,
    /// The merge of the traces as the last draft left it.
    merged: merge::Merged,
    /// Bytes fed, and where each line fed starts among them (line `n` at
    /// `[n - 1]`).
    bytes: u64,
    line_at: Vec<u64>,
    /// Reads the file's bytes again (from, length): given, spans let their
    /// bodies go once no checkpoint can convert them again, and are read
    /// again from their lines should their trace be converted from its start.
    file: Option<ReadAgain>,
    /// How many times a trace's spans were read again.
    read_again: usize,
    /// Traces retired (design.md §7, "Runs that are over leave memory"),
    /// and why every line was converted again, and how often.
    retired: usize,
    whole: Tally,
}

/// Lines of a file parsed ahead of being fed ([`Growing::parse`]): how many
/// bytes they were, and their requests; `None`: not parsed (feeding them
/// parses them).
pub struct Parsed(Option<(usize, Vec<read::Parse>)>);

/// How many bytes of consecutive lines are read again at once.
const RUN: u64 = 8 << 20;

/// How many spans a trace whose root span is not read yet keeps the bodies
/// of (a run's agent span, exported last, converts it again from its start:
/// kept, its bodies need not be read back from the file). In a debug build,
/// as the tests run, a few: so that tests see both.
const ROOTLESS_KEPT: usize = if cfg!(debug_assertions) { 4 } else { 8192 };

/// How quiet a trace is before a growing import lets it go: lines read
/// since its last, and how far the latest end read is past its own. A trace
/// that looks over (its root span read, no parent missing) is frozen — its
/// spans let go, read again from the file should a new span fall into it —
/// after a second, and may be retired — its log let go, a new span into it
/// then converting every line again — after five seconds; one that does
/// not look over, after a quarter of an hour. (A retry's copies are copies,
/// whatever was let go.) In a debug build, as the tests run, no wait: so
/// that tests freeze and retire traces, and see spans fall into them.
const QUIET_LINES: usize = if cfg!(debug_assertions) { 1 } else { 2 };
const FREEZE: Micros = if cfg!(debug_assertions) { 0 } else { 1_000_000 };
const QUIET: Micros = if cfg!(debug_assertions) { 0 } else { 5_000_000 };
const IDLE: Micros = if cfg!(debug_assertions) {
    0
} else {
    900_000_000
};

/// Reads `len` bytes of a followed file from byte `from` (its lines read
/// before, read again); why not, in a sentence.
pub type ReadAgain = Box<dyn FnMut(u64, u64) -> Result<Vec<u8>, String> + Send>;

impl Growing {
    /// An import of the input `name`, read with `options`, with nothing read yet.
    pub fn new(name: &str, options: &Options) -> Growing {
        Growing {
            name: name.to_owned(),
            options: options.clone(),
            reader: read::Reader::default(),
            report: ImportReport {
                format: "otlp".into(),
                input: name.to_owned(),
                ..ImportReport::default()
            },
            lines: 0,
            requests: 0,
            converted: Vec::new(),
            again: Tally::default(),
            taken_up: Tally::default(),
            merged: merge::Merged::default(),
            bytes: 0,
            line_at: Vec::new(),
            file: None,
            read_again: 0,
            retired: 0,
            whole: Tally::default(),
        }
    }

    /// The same import, able to read the file's lines again (`file`): what
    /// only converting a span reads of it is then let go once no checkpoint
    /// can convert the span again, and read again from the file when its
    /// trace is converted from its start (design.md §7).
    pub fn reading_again(mut self, file: ReadAgain) -> Growing {
        self.file = Some(file);
        self
    }

    /// Reads `lines`, complete lines appended to the file after those
    /// read before (a follow stops on a file rewritten under it).
    pub fn feed(&mut self, lines: &[u8]) -> Result<(), DatasetErrors> {
        self.feed_parsed(lines, Parsed(None))
    }

    /// Parses `lines` and reads their spans (ids, times, role and messages)
    /// — all that feeding them needs of no import state — so that it can be
    /// done on another thread while the lines before them are fed; they are
    /// then fed with it ([`Growing::feed_parsed`]).
    pub fn parse(lines: &[u8]) -> Parsed {
        Parsed(
            std::str::from_utf8(lines)
                .ok()
                .map(|text| (lines.len(), read::read_lines_ahead(text))),
        )
    }

    /// [`Growing::feed`], the lines parsed ahead (by [`Growing::parse`]).
    pub fn feed_parsed(&mut self, lines: &[u8], parsed: Parsed) -> Result<(), DatasetErrors> {
        let new = std::str::from_utf8(lines).map_err(|e| {
            let line = self.lines
                + lines[..e.valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                + 1;
            DatasetErrors(vec![super::error(
                &self.name,
                Some(Location::line(line)),
                "not valid UTF-8",
            )])
        })?;
        let how = read::Lines {
            file: &self.name,
            label: "line",
            skip_bad: self.options.skip_bad_lines,
        };
        self.requests += read::read_lines(
            &mut self.reader,
            new,
            (self.lines, how),
            // What was parsed of other bytes is not theirs: parsed again.
            parsed
                .0
                .filter(|(len, _)| *len == lines.len())
                .map(|(_, p)| p),
            &mut self.report,
        )?;
        self.lines += new.lines().count();
        for line in new.split_inclusive('\n') {
            self.line_at.push(self.bytes);
            self.bytes += line.len() as u64;
        }
        Ok(())
    }

    /// The import of a file with no line yet: the run's header (its
    /// incident named after the file), no agents, topics or events. What a
    /// receiver's store holds before its first request, so that followers
    /// and queries can attach to it at once.
    pub fn nothing_yet(&self) -> Draft {
        let merged = merge::Merged::whole(
            &self.name,
            &mut [],
            self.report.clone(),
            &self.options,
            merge::Content::Keep,
        );
        Draft {
            header: merged.header,
            events: Vec::new(),
            origins: Vec::new(),
            report: merged.report,
        }
    }

    /// The import of every line fed so far: the traces new lines fell into
    /// carried on or converted again, the others as they were, merged.
    pub fn draft(&mut self) -> Result<Draft, DatasetErrors> {
        let merged = self.merged()?;
        // A merge from nothing (a follow's first batch, a restart) is the
        // whole log already.
        let whole = match (merged.keep, merged.calls_from) {
            (0, 0) => merged,
            // The whole log, merged afresh from the traces as they are
            // (rare: a batch the store takes whole); with traces retired,
            // from the file read again.
            _ if self.merged.let_go() => {
                self.convert_again("the whole log was wanted")?;
                self.merged()?
            }
            _ => self
                .merge_into(&mut merge::Merged::default(), &[])?
                .ok_or_else(|| self.failed("a merge from nothing reached what was let go"))?,
        };
        Ok(Draft {
            header: whole.header,
            events: whole.events,
            origins: whole.origins,
            report: whole.report,
        })
    }

    /// What the lines fed since the last call changed: the import's log
    /// from the first event they changed on (the events before it are as
    /// the last call gave them), its header and summary.
    pub fn advance(&mut self) -> Result<Advance, DatasetErrors> {
        let merged = self.merged()?;
        Ok(Advance {
            keep: merged.keep,
            events: merged.events,
            origins: merged.origins,
            header: merged.header,
            report: merged.report,
            calls_from: merged.calls_from,
            assertions: merged.said.0,
            retractions: merged.said.1,
        })
    }

    /// The traces new lines fell into carried on (or converted again), and
    /// merged; the log kept up to date.
    fn merged(&mut self) -> Result<merge::Merge, DatasetErrors> {
        let (late, records) = self.reader.late();
        let retired = |t: &usize| {
            (self.converted.get(*t))
                .is_some_and(|o| o.as_ref().is_some_and(|o| o.retired.is_some()))
        };
        if records {
            self.convert_again("a log record fell into a run let go")?;
        } else if late.iter().any(retired) {
            self.convert_again("a span fell into a run retired")?;
        } else if late.iter().any(|&t| self.reader.had_records(t)) {
            self.convert_again("a span fell into a run let go whose spans log records named")?;
        } else if !late.is_empty() {
            let late = late.to_vec();
            self.thaw(&late)?;
        }
        match self.merged_on()? {
            Some(merged) => Ok(merged),
            None => {
                self.convert_again("a trace changed the log at or before what was let go")?;
                (self.merged_on()?).ok_or_else(|| {
                    self.failed("a conversion from the start reached what was let go")
                })
            }
        }
    }

    /// [`Growing::merged`], or `None` when the batch changed the log at or
    /// before what retired traces left.
    fn merged_on(&mut self) -> Result<Option<merge::Merge>, DatasetErrors> {
        self.converted.resize_with(self.reader.traces(), || None);
        // The traces carried on, each on its own (the merge is what crosses
        // them), on the machine's cores.
        let touched: Vec<usize> = (self.reader.touched().into_iter())
            .filter(|&t| self.converted[t].is_some())
            .collect();
        let carried: Vec<Mutex<Option<TraceOut>>> = (touched.iter())
            .map(|&t| Mutex::new(self.converted[t].take()))
            .collect();
        let (reader, options) = (&self.reader, &self.options);
        let extended = touched.clone();
        let carried_on = on_cores(touched.len(), |i| {
            let mut slot = carried[i].lock().unwrap_or_else(|e| e.into_inner());
            match (slot.as_mut(), reader.unjoined(touched[i])) {
                (Some(out), Some((spans, gidx))) => out.extend(spans, gidx, options),
                (_, _) => Err("log records name the trace"),
            }
        });
        for ((t, out), carried_on) in touched.into_iter().zip(carried).zip(carried_on) {
            match carried_on {
                Ok(why) => {
                    if let Some(why) = why {
                        self.taken_up.bump(why);
                    }
                    self.converted[t] = out.into_inner().unwrap_or_else(|e| e.into_inner());
                }
                Err(why) => self.again.bump(why),
            }
        }
        // Those converted from their start (new, or changed before every
        // checkpoint they keep), their spans' bodies read again first.
        let fresh: Vec<usize> = (0..self.converted.len())
            .filter(|&t| self.converted[t].is_none())
            .collect();
        let let_go: Vec<usize> = (fresh.iter().copied())
            .filter(|&t| self.reader.let_go(t))
            .collect();
        if !let_go.is_empty() {
            self.read_spans_again(&let_go)?;
        }
        let (reader, options) = (&self.reader, &self.options);
        let converted = on_cores(fresh.len(), |i| {
            TraceOut::of_growing(reader.joined(fresh[i]), options)
        });
        for (t, out) in fresh.iter().zip(converted) {
            self.converted[*t] = Some(out);
        }
        // What no checkpoint can convert again lets its bodies go — but a
        // run whose root span is not read yet keeps them while it is short:
        // its agent span, exported last, converts it again from its start
        // (read back from the file, its bodies cost a run's every span
        // parsed again at every run's end).
        if self.file.is_some() {
            for t in extended.into_iter().chain(fresh) {
                if let Some(out) = &self.converted[t] {
                    let waiting = out.root.is_none() && self.reader.spans_of(t) <= ROOTLESS_KEPT;
                    if !waiting {
                        self.reader.let_go_before(t, out.converted_again_from());
                    }
                }
            }
        }
        let rewound: Vec<_> = self
            .converted
            .iter_mut()
            .map(|slot| slot.as_mut().and_then(|out| out.rewound.take()))
            .collect();
        let mut merged = std::mem::take(&mut self.merged);
        let result = self.merge_into(&mut merged, &rewound);
        self.merged = merged;
        result
    }

    /// Lets go what no batch can change any more (design.md §7, "Runs that
    /// are over leave memory"): a trace quiet long enough is frozen (its
    /// spans let go: a span that falls into it later has it taken up again
    /// alone, its spans read again from the file); the log before the first
    /// entry a trace still growing — or frozen but not quiet for [`QUIET`]
    /// yet — could change, and the model calls before its first, are let
    /// go; and a frozen trace quiet that long all of whose entries and calls
    /// were let go is retired — of it only what the summary and header read
    /// is kept (a span that falls into it has every line converted again).
    /// Returns how many traces were retired. Only an import that can read
    /// its file again lets go. Called once the store took a batch: the next
    /// batch's log is written from after what was let go.
    pub fn retire(&mut self) -> usize {
        if self.file.is_none() || self.converted.iter().any(Option::is_none) {
            return 0;
        }
        let mut traces: Vec<TraceOut> = self.converted.drain(..).flatten().collect();
        // Kept: growing, or let go but not quiet long enough to be retired.
        let mut growing: Vec<usize> = Vec::new();
        for (t, out) in traces.iter_mut().enumerate() {
            if out.retired.is_some() {
                continue;
            }
            let (lines, micros) = self.reader.quiet(t);
            let (freeze, retire) = match out.looks_done() {
                true => (FREEZE, QUIET),
                false => (IDLE, IDLE),
            };
            if !out.frozen && lines >= QUIET_LINES && micros >= freeze {
                out.freeze();
                self.reader.freeze(t);
            }
            if !out.frozen || lines < QUIET_LINES || micros < retire {
                growing.push(t);
            }
        }
        // What the traces kept can change: the log from the first entry of
        // theirs (from its start, a conversion may change it), the calls
        // from the first call of theirs.
        let first = (growing.iter())
            .filter_map(|&t| self.merged.entries_of(t))
            .map(|e| e.0)
            .min();
        let first_call = (growing.iter())
            .filter_map(|&t| traces[t].call_span())
            .map(|c| c.0)
            .min();
        let (upto, calls_upto) = self.merged.unchangeable(first, first_call);
        let ts: Vec<usize> = (0..traces.len())
            .filter(|&t| traces[t].frozen && traces[t].retired.is_none())
            .filter(|t| growing.binary_search(t).is_err())
            .filter(|&t| {
                let entries = self.merged.entries_of(t).map(|e| e.1);
                let calls = traces[t].call_span().map(|c| c.1);
                entries.is_none_or(|last| self.merged.place_of(Some(last)) < upto)
                    && calls.is_none_or(|last| self.merged.call_place_of(Some(last)) < calls_upto)
            })
            .collect();
        let given = (self.merged).retire(&traces, &ts, (upto, calls_upto), &self.options);
        for (&t, given) in ts.iter().zip(given) {
            self.reader.retire(t);
            let out = std::mem::replace(&mut traces[t], TraceOut::new());
            traces[t] = out.retired(given);
        }
        self.converted = traces.into_iter().map(Some).collect();
        self.retired += ts.len();
        ts.len()
    }

    /// How many entries of the log, and how many model calls, no later
    /// batch changes once the runs that are over were let go
    /// ([`Growing::retire`]): a batch's [`Advance::keep`] and
    /// [`Advance::calls_from`] are at least these — unless every line is
    /// converted again (`converted_whole` counts it: a span fell into a run
    /// let go), which gives every entry and call again, changed or not.
    pub fn settled(&self) -> (usize, usize) {
        self.merged.settled()
    }

    /// Traces retired so far.
    pub fn retired(&self) -> usize {
        self.retired
    }

    /// Why every line was converted again (a span fell into a frozen run,
    /// a batch reached before what was let go, the whole log wanted), and
    /// how often.
    pub fn converted_whole(&self) -> &Tally {
        &self.whole
    }

    /// An error of the import itself (not of its input), naming the file.
    fn failed(&self, what: &str) -> DatasetErrors {
        DatasetErrors(vec![super::error(
            &self.name,
            None,
            format!("internal: {what}"),
        )])
    }

    /// Converts every line fed again, from the file read again: the import
    /// as a fresh one of the same lines, every trace in it again (the log
    /// is written from its start); said in the tally of whole conversions,
    /// as `why`.
    fn convert_again(&mut self, why: &'static str) -> Result<(), DatasetErrors> {
        let mut fresh = Growing::new(&self.name, &self.options);
        let every: Vec<usize> = (1..=self.line_at.len()).collect();
        let fed = (&self.line_at[..], self.bytes);
        read_back(
            &self.name,
            self.file.as_mut(),
            fed,
            &every,
            |_, bytes: &[u8]| fresh.feed(bytes),
        )?;
        fresh.file = self.file.take();
        if fresh.bytes != self.bytes {
            return Err(DatasetErrors(vec![super::error(
                &self.name,
                None,
                "read again: the file changed under the follow",
            )]));
        }
        fresh.again = std::mem::take(&mut self.again);
        fresh.taken_up = std::mem::take(&mut self.taken_up);
        fresh.read_again = self.read_again;
        fresh.retired = self.retired;
        fresh.whole = std::mem::take(&mut self.whole);
        fresh.whole.bump(why);
        *self = fresh;
        Ok(())
    }

    /// The traces as they are merged by `into` (`rewound[t]`: where trace
    /// `t` was taken up from since `into` last merged it; from its start
    /// past the end of `rewound`), with the summary of what was read.
    fn merge_into(
        &mut self,
        into: &mut merge::Merged,
        rewound: &[Option<trace::Rewind>],
    ) -> Result<Option<merge::Merge>, DatasetErrors> {
        let mut report = self.report.clone();
        let joined: Vec<read::JoinCounts> =
            self.converted.iter().flatten().map(|o| o.joined).collect();
        read::summary(
            &self.name,
            &self.reader,
            &joined,
            self.requests,
            &mut report,
        )?;
        let mut traces: Vec<TraceOut> = self.converted.drain(..).flatten().collect();
        let merged = into.merge(
            &self.name,
            &mut traces,
            rewound,
            report,
            &self.options,
            merge::Content::Keep,
        );
        self.converted = traces.into_iter().map(Some).collect();
        Ok(merged)
    }

    /// The spans of traces `ts` read again from the lines they came in, their
    /// bodies given back: their conversions from their start read them.
    fn read_spans_again(&mut self, ts: &[usize]) -> Result<(), DatasetErrors> {
        let mut again = self.read_traces_again(ts)?;
        for &t in ts {
            (self.reader.bodies_from(t, &mut again))
                .map_err(|why| read_back_error(&self.name, self.lines, &why))?;
        }
        self.read_again += ts.len();
        Ok(())
    }

    /// Takes the frozen traces `ts` up again, a new span having fallen into
    /// each (design.md §7, "Runs that are over leave memory"): their spans
    /// read again from the lines they came in, each converted again from its
    /// start — the log then written from its first entry that changed, as
    /// for any trace converted again.
    fn thaw(&mut self, ts: &[usize]) -> Result<(), DatasetErrors> {
        let mut again = self.read_traces_again(ts)?;
        for &t in ts {
            (self.reader.thaw(t, &mut again))
                .map_err(|why| read_back_error(&self.name, self.lines, &why))?;
            if let Some(slot) = self.converted.get_mut(t) {
                *slot = None;
            }
            self.again.bump("a span fell into a run let go");
        }
        self.read_again += ts.len();
        Ok(())
    }

    /// A reader of the spans of traces `ts` alone, read again from the
    /// lines they came in, in one pass over those lines (a run of lines
    /// read at once, a few megabytes at a time, so that they are parsed on
    /// the machine's cores).
    fn read_traces_again(&mut self, ts: &[usize]) -> Result<read::Reader, DatasetErrors> {
        let mut lines: Vec<usize> = Vec::new();
        let mut ids = Vec::new();
        for &t in ts {
            let (id, of) = self.reader.lines_of(t);
            ids.push(id);
            lines.extend_from_slice(of);
        }
        lines.sort_unstable();
        lines.dedup();
        let mut again = read::Reader::only(ids);
        let mut report = ImportReport::default();
        let how = read::Lines {
            file: &self.name,
            label: "line",
            skip_bad: self.options.skip_bad_lines,
        };
        let fed = (&self.line_at[..], self.bytes);
        read_back(
            &self.name,
            self.file.as_mut(),
            fed,
            &lines,
            |first, bytes: &[u8]| {
                let text = std::str::from_utf8(bytes)
                    .map_err(|_| read_back_error(&self.name, first, "not valid UTF-8"))?;
                read::read_lines(&mut again, text, (first - 1, how), None, &mut report).map(|_| ())
            },
        )?;
        Ok(again)
    }

    /// How many times a trace's spans were read again from the file (it was
    /// converted from its start after its spans had let their bodies go).
    pub fn read_again(&self) -> usize {
        self.read_again
    }

    /// How often a trace was converted again from its start because new
    /// lines changed what its earlier spans meant, by why.
    pub fn converted_again(&self) -> &Tally {
        &self.again
    }

    /// How often a trace was taken up from a checkpoint before the batch
    /// that came last (not from its start) because new lines changed what
    /// the spans after that checkpoint meant, by why.
    pub fn taken_up(&self) -> &Tally {
        &self.taken_up
    }
}

/// Reads `lines` (numbered from 1, ascending, each fed before: where each
/// starts is `fed.0[line - 1]`, the last ends at `fed.1`) back from `file`, a
/// run of consecutive lines a few megabytes at a time, handing each run's
/// bytes to `each` with its first line's number. A line not fed, or a file
/// that cannot give it back, stops it: `NAME:LINE: read again: …`.
fn read_back(
    name: &str,
    file: Option<&mut ReadAgain>,
    (line_at, bytes): (&[u64], u64),
    lines: &[usize],
    mut each: impl FnMut(usize, &[u8]) -> Result<(), DatasetErrors>,
) -> Result<(), DatasetErrors> {
    let first_line = lines.first().copied().unwrap_or(1);
    let Some(file) = file else {
        return Err(read_back_error(
            name,
            first_line,
            "the file cannot be read again",
        ));
    };
    let span = |line: usize| -> Result<(u64, u64), DatasetErrors> {
        let from = (line.checked_sub(1).and_then(|at| line_at.get(at)))
            .ok_or_else(|| read_back_error(name, line, "the line was not fed"))?;
        Ok((*from, line_at.get(line).copied().unwrap_or(bytes)))
    };
    let mut k = 0;
    while k < lines.len() {
        let first = lines[k];
        let (from, mut to) = span(first)?;
        k += 1;
        while k < lines.len() && lines[k] == lines[k - 1] + 1 && to - from < RUN {
            to = span(lines[k])?.1;
            k += 1;
        }
        let run = file(from, to - from).map_err(|why| read_back_error(name, first, &why))?;
        each(first, &run)?;
    }
    Ok(())
}

/// `NAME:LINE: read again: WHY`.
fn read_back_error(name: &str, line: usize, why: &str) -> DatasetErrors {
    DatasetErrors(vec![super::error(
        name,
        Some(Location::line(line)),
        format!("read again: {why}"),
    )])
}

/// `work(i)` for each `i` of `0..n` — a trace each (each is converted on its
/// own: trace.rs), or a group of lines each (each parsed on its own:
/// read.rs) — on the machine's cores when there are several; the results in
/// order.
fn on_cores<R: Send>(n: usize, work: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if n <= 1 || cores <= 1 {
        return (0..n).map(work).collect();
    }
    let done = asof_core::pool::map(
        n,
        cores,
        |i| Ok::<R, std::convert::Infallible>(work(i)),
        |_, _| {},
    );
    // A work that cannot fail: every index is started, and so done.
    debug_assert!(done.iter().all(Option::is_some));
    done.into_iter()
        .flatten()
        .map(|r| match r {
            Ok(r) => r,
            Err(never) => match never {},
        })
        .collect()
}

/// Whether `name` is the tool through which the agent states or drops a belief.
fn is_belief_tool(options: &Options, name: &str) -> bool {
    name == options.belief_tool || name == options.retract_tool
}

/// The import summary's notes on the options that shaped it.
fn notes(options: &Options, report: &mut ImportReport) {
    report.read_with = Some(options.as_flags());
    report.rules_sha256 = options.rules_file.as_ref().map(|(_, sha)| sha.clone());
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

/// Pass 7: the dataset's header — the run named after the file and its
/// first root span (`root`, its name), the agents and topics the events name.
fn header(
    file: &str,
    root: Option<String>,
    agents: Vec<String>,
    topics: Vec<String>,
    options: &Options,
) -> RawHeader {
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
        let (reader, lines) = read::read_spans(&in_memory(inputs), true, report, &mut |_, _| {})?;
        let joined: Vec<read::JoinedTrace> =
            (0..reader.traces()).map(|t| reader.joined(t)).collect();
        let counts: Vec<read::JoinCounts> = joined.iter().map(|j| j.counts()).collect();
        read::summary("trace", &reader, &counts, lines, report)?;
        Ok(joined
            .into_iter()
            .flat_map(|j| j.spans.into_owned())
            .collect())
    }

    const GENAI: &str = include_str!("../../../../../tests/fixtures/otlp/genai.jsonl");

    /// The GenAI fixture's spans, read by pass 1.
    fn genai_spans() -> Vec<SpanRec> {
        read_spans(
            &[Input {
                name: "genai.jsonl",
                text: GENAI,
            }],
            &mut ImportReport::default(),
        )
        .expect("spans")
    }

    /// `spans` (one trace, in input order) converted whole.
    fn converted(spans: &[SpanRec]) -> TraceOut {
        let gidx: Vec<usize> = (0..spans.len()).collect();
        let trace = read::JoinedTrace {
            spans: std::borrow::Cow::Borrowed(spans),
            gidx: std::borrow::Cow::Borrowed(&gidx),
            report: ImportReport::default(),
            read: 0,
            again: 0,
        };
        TraceOut::of(trace, &Options::default())
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
    fn the_runs_shape_orders_calls_by_start() {
        let spans = genai_spans();
        let out = converted(&spans);
        assert!(!out.calls.is_empty() && out.counts.tool_spans > 0);
        let keys: Vec<_> = out.calls.iter().map(|c| c.key).collect();
        assert!(keys.is_sorted());
        assert_eq!(out.in_front.len(), out.calls.len(), "an input per call");
    }

    #[test]
    fn evidence_is_numbered_in_recorded_order_and_each_call_sees_its_input() {
        use said::Numbers;
        let mut traces = [converted(&genai_spans())];
        let mut merged = merge::Merged::default();
        merged.merge(
            "genai.jsonl",
            &mut traces,
            &[],
            ImportReport::default(),
            &Options::default(),
            merge::Content::Keep,
        );
        let order = merged.ranked();
        let recorded: Vec<Micros> = order
            .iter()
            .map(|&(t, n)| traces[t].items[n].recorded)
            .collect();
        assert!(recorded.is_sorted());
        let (t, n) = order[0];
        assert_eq!(merged.id(t, n), "T1");
        assert_eq!(merged.item("T1"), Some(order[0]));
        let last = order.len();
        assert_eq!(merged.item(&format!("T{last}")), order.last().copied());
        for unknown in [
            "T0",
            "T01",
            "T+1",
            "T",
            "t1",
            "T1x",
            &format!("T{}", last + 1),
        ] {
            assert_eq!(merged.item(unknown), None, "{unknown}");
        }
        assert_eq!(traces[0].in_front.len(), traces[0].calls.len());
        assert!(traces[0].in_front.iter().any(|items| !items.is_empty()));
    }

    #[test]
    fn the_log_is_in_recorded_order_with_evidence_first_at_an_instant() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../datasets/sre-agent.otlp.jsonl"
        ))
        .expect("the bundled trace");
        let draft = read("sre-agent.otlp.jsonl", &text, &Options::default()).expect("read");
        let (parsed, _, _) = crate::import::finish("sre-agent", draft).expect("valid");
        let keys: Vec<(Micros, bool)> = parsed
            .dataset
            .events
            .iter()
            .map(|e| {
                (
                    e.recorded_at(),
                    e.kind() != asof_core::model::EventKind::Evidence,
                )
            })
            .collect();
        assert!(keys.iter().any(|k| k.1) && keys.iter().any(|k| !k.1));
        // Evidence and what was said are interleaved, not one block after
        // the other.
        let first_said = keys.iter().position(|k| k.1).expect("something said");
        assert!(keys[first_said..].iter().any(|k| !k.1), "{keys:?}");
        assert!(keys.is_sorted(), "{keys:?}");
    }

    /// A span of trace `t`, started and ended at `start`/`end` seconds.
    fn span(id: &str, start: i64, end: i64, role: Role) -> SpanRec {
        let body = Body::bare(id.into(), role);
        SpanRec::new(
            "t".into(),
            id.into(),
            None,
            (start * 1_000_000, end * 1_000_000),
            None,
            body,
        )
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
            let gathered = converted(&spans);
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
        if let Some(Body {
            role: Role::Call { input, .. },
            ..
        }) = call.body.as_deref_mut()
        {
            for (m, content) in input.iter_mut().zip(["node-5: NotReady", "node-6: Ready"]) {
                Arc::make_mut(m).parts = vec![Part::ToolResult {
                    id: None,
                    content: content.into(),
                }];
            }
        }
        let spans = vec![fast, slow, call];
        let gathered = converted(&spans);
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
        let spans = vec![call("c1", 10), call("c2", 20)];
        let gathered = converted(&spans);
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
        if let Some(body) = call.body.as_deref_mut() {
            body.mcp_session = Some("sess-7".into());
        }
        assert_eq!(call.locator(), "trace t span m mcp session sess-7");
        let spans = vec![call];
        let gathered = converted(&spans);
        assert!(gathered.items[0].locator.ends_with("mcp session sess-7"));
    }

    /// `spans[..split]` converted, then carried on by `spans[split..]`:
    /// `Err(why)` when they change what the earlier spans meant (and, with
    /// no checkpoint after the batch from nothing, the trace is to be
    /// converted again from its start).
    fn carried(spans: &[SpanRec], split: usize) -> Result<(), &'static str> {
        let mut out = converted(&spans[..split]);
        let gidx: Vec<usize> = (0..spans.len()).collect();
        match out.extend(spans, &gidx, &Options::default()) {
            Ok(None) => Ok(()),
            Ok(Some(why)) => panic!("taken up from a checkpoint there is none of: {why}"),
            Err(why) => Err(why),
        }
    }

    /// A model call at `at` whose output is `parts` and whose input is `input`.
    fn call_with(id: &str, at: i64, input: Vec<Part>, output: Vec<Part>) -> SpanRec {
        let msg = |role: &str, parts: Vec<Part>| {
            Arc::new(Msg {
                role: role.into(),
                name: None,
                parts,
            })
        };
        span(
            id,
            at,
            at + 1,
            Role::Call {
                dialect: dialect::Dialect::GenAi,
                input: vec![msg("tool", input)],
                output: vec![msg("assistant", output)],
            },
        )
    }

    /// Spans that arrive after what they change the meaning of make the trace
    /// be taken up before them (here, with only the batch from nothing
    /// before, from its start), each saying why; in the order they
    /// happened, they carry it on.
    #[test]
    fn a_batch_that_changes_what_earlier_spans_meant_is_refused() {
        let result = |id: Option<&str>| Part::ToolResult {
            id: id.map(str::to_owned),
            content: "ok".into(),
        };
        let emit = |id: &str, name: &str| Part::ToolCall {
            id: Some(id.into()),
            name: name.into(),
            args: r#"{"topic":"t","claim":"c"}"#.into(),
        };
        // A tool read by a call that started after it ended.
        let spans = [
            call_with("c", 30, vec![result(None)], vec![]),
            tool("a", 10, None, "ok"),
        ];
        assert_eq!(
            carried(&spans, 1),
            Err("a tool ends before an earlier model call started")
        );
        let spans = [
            tool("a", 10, None, "ok"),
            call_with("c", 30, vec![result(None)], vec![]),
        ];
        assert_eq!(carried(&spans, 1), Ok(()));
        // What a retrieval fetched before a call read before it.
        let retrieval = span(
            "r",
            5,
            6,
            Role::Retrieval {
                documents: vec![dialect::Record {
                    id: None,
                    content: "doc".into(),
                    score: None,
                }],
            },
        );
        let spans = [call_with("c", 10, vec![], vec![]), retrieval];
        assert_eq!(
            carried(&spans, 1),
            Err("a search ends before an earlier model call started")
        );
        // A result shown before the call that emitted it.
        let spans = [
            call_with("c1", 10, vec![result(Some("x9"))], vec![]),
            call_with("c2", 20, vec![], vec![emit("x9", "query")]),
        ];
        assert_eq!(
            carried(&spans, 1),
            Err("a model call emits a tool call an earlier input showed")
        );
        // A belief-tool span read alone, then the call whose output shows it.
        let belief = span(
            "b",
            5,
            6,
            Role::Tool {
                name: "record_belief".into(),
                call_id: Some("b1".into()),
                args: Some(r#"{"topic":"t","claim":"c"}"#.into()),
                result: None,
            },
        );
        let spans = [
            belief,
            call_with("c", 10, vec![], vec![emit("b1", "record_belief")]),
        ];
        assert_eq!(
            carried(&spans, 1),
            Err("a model call shows a belief-tool call read alone before")
        );
        // The agent span above a call, after the call.
        let mut under = call_with("c", 10, vec![], vec![]);
        under.parent = Some("ag".into());
        let agent = span(
            "ag",
            0,
            50,
            Role::Agent {
                name: Some("triage".into()),
            },
        );
        assert_eq!(
            carried(&[under.clone(), agent], 1),
            Err("an agent span arrived after spans under it")
        );
        // A parent that names no agent changes nothing.
        let parent = span("ag", 0, 50, Role::Other);
        assert_eq!(carried(&[under, parent], 1), Ok(()));
    }

    #[test]
    fn the_header_names_the_run_after_its_file_and_root_span() {
        let spans = genai_spans();
        let h = header(
            "/tmp/x.otlp.jsonl",
            converted(&spans).root.map(|(_, _, name)| name),
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
