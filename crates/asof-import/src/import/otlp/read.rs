//! Pass 1 of `import otlp` (design.md §7): every input read into spans,
//! with the log records that name a span joined to it.
//!
//! JSON Lines are read a line at a time and each line is turned into spans at
//! once; a model call's messages are kept once however many later calls
//! repeat them ([`Interner`]): real traces grow with the square of their steps
//! (each call repeats the whole history), the memory an import needs grows
//! with what was said.

use super::dialect::{self, Msg, Msgs, Role};
use super::{Body, EVALUATION, MAX_BYTES, SpanRec};
use crate::import::{ImportReport, Skipped, error};
use asof_core::dataset::{DatasetErrors, Location};
use asof_core::time;
use asof_otlp as wire;
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use serde_json::Value;
use std::borrow::Cow;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, Read};
use std::path::Path;
use std::sync::Arc;

/// Where an input's text comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// Text in memory (a followed file's complete lines, a test's fixture).
    Text(&'a str),
    /// A file, read a line at a time.
    File(&'a Path),
}

/// One input: its name as the user gave it, and where its text comes from.
#[derive(Debug, Clone, Copy)]
pub struct Named<'a> {
    /// Its name, as the user gave it.
    pub name: &'a str,
    /// Where its text comes from.
    pub source: Source<'a>,
}

/// Each distinct message once: a later call's history shares the messages
/// an earlier call read. A message nothing else holds any longer (the spans
/// that read it let their bodies go) is let go too, whenever the set has
/// doubled since it was last looked over or spans as many as a quarter of
/// the messages it holds have let their bodies go.
#[derive(Default)]
pub(super) struct Interner {
    known: HashSet<Arc<Msg>>,
    /// How many it held when last looked over.
    looked: usize,
}

impl Interner {
    fn one(&mut self, m: Arc<Msg>) -> Arc<Msg> {
        if let Some(known) = self.known.get(&*m) {
            return known.clone();
        }
        self.known.insert(m.clone());
        if self.known.len() >= 2 * self.looked.max(1 << 12) {
            self.look_over();
        }
        m
    }

    /// Lets go the messages nothing else holds.
    fn look_over(&mut self) {
        self.known.retain(|m| Arc::strong_count(m) > 1);
        self.looked = self.known.len();
    }

    fn all(&mut self, messages: Msgs) -> Msgs {
        messages.into_iter().map(|m| self.one(m)).collect()
    }

    fn role(&mut self, role: Role) -> Role {
        match role {
            Role::Call {
                dialect,
                input,
                output,
            } => Role::Call {
                dialect,
                input: self.all(input),
                output: self.all(output),
            },
            other => other,
        }
    }
}

/// The inputs of the latest few model calls, as text without the closing
/// `]` and as messages: a call whose input text starts with one of them and
/// goes on with `,` only adds messages, and only those are parsed. Exact
/// (byte for byte), so a call that rewrote its history is read whole.
#[derive(Default)]
pub(super) struct Histories {
    recent: std::collections::VecDeque<(String, Msgs)>,
    interner: Interner,
}

/// How many earlier inputs are kept to be continued (several agents may
/// interleave their calls).
const HISTORIES: usize = 4;

impl dialect::History for Histories {
    fn read(&mut self, text: &str) -> Result<Msgs, String> {
        let open = text.trim_end().strip_suffix(']').unwrap_or(text).trim_end();
        let mut found: Option<(usize, Msgs)> = None;
        for (k, (before, messages)) in self.recent.iter().enumerate() {
            if open == before {
                found = Some((k, messages.clone()));
                break;
            }
            if open.len() > before.len()
                && open.as_bytes().starts_with(before.as_bytes())
                && open[before.len()..].trim_start().starts_with(',')
            {
                let rest = open[before.len()..].trim_start();
                let added = dialect::messages_text(&format!("[{}]", &rest[1..]))?;
                let mut all = messages.clone();
                all.extend(self.interner.all(added.into_iter().map(Arc::new).collect()));
                found = Some((k, all));
                break;
            }
        }
        let messages = match found {
            Some((k, messages)) => {
                self.recent.remove(k);
                messages
            }
            None => self.interner.all(
                dialect::messages_text(text)?
                    .into_iter()
                    .map(Arc::new)
                    .collect(),
            ),
        };
        self.recent.push_front((open.to_owned(), messages.clone()));
        self.recent.truncate(HISTORIES);
        Ok(messages)
    }
}

/// Pass 1: every span of every input, with the log records that name it
/// joined to it and its ids, times and role read (what cannot be read is
/// skipped); a span exported twice (an exporter's retry) is one span.
/// `progress` hears (bytes read, bytes in all) after each line.
pub(super) fn read_spans(
    inputs: &[Named],
    skip_bad: bool,
    report: &mut ImportReport,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(Reader, usize), DatasetErrors> {
    let mut reader = Reader::default();
    let total: u64 = inputs
        .iter()
        .map(|i| match i.source {
            Source::Text(text) => text.len() as u64,
            Source::File(path) => std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
        })
        .sum();
    let mut done = 0u64;
    let mut lines = 0usize;
    for input in inputs {
        let label = if inputs.len() > 1 {
            format!("{} line", input.name)
        } else {
            "line".to_owned()
        };
        let mut each =
            |_: usize, request: Request, report: &mut ImportReport| reader.add(request, report);
        let how = Lines {
            file: input.name,
            label: &label,
            skip_bad,
        };
        lines += match input.source {
            Source::Text(text) => {
                let n = text_requests(how, text, report, &mut each)?;
                done += text.len() as u64;
                progress(done, total);
                n
            }
            Source::File(path) => {
                let base = done;
                file_requests(how, path, report, &mut each, &mut |read| {
                    done = base + read;
                    progress(done, total);
                })?
            }
        };
    }
    Ok((reader, lines))
}

/// The JSON Lines in `text`, read into `reader`: line numbers from
/// `before + 1` (a growing import reads a file's new lines only). Returns
/// how many were requests.
pub(super) fn read_lines(
    reader: &mut Reader,
    text: &str,
    (before, how): (usize, Lines),
    parsed: Option<Vec<Parse>>,
    report: &mut ImportReport,
) -> Result<usize, DatasetErrors> {
    let mut each = |n: usize, request: Request, report: &mut ImportReport| {
        reader.line = n;
        reader.add(request, report)
    };
    Ok(json_lines(text, (before, how), parsed, report, &mut each)?.0)
}

/// A line's request, or why it is not one.
pub(super) type Parse = Result<Request, String>;

/// A request as a line gives it: parsed, or parsed with its spans read too
/// ([`read_request`], on the thread that parsed it, while the lines before it
/// are fed).
pub(super) enum Request {
    Parsed(wire::Request),
    Read(ReadRequest),
}

/// A request whose spans were read ahead: each span as [`span_rec`] read it,
/// with what reading it said (in order), and the request's log records as
/// they came (joining them needs the spans read before).
pub(super) struct ReadRequest {
    spans: Vec<(Option<SpanRec>, Vec<Skipped>)>,
    logs: Option<Vec<wire::ResourceLogs>>,
    otlp: bool,
}

impl Request {
    fn is_otlp(&self) -> bool {
        match self {
            Request::Parsed(request) => request.is_otlp(),
            Request::Read(request) => request.otlp,
        }
    }
}

/// `request`'s spans read, with `histories` (which only saves parsing again
/// the messages an earlier call sent: what is read is the same whatever it
/// holds) — where the request is fed, or on another thread ahead of it.
fn read_request(request: wire::Request, histories: &mut Histories) -> ReadRequest {
    let otlp = request.is_otlp();
    let mut said = Vec::new();
    let mut spans = Vec::new();
    for rs in request.resource_spans.into_iter().flatten() {
        let service: Option<Arc<str>> = service_of(rs.resource).map(Arc::from);
        for scope in rs.scope_spans.into_iter().chain(rs.library_spans) {
            for span in scope.spans {
                let rec = span_rec(service.clone(), span, &mut said, histories);
                spans.push((rec, std::mem::take(&mut said)));
            }
        }
    }
    ReadRequest {
        spans,
        logs: request.resource_logs,
        otlp,
    }
}

/// Each non-blank line of `text` parsed and its spans read ([`read_request`]),
/// in order: all that feeding them needs of no import state.
pub(super) fn read_lines_ahead(text: &str) -> Vec<Parse> {
    read_each_ahead(non_blank(text).map(|(_, line)| line))
}

/// `lines` parsed and their spans read, in order.
fn read_each_ahead<'t>(lines: impl Iterator<Item = &'t str>) -> Vec<Parse> {
    let mut histories = Histories::default();
    lines
        .map(|line| parse(line).map(|r| Request::Read(read_request(r, &mut histories))))
        .collect()
}

/// Each non-blank line of `text` parsed, in order; when `text` is large, on
/// the machine's cores a group of lines at a time, their spans read there
/// too.
fn parse_lines(text: &str) -> Vec<Parse> {
    let lines: Vec<&str> = non_blank(text).map(|(_, line)| line).collect();
    if text.len() < ON_CORES {
        return lines
            .iter()
            .map(|line| parse(line).map(Request::Parsed))
            .collect();
    }
    let groups: Vec<&[&str]> = lines.chunks(GROUP).collect();
    let parsed = super::on_cores(groups.len(), |g| read_each_ahead(groups[g].iter().copied()));
    parsed.into_iter().flatten().collect()
}

/// The non-blank lines of `text`, each with its index among all its lines.
fn non_blank(text: &str) -> impl Iterator<Item = (usize, &str)> {
    (text.lines().enumerate()).filter(|(_, line)| !line.trim().is_empty())
}

/// Each non-blank line of `text` through [`one_line`], numbered from
/// `before + 1`: how many were requests, and what the first line that was
/// not one was instead.
/// `parsed`: the lines' requests parsed ahead ([`read_lines_ahead`]), when they
/// were.
fn json_lines(
    text: &str,
    (before, how): (usize, Lines),
    parsed: Option<Vec<Parse>>,
    report: &mut ImportReport,
    each: &mut dyn FnMut(usize, Request, &mut ImportReport),
) -> Result<(usize, Option<String>), DatasetErrors> {
    let (mut requests, mut first_error) = (0usize, None);
    let mut take = |(i, line): (usize, &str), parsed| {
        let n = before + i + 1;
        one_line(
            n,
            line,
            parsed,
            how,
            report,
            each,
            &mut requests,
            &mut first_error,
        )
    };
    // Lines parsed ahead are those of `text` (else they are parsed here:
    // never a line skipped).
    let parsed = match parsed {
        Some(parsed) if parsed.len() == non_blank(text).count() => parsed,
        _ => parse_lines(text),
    };
    for (line, parsed) in non_blank(text).zip(parsed) {
        take(line, parsed)?;
    }
    Ok((requests, first_error))
}

/// How many bytes of lines are parsed on the machine's cores rather than
/// one after the other, and how many lines each core takes at a time.
const ON_CORES: usize = 4 << 20;
const GROUP: usize = 16;

/// A line's request, or why it is not one.
fn parse(line: &str) -> Result<wire::Request, String> {
    serde_json::from_str::<wire::Request>(line).map_err(|e| describe(line, &e))
}

/// Where a span known only from its log records is placed among the spans
/// read: after every one of them, in the order of its first record.
const FROM_RECORDS: usize = 1 << 48;

/// One trace's spans with its log records joined to them: what passes 2–5
/// read. Lent, not copied, when no record names the trace.
pub(super) struct JoinedTrace<'r> {
    pub(super) spans: Cow<'r, [SpanRec]>,
    /// Each span's place in the whole input (a span known only from its
    /// records comes after every span read).
    pub(super) gidx: Cow<'r, [usize]>,
    /// What joining said (records that could not be read, spans not in the
    /// input).
    pub(super) report: ImportReport,
    /// Records joined, and copies of records left out.
    pub(super) read: usize,
    pub(super) again: usize,
}

impl JoinedTrace<'_> {
    /// What joining counted.
    pub(super) fn counts(&self) -> JoinCounts {
        JoinCounts {
            read: self.read,
            again: self.again,
            spans: self.spans.len(),
        }
    }
}

/// What joining a trace's records to its spans counted.
#[derive(Clone, Copy, Default)]
pub(super) struct JoinCounts {
    /// Records joined, and copies of records left out.
    pub(super) read: usize,
    pub(super) again: usize,
    /// Spans, those known only from their records included.
    pub(super) spans: usize,
}

/// Says what pass 1 read of the whole input — lines, records, copies,
/// spans, traces — and refuses a read with no span. `joined` says what
/// joining each trace counted.
pub(super) fn summary(
    name: &str,
    reader: &Reader,
    joined: &[JoinCounts],
    lines: usize,
    report: &mut ImportReport,
) -> Result<(), DatasetErrors> {
    let records = reader.records;
    if records > 0 {
        report.read.add("log records", records);
        report.read.add(
            "log records joined to a span",
            joined.iter().map(|j| j.read).sum(),
        );
        let again: usize = joined.iter().map(|j| j.again).sum();
        if again > 0 {
            report.skipped.push(Skipped {
                location: "log records".into(),
                reason: format!(
                    "{again} exported again (identical record): the copies are not read"
                ),
            });
        }
        if reader.unplaced > 0 {
            report.skipped.push(Skipped {
                location: "log records".into(),
                reason: format!(
                    "{} name no span (no traceId/spanId): not joined to any model call, not read",
                    reader.unplaced
                ),
            });
        }
    }
    report.read.add("lines", lines);
    for id in &reader.copies {
        report.skipped.push(Skipped {
            location: format!("span {id}"),
            reason: "exported again (same trace and span id): the copy is not read".into(),
        });
    }
    report.read.add("spans", report.records);
    let traces = joined.iter().filter(|j| j.spans > 0).count();
    if traces == 0 {
        let message = if records > 0 {
            format!(
                "holds {records} log record{} but no span, and no record names the span it belongs to (traceId and spanId): export the trace's spans as well, or logs written inside the model call's span",
                if records == 1 { "" } else { "s" }
            )
        } else {
            format!("holds no readable span ({} read)", report.records)
        };
        return Err(DatasetErrors(vec![error(name, None, message)]));
    }
    report.read.add("traces", traces);
    Ok(())
}

/// What the requests hold as they are read: each trace's spans with their
/// roles read, and its log records waiting to be joined to them.
#[derive(Default)]
pub(super) struct Reader {
    traces: Vec<Trace>,
    /// Each trace's number, by id.
    trace_at: HashMap<String, usize>,
    /// Spans read (the place of the next one).
    spans: usize,
    /// Log records read, and those naming no span.
    records: usize,
    unplaced: usize,
    /// Each span read, by its trace's number and its id (16 hex digits, as
    /// `wire::id` writes it, held as the number they write): a copy exported
    /// again is left out as it is read, and its id kept to be said.
    seen: HashSet<SpanKey>,
    copies: Vec<String>,
    /// The calls' inputs so far, and every distinct message once.
    histories: Histories,
    /// Whether a span or a record fell into each trace since [`Reader::touched`].
    touched: Vec<bool>,
    /// The line being read (a growing import's: 1 for its first).
    line: usize,
    /// The traces read (their spans read again), when not every one.
    only: Option<HashSet<Arc<str>>>,
    /// Spans that let their bodies go since the messages were looked over.
    let_go_since: usize,
    /// The latest end of any span read.
    latest_end: time::Micros,
    /// The frozen traces a new span fell into since the reader began, and
    /// whether a log record fell into one.
    late: Vec<usize>,
    late_records: bool,
}

/// One trace as read: its spans, each span's place in the input, and the
/// log records naming it, each with its place among the records.
struct Trace {
    id: Arc<str>,
    spans: Vec<SpanRec>,
    gidx: Vec<usize>,
    logs: Vec<(usize, Log)>,
    /// The lines its spans were read from, in order (a growing import's).
    lines: Vec<usize>,
    /// Its spans before this one have let their bodies go.
    let_go: usize,
    /// The latest end of its spans.
    end: time::Micros,
    /// Frozen: its spans given up (a growing import's, [`Reader::freeze`]),
    /// and the ids they had (hex ones, sorted; others stay in `seen`): a
    /// copy exported again is still a copy.
    frozen: bool,
    frozen_ids: Box<[u64]>,
    /// Log records named it before it froze (its spans read again would
    /// lack them: [`Reader::thaw`] does not take it up).
    had_records: bool,
}

/// Why spans read again cannot be taken: `then` were read before, `now`
/// read again, not the same.
fn not_the_same(trace: &str, then: usize, now: usize) -> String {
    format!(
        "trace {trace}: its spans read again are not those read before ({then} then, {now} now): the file changed under the follow"
    )
}

impl Trace {
    /// Whether the span `key` names was read before the trace froze.
    fn read_before(&self, key: &SpanKey) -> bool {
        matches!(key, SpanKey::Hex(_, n) if self.frozen_ids.binary_search(n).is_ok())
    }
}

/// A log record, read as what it says.
#[derive(Clone)]
struct Log {
    span: String,
    service: Option<String>,
    time: Option<time::Micros>,
    item: Item,
    /// Two records alike in span, name, time and content are one (an
    /// exporter's retry).
    key: u64,
}

/// What a log record says.
#[derive(Clone)]
enum Item {
    /// A message of the GenAI event form: the call's input, or its output.
    Input(Arc<Msg>),
    Output(Arc<Msg>),
    /// `gen_ai.client.inference.operation.details`: input and output.
    Details(Msgs, Msgs),
    /// An `asof.*` or evaluation event, kept as a span event.
    Kept(wire::SpanEvent),
    /// A message that cannot be read, and why.
    Unreadable(String),
    /// Anything else (an application's own log line).
    Other,
}

/// The records joined to one span.
#[derive(Default)]
struct Joined {
    input: Msgs,
    output: Msgs,
    details: Option<(Msgs, Msgs)>,
    kept: Vec<wire::SpanEvent>,
    unreadable: Option<String>,
    times: Option<(time::Micros, time::Micros)>,
    service: Option<String>,
}

impl Joined {
    fn take(&mut self, log: Log) {
        if let Some(t) = log.time {
            self.times = Some(match self.times {
                Some((lo, hi)) => (lo.min(t), hi.max(t)),
                None => (t, t),
            });
        }
        if self.service.is_none() {
            self.service = log.service;
        }
        match log.item {
            Item::Input(m) => self.input.push(m),
            Item::Output(m) => self.output.push(m),
            Item::Details(i, o) => {
                if self.details.is_none() {
                    self.details = Some((i, o));
                }
            }
            Item::Kept(e) => self.kept.push(e),
            Item::Unreadable(why) => {
                self.unreadable.get_or_insert(why);
            }
            Item::Other => {}
        }
    }

    fn says_something(&self) -> bool {
        !self.input.is_empty() || !self.output.is_empty() || self.details.is_some()
    }

    /// The call these records describe, when they hold messages.
    fn role(&mut self) -> Option<Role> {
        if let Some((input, output)) = self.details.take() {
            return Some(Role::Call {
                dialect: dialect::Dialect::GenAi,
                input,
                output,
            });
        }
        (!self.input.is_empty() || !self.output.is_empty()).then(|| Role::Call {
            dialect: dialect::Dialect::GenAiEvents,
            input: std::mem::take(&mut self.input),
            output: std::mem::take(&mut self.output),
        })
    }
}

/// A span's key among the spans read: its trace's number and its id, the
/// number its 16 hex digits write (`wire::id` gives no other form; any other
/// is kept as written).
#[derive(PartialEq, Eq, Hash)]
enum SpanKey {
    Hex(usize, u64),
    Other(usize, String),
}

impl SpanKey {
    fn of(t: usize, id: &str) -> SpanKey {
        let hex = id.len() == 16 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        match u64::from_str_radix(id, 16) {
            Ok(n) if hex => SpanKey::Hex(t, n),
            _ => SpanKey::Other(t, id.to_owned()),
        }
    }
}

fn hash_of(what: &impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    what.hash(&mut h);
    h.finish()
}

impl Reader {
    fn add(&mut self, request: Request, report: &mut ImportReport) {
        let read = match request {
            Request::Parsed(request) => read_request(request, &mut self.histories),
            Request::Read(read) => read,
        };
        for (rec, skipped) in read.spans {
            report.records += 1;
            report.skipped.extend(skipped);
            self.add_span(rec);
        }
        // Spans read again are read without their log records: a trace
        // that records name keeps its spans' bodies.
        let logs = match self.only {
            Some(_) => None,
            None => read.logs,
        };
        for rl in logs.into_iter().flatten() {
            let service = service_of(rl.resource);
            for scope in rl.scope_logs {
                for record in scope.log_records {
                    let at = self.records;
                    self.records += 1;
                    let trace = wire::id(&record.trace_id, 16);
                    let span = wire::id(&record.span_id, 8);
                    let event = event_of(record);
                    let time = wire::nanos_to_micros(&event.time);
                    let shared = |m: Msg, interner: &mut Interner| interner.one(Arc::new(m));
                    let interner = &mut self.histories.interner;
                    let item = if dialect::is_details(&event.name) {
                        match dialect::operation_details(&event) {
                            Ok((i, o)) => Item::Details(
                                interner.all(i.into_iter().map(Arc::new).collect()),
                                interner.all(o.into_iter().map(Arc::new).collect()),
                            ),
                            Err(why) => Item::Unreadable(why),
                        }
                    } else {
                        match dialect::event_message(&event) {
                            Ok(Some(dialect::Said::Input(m))) => Item::Input(shared(m, interner)),
                            Ok(Some(dialect::Said::Output(m))) => Item::Output(shared(m, interner)),
                            Ok(None)
                                if event.name.starts_with("asof.") || event.name == EVALUATION =>
                            {
                                Item::Kept(event.clone())
                            }
                            Ok(None) => Item::Other,
                            Err(why) => Item::Unreadable(why),
                        }
                    };
                    let content = match &item {
                        Item::Input(m) | Item::Output(m) => hash_of(m),
                        Item::Details(i, o) => hash_of(&(i, o)),
                        _ => hash_of(&format!("{:?}", event.attributes)),
                    };
                    let key = hash_of(&(&event.name, event.time.to_string(), content));
                    let (Some(trace), Some(span)) = (trace, span) else {
                        self.unplaced += 1;
                        continue;
                    };
                    let t = self.trace_of(&trace);
                    self.late_records |= self.traces[t].frozen;
                    self.traces[t].logs.push((
                        at,
                        Log {
                            span,
                            service: service.clone(),
                            time,
                            item,
                            key,
                        },
                    ));
                }
            }
        }
    }

    /// A span read (`None`: one that could not be read), unless it is a
    /// copy of one read before or of a trace not read again.
    fn add_span(&mut self, rec: Option<SpanRec>) {
        let Some(mut rec) = rec else { return };
        if self
            .only
            .as_ref()
            .is_some_and(|only| !only.contains(&rec.trace))
        {
            return;
        }
        let t = self.trace_of(&rec.trace);
        let key = SpanKey::of(t, &rec.id);
        if self.traces[t].read_before(&key) || !self.seen.insert(key) {
            self.copies.push(rec.id);
            return;
        }
        if self.traces[t].frozen && !self.late.contains(&t) {
            self.late.push(t);
        }
        if let Some(body) = rec.body.as_deref_mut() {
            // Messages read on another thread are shared with those read
            // here from now on.
            let role = std::mem::replace(&mut body.role, Role::Other);
            body.role = self.histories.interner.role(role);
        }
        let trace = &mut self.traces[t];
        // One copy of the trace's id, shared by its spans.
        rec.trace = trace.id.clone();
        trace.end = trace.end.max(rec.end);
        self.latest_end = self.latest_end.max(rec.end);
        trace.spans.push(rec);
        trace.gidx.push(self.spans);
        if trace.lines.last() != Some(&self.line) {
            trace.lines.push(self.line);
        }
        self.spans += 1;
    }

    /// The number of trace `id`, a new one when it is new; marked touched.
    fn trace_of(&mut self, id: &str) -> usize {
        let t = match self.trace_at.get(id) {
            Some(&t) => t,
            None => {
                let t = self.traces.len();
                self.trace_at.insert(id.to_owned(), t);
                self.traces.push(Trace {
                    id: Arc::from(id),
                    spans: Vec::new(),
                    gidx: Vec::new(),
                    logs: Vec::new(),
                    lines: Vec::new(),
                    let_go: 0,
                    end: time::Micros::MIN,
                    frozen: false,
                    frozen_ids: Box::default(),
                    had_records: false,
                });
                self.touched.push(false);
                t
            }
        };
        self.touched[t] = true;
        t
    }

    /// How many traces have been read.
    pub(super) fn traces(&self) -> usize {
        self.traces.len()
    }

    /// A reader of the spans of the traces `ids` alone (read again, their
    /// bodies wanted back).
    pub(super) fn only(ids: impl IntoIterator<Item = Arc<str>>) -> Reader {
        Reader {
            only: Some(ids.into_iter().collect()),
            ..Reader::default()
        }
    }

    /// Trace `t`'s id, and the lines its spans were read from.
    pub(super) fn lines_of(&self, t: usize) -> (Arc<str>, &[usize]) {
        let trace = &self.traces[t];
        (trace.id.clone(), &trace.lines)
    }

    /// How long trace `t` has been quiet: the lines read since its last, and
    /// how far the latest end read is past its own latest end.
    pub(super) fn quiet(&self, t: usize) -> (usize, time::Micros) {
        let trace = &self.traces[t];
        let lines = self
            .line
            .saturating_sub(trace.lines.last().copied().unwrap_or(0));
        (lines, self.latest_end.saturating_sub(trace.end))
    }

    /// The frozen traces a new span fell into since the reader began (a
    /// copy of a span read before is not new), and whether a log record
    /// fell into one.
    pub(super) fn late(&self) -> (&[usize], bool) {
        (&self.late, self.late_records)
    }

    /// Whether log records named trace `t` before it froze.
    pub(super) fn had_records(&self, t: usize) -> bool {
        self.traces[t].had_records
    }

    /// Freezes trace `t`: its spans and records given up, their ids kept as
    /// numbers (a span that falls into it later is said by
    /// [`Reader::late`], unless it is a copy), and where they were read
    /// (where [`Reader::thaw`] reads them again).
    pub(super) fn freeze(&mut self, t: usize) {
        let trace = &mut self.traces[t];
        let spans = std::mem::take(&mut trace.spans);
        trace.had_records |= !trace.logs.is_empty();
        trace.logs = Vec::new();
        trace.frozen = true;
        self.let_go_since += spans
            .len()
            .saturating_sub(std::mem::take(&mut trace.let_go));
        let mut ids = Vec::with_capacity(spans.len());
        for s in &spans {
            if let Some(SpanKey::Hex(_, n)) = self.seen.take(&SpanKey::of(t, &s.id)) {
                ids.push(n);
            }
        }
        ids.sort_unstable();
        trace.frozen_ids = ids.into_boxed_slice();
        drop(spans);
        self.look_over_messages();
    }

    /// Trace `t`, frozen, will not be taken up again (retired: a span that
    /// falls into it has every line converted again): where its spans were
    /// read is let go, their ids kept (a copy is still a copy).
    pub(super) fn retire(&mut self, t: usize) {
        let trace = &mut self.traces[t];
        (trace.gidx, trace.lines) = (Vec::new(), Vec::new());
    }

    /// The spans read of trace `id`, taken out (none when none were read).
    fn take_spans(&mut self, id: &str) -> Vec<SpanRec> {
        match self.trace_at.get(id) {
            Some(&a) => std::mem::take(&mut self.traces[a].spans),
            None => Vec::new(),
        }
    }

    /// Takes trace `t`, frozen, up again: its spans are those `again` read
    /// of its lines — the ones read before it froze, and the new ones since
    /// — in their places in the input; an error when they are not those.
    pub(super) fn thaw(&mut self, t: usize, again: &mut Reader) -> Result<(), String> {
        let trace = &mut self.traces[t];
        let found = again.take_spans(&trace.id);
        let before = trace.gidx.len().saturating_sub(trace.spans.len());
        let same = found.len() == trace.gidx.len()
            && before + trace.spans.len() == found.len()
            && found[..before].iter().all(|s| {
                let key = SpanKey::of(t, &s.id);
                trace.read_before(&key) || self.seen.contains(&key)
            })
            && found[before..]
                .iter()
                .zip(&trace.spans)
                .all(|(a, s)| a.id == s.id);
        if !same {
            return Err(not_the_same(&trace.id, trace.gidx.len(), found.len()));
        }
        for s in &found[..before] {
            self.seen.insert(SpanKey::of(t, &s.id));
        }
        trace.spans = found;
        trace.frozen = false;
        trace.frozen_ids = Box::default();
        trace.let_go = 0;
        self.late.retain(|&l| l != t);
        Ok(())
    }

    /// How many spans trace `t` has.
    pub(super) fn spans_of(&self, t: usize) -> usize {
        self.traces[t].spans.len()
    }

    /// Whether some of trace `t`'s spans have let their bodies go.
    pub(super) fn let_go(&self, t: usize) -> bool {
        self.traces[t].let_go > 0
    }

    /// Lets the bodies of trace `t`'s spans before `upto` go, unless log
    /// records name the trace (a record can fill a span in later).
    pub(super) fn let_go_before(&mut self, t: usize, upto: usize) {
        let trace = &mut self.traces[t];
        if !trace.logs.is_empty() {
            return;
        }
        let upto = upto.min(trace.spans.len());
        for s in trace.spans.iter_mut().take(upto).skip(trace.let_go) {
            s.body = None;
        }
        self.let_go_since += upto.saturating_sub(trace.let_go);
        trace.let_go = trace.let_go.max(upto);
        self.look_over_messages();
    }

    /// Lets the distinct messages no span holds any more go, once enough
    /// spans let their bodies go since they were last looked over.
    fn look_over_messages(&mut self) {
        let interner = &mut self.histories.interner;
        if self.let_go_since >= (interner.known.len() / 4).max(1 << 12) {
            interner.look_over();
            self.let_go_since = 0;
        }
    }

    /// Gives trace `t`'s spans back the bodies `again` read (its spans read
    /// again from the same lines); an error when they are not the same spans.
    pub(super) fn bodies_from(&mut self, t: usize, again: &mut Reader) -> Result<(), String> {
        let trace = &mut self.traces[t];
        let found = again.take_spans(&trace.id);
        let same = found.len() == trace.spans.len()
            && found.iter().zip(&trace.spans).all(|(a, s)| a.id == s.id);
        if !same {
            return Err(not_the_same(&trace.id, trace.spans.len(), found.len()));
        }
        for (s, a) in trace.spans.iter_mut().zip(found) {
            if s.body.is_none() {
                s.body = a.body;
            }
        }
        trace.let_go = 0;
        Ok(())
    }

    /// The traces a span or a record fell into since the last call.
    pub(super) fn touched(&mut self) -> Vec<usize> {
        let touched = (0..self.touched.len())
            .filter(|&t| self.touched[t])
            .collect();
        self.touched.iter_mut().for_each(|t| *t = false);
        touched
    }

    /// Trace `t`'s spans as read and their places in the input, when no log
    /// record names it (else a record can change a span read before, and
    /// the trace is joined again: [`Reader::joined`]).
    pub(super) fn unjoined(&self, t: usize) -> Option<(&[SpanRec], &[usize])> {
        let trace = &self.traces[t];
        trace
            .logs
            .is_empty()
            .then_some((&trace.spans[..], &trace.gidx[..]))
    }

    /// Trace `t`'s spans, each log record naming it joined to its span: its
    /// messages are the call's (for a span whose own attributes carry none),
    /// its `asof.*` and evaluation events the span's. Records of a span that
    /// is not in the input stand for it when they hold messages (design.md
    /// §7).
    pub(super) fn joined(&self, t: usize) -> JoinedTrace<'_> {
        let trace = &self.traces[t];
        let mut report = ImportReport::default();
        if trace.logs.is_empty() {
            return JoinedTrace {
                spans: Cow::Borrowed(&trace.spans),
                gidx: Cow::Borrowed(&trace.gidx),
                report,
                read: 0,
                again: 0,
            };
        }
        let mut spans = trace.spans.clone();
        let mut gidx = trace.gidx.clone();
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        for (i, s) in trace.spans.iter().enumerate() {
            by_id.entry(s.id.as_str()).or_insert(i);
        }
        let mut copies: HashSet<(&str, u64)> = HashSet::new();
        let mut joined: HashMap<usize, Joined> = HashMap::new();
        let mut orphans: Vec<(&str, usize, Joined)> = Vec::new();
        let mut orphan_at: HashMap<&str, usize> = HashMap::new();
        let (mut read, mut again) = (0usize, 0usize);
        for (at, log) in &trace.logs {
            if !copies.insert((log.span.as_str(), log.key)) {
                again += 1;
                continue;
            }
            read += 1;
            match by_id.get(log.span.as_str()) {
                Some(&i) => joined.entry(i).or_default().take(log.clone()),
                None => {
                    let o = *orphan_at.entry(log.span.as_str()).or_insert_with(|| {
                        orphans.push((log.span.as_str(), *at, Joined::default()));
                        orphans.len() - 1
                    });
                    orphans[o].2.take(log.clone());
                }
            }
        }
        let mut order: Vec<usize> = joined.keys().copied().collect();
        order.sort_unstable();
        for i in order {
            let Some(mut j) = joined.remove(&i) else {
                continue;
            };
            let span = &mut spans[i];
            // A trace that log records name keeps its spans' bodies.
            let Some(body) = span.body.as_deref_mut() else {
                debug_assert!(false, "span {}: its body was let go", span.id);
                continue;
            };
            body.events.append(&mut j.kept);
            let bare = match &body.role {
                Role::Other => true,
                Role::Call { input, output, .. } => input.is_empty() && output.is_empty(),
                _ => false,
            };
            if !bare {
                continue;
            }
            if let Some(why) = j.unreadable.take().filter(|_| !j.says_something()) {
                report.skipped.push(Skipped {
                    location: format!("span {}", span.id),
                    reason: format!("{why}: its messages are not read"),
                });
                continue;
            }
            if let Some(role) = j.role() {
                body.role = role;
            }
        }
        for (id, first, mut j) in orphans {
            if !j.says_something() {
                report.skipped.push(Skipped {
                    location: format!("span {id}"),
                    reason: "log records name this span, which is not in the input, and hold no GenAI message: not read".into(),
                });
                continue;
            }
            let Some((start, end)) = j.times else {
                report.skipped.push(Skipped {
                    location: format!("span {id}"),
                    reason: "its log records carry no time: not read".into(),
                });
                continue;
            };
            report.defaults.bump(
                "model calls known only from their log records (span not in the input): timed by their first and last record",
            );
            let events = std::mem::take(&mut j.kept);
            let service = j.service.take();
            let Some(role) = j.role() else {
                continue;
            };
            let body = Body {
                name: "chat (from its log records)".into(),
                role,
                events,
                error: None,
                mcp_session: None,
                model: None,
            };
            spans.push(SpanRec::new(
                trace.id.clone(),
                id.to_owned(),
                None,
                (start, end),
                service.map(Arc::from),
                body,
            ));
            gidx.push(FROM_RECORDS + first);
        }
        JoinedTrace {
            spans: Cow::Owned(spans),
            gidx: Cow::Owned(gidx),
            report,
            read,
            again,
        }
    }
}

/// The requests of a file read a line at a time: JSON Lines stream, a
/// single (pretty-printed) request is read whole. `read` hears how many
/// bytes have been read.
fn file_requests(
    how: Lines,
    path: &Path,
    report: &mut ImportReport,
    each: &mut dyn FnMut(usize, Request, &mut ImportReport),
    read: &mut dyn FnMut(u64),
) -> Result<usize, DatasetErrors> {
    let file = how.file;
    let whole = |message: String| DatasetErrors(vec![error(file, None, message)]);
    let handle = std::fs::File::open(path).map_err(|e| whole(format!("cannot read: {e}")))?;
    let mut lines = std::io::BufReader::with_capacity(1 << 20, handle);
    let mut buf: Vec<u8> = Vec::new();
    let (mut offset, mut n) = (0u64, 0usize);
    let mut requests = 0usize;
    let mut first_error: Option<String> = None;
    let mut lines_mode = None;
    loop {
        buf.clear();
        let got = lines
            .read_until(b'\n', &mut buf)
            .map_err(|e| whole(format!("cannot read: {e}")))?;
        if got == 0 {
            break;
        }
        n += 1;
        let text = std::str::from_utf8(&buf).map_err(|e| {
            whole(format!(
                "not valid UTF-8 (byte {})",
                offset + e.valid_up_to() as u64
            ))
        })?;
        offset += got as u64;
        let line = text.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        if lines_mode.is_none() {
            let trimmed = line.trim_start();
            if !trimmed.starts_with('{') {
                return Err(whole(not_an_object(trimmed)));
            }
            // JSON Lines when the first line is a whole JSON value; else one
            // object over the whole file, read whole.
            let whole_line = serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok();
            lines_mode = Some(whole_line);
            if !whole_line {
                let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
                if size > MAX_BYTES {
                    return Err(whole(format!(
                        "is one request over many lines of {size} bytes, over the {MAX_BYTES}-byte limit for a request read whole; write it as JSON Lines (the Collector's file exporter does), which are read a line at a time"
                    )));
                }
                let mut rest = String::new();
                lines
                    .read_to_string(&mut rest)
                    .map_err(|e| whole(format!("not valid UTF-8 or cannot be read ({e})")))?;
                let all = format!("{text}{rest}");
                read(size);
                return text_requests(how, &all, report, each);
            }
        }
        one_line(
            n,
            line,
            parse(line).map(Request::Parsed),
            how,
            report,
            each,
            &mut requests,
            &mut first_error,
        )?;
        read(offset);
    }
    if lines_mode.is_none() {
        return Err(whole("is empty, not an OTLP/JSON trace".into()));
    }
    if requests == 0 {
        return Err(whole(
            first_error.unwrap_or_else(|| "holds no OTLP/JSON request".into()),
        ));
    }
    Ok(requests)
}

/// How the lines of one input are read: its name (for errors), how a line is
/// labelled (`line`, or `FILE line` among several inputs), and whether a line
/// that does not parse is skipped (counted) or refuses the input.
#[derive(Clone, Copy)]
pub(super) struct Lines<'a> {
    pub file: &'a str,
    pub label: &'a str,
    pub skip_bad: bool,
}

/// One line of JSON Lines, `parsed`: a request handed to `each`; a line
/// that is not one refuses the input (naming the file and line), or with
/// `skip_bad` is skipped, said and counted.
#[allow(clippy::too_many_arguments)]
fn one_line(
    n: usize,
    line: &str,
    parsed: Parse,
    how: Lines,
    report: &mut ImportReport,
    each: &mut dyn FnMut(usize, Request, &mut ImportReport),
    requests: &mut usize,
    first_error: &mut Option<String>,
) -> Result<(), DatasetErrors> {
    let (reason, parsed) = match parsed {
        Ok(r) if r.is_otlp() => {
            // A first line that was no request, in a file of requests:
            // a damaged trace after all.
            if let (false, 0, Some(first)) = (how.skip_bad, *requests, first_error.as_ref()) {
                return Err(DatasetErrors(vec![error(
                    how.file,
                    None,
                    format!(
                        "{first}; fix the line, or read the rest with --skip-bad-lines (the skipped lines are counted)"
                    ),
                )]));
            }
            *requests += 1;
            each(n, r, report);
            return Ok(());
        }
        Ok(_) => (not_otlp(line), true),
        Err(reason) => (reason, false),
    };
    // A first line that is JSON but no OTLP request: the file is something
    // else (refused whole at the end, saying what it is), not a damaged trace.
    let something_else = parsed && *requests == 0 && first_error.is_none();
    if !how.skip_bad && !something_else {
        return Err(DatasetErrors(vec![error(
            how.file,
            Some(Location::line(n)),
            format!(
                "{reason}; the file is damaged there: fix the line, or read the rest with --skip-bad-lines (the skipped lines are counted)"
            ),
        )]));
    }
    if *requests == 0 && first_error.is_none() {
        *first_error = Some(format!("{} {n} {reason}", how.label));
    }
    if !something_else {
        report.bad_lines += 1;
    }
    report.skipped.push(Skipped {
        location: format!("{} {n}", how.label),
        reason,
    });
    Ok(())
}

/// Why text that does not start with `{` is not OTLP/JSON.
fn not_an_object(trimmed: &str) -> String {
    let found: String = trimmed.chars().take(40).collect();
    if found.is_empty() {
        "is empty, not an OTLP/JSON trace".into()
    } else {
        format!(
            "is not OTLP/JSON: it does not start with a JSON object (found {found:?}); export traces with the OpenTelemetry Collector's file exporter or an OTLP/JSON exporter"
        )
    }
}

/// The requests of text in memory: one JSON object, or one per line. A line
/// that cannot be read is skipped and reported; text none of whose lines is
/// OTLP is refused, saying what it is instead.
fn text_requests(
    how: Lines,
    text: &str,
    report: &mut ImportReport,
    each: &mut dyn FnMut(usize, Request, &mut ImportReport),
) -> Result<usize, DatasetErrors> {
    let whole = |message: String| DatasetErrors(vec![error(how.file, None, message)]);
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        return Err(whole(not_an_object(trimmed)));
    }
    // JSON Lines when the first line is a whole JSON value; else one object
    // over the whole text (pretty-printed).
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    let lines_mode = serde_json::from_str::<serde::de::IgnoredAny>(first).is_ok();
    if !lines_mode {
        return match serde_json::from_str::<wire::Request>(text) {
            Ok(r) if !r.is_otlp() => Err(whole(not_otlp(text))),
            Ok(r) => {
                each(1, Request::Parsed(r), report);
                Ok(1)
            }
            Err(e) => Err(whole(describe(text, &e))),
        };
    }
    let (requests, first_error) = json_lines(text, (0, how), None, report, each)?;
    if requests == 0 {
        return Err(whole(
            first_error.unwrap_or_else(|| "holds no OTLP/JSON request".into()),
        ));
    }
    Ok(requests)
}

fn service_of(resource: Option<wire::Resource>) -> Option<String> {
    resource.and_then(|r| {
        r.attributes
            .into_iter()
            .find(|kv| kv.key == "service.name")
            .map(|kv| kv.value.to_text())
            .filter(|s| !s.is_empty())
    })
}

/// A log record as a span event: its name from `eventName` or the
/// `event.name` attribute, its time (else the time it was observed), its
/// attributes and, spread among them, its body's fields (a string body that
/// is JSON is `gen_ai.event.content`, any other `content`).
fn event_of(record: wire::LogRecord) -> wire::SpanEvent {
    let mut name = record.event_name;
    let mut attributes = Vec::with_capacity(record.attributes.len() + 4);
    for kv in record.attributes {
        if kv.key == "event.name" {
            if name.is_empty() {
                name = kv.value.to_text();
            }
        } else {
            attributes.push(kv);
        }
    }
    match record.body {
        Some(wire::AnyValue {
            kvlist: Some(list), ..
        }) => attributes.extend(list.values),
        Some(body) => {
            let text = body.to_text();
            if !text.is_empty() {
                let key = if text.trim_start().starts_with('{') {
                    "gen_ai.event.content"
                } else {
                    "content"
                };
                attributes.push(wire::KeyValue {
                    key: key.into(),
                    value: wire::AnyValue {
                        string: Some(text),
                        ..wire::AnyValue::default()
                    },
                });
            }
        }
        None => {}
    }
    let time = if wire::nanos_to_micros(&record.time).is_some() {
        record.time
    } else {
        record.observed_time
    };
    wire::SpanEvent {
        time,
        name,
        attributes,
    }
}

/// One span with its ids, times and role read; `None` (and said in
/// `skipped`) when its ids or times cannot be read.
fn span_rec(
    service: Option<Arc<str>>,
    span: wire::Span,
    skipped: &mut Vec<Skipped>,
    histories: &mut Histories,
) -> Option<SpanRec> {
    let (Some(trace), Some(id)) = (wire::id(&span.trace_id, 16), wire::id(&span.span_id, 8)) else {
        skipped.push(Skipped {
            location: format!("span {:?}", span.span_id),
            reason: format!(
                "trace id {:?} or span id {:?} is neither hex nor base64 of the right length",
                span.trace_id, span.span_id
            ),
        });
        return None;
    };
    let (Some(start), Some(end)) = (
        wire::nanos_to_micros(&span.start),
        wire::nanos_to_micros(&span.end),
    ) else {
        skipped.push(Skipped {
            location: format!("span {id}"),
            reason: "its start or end time is missing or not a number of nanoseconds".into(),
        });
        return None;
    };
    if time::format_opt(start).is_none() || time::format_opt(end).is_none() {
        skipped.push(Skipped {
            location: format!("span {id}"),
            reason: "its start or end time is outside the years 0001-9999".into(),
        });
        return None;
    }
    let parent = wire::id(&span.parent_span_id, 8);
    let mut attrs = dialect::attrs(span.attributes);
    // The GenAI conventions may put a call's messages on its
    // `gen_ai.client.inference.operation.details` event instead.
    dialect::adopt_operation_details(&mut attrs, &span.events);
    let mcp_session = attrs
        .get("mcp.session.id")
        .and_then(|v| v.string.clone())
        .filter(|s| !s.is_empty());
    let model = [
        "gen_ai.response.model",
        "gen_ai.request.model",
        "llm.model_name",
    ]
    .iter()
    .find_map(|k| attrs.get(k).map(|v| v.to_text()).filter(|s| !s.is_empty()));
    let role = match dialect::role_reading(&span.name, &attrs, &span.events, histories) {
        Ok(role) => role,
        Err(reason) => {
            skipped.push(Skipped {
                location: format!("span {id}"),
                reason: format!("{reason}: its messages are not read"),
            });
            Role::Other
        }
    };
    let error = span
        .status
        .as_ref()
        .filter(|s| s.is_error())
        .map(|s| s.message.clone());
    let body = Body {
        name: span.name,
        role,
        events: span
            .events
            .into_iter()
            .filter(|e| e.name.starts_with("asof.") || e.name == EVALUATION)
            .collect(),
        error,
        mcp_session,
        model,
    };
    Some(SpanRec::new(
        trace.into(),
        id,
        parent,
        (start, end.max(start)),
        service,
        body,
    ))
}

/// Why `text` is not an OTLP request, in a sentence that says what it is
/// instead.
fn describe(text: &str, e: &serde_json::Error) -> String {
    match serde_json::from_str::<Value>(text) {
        Err(not_json) => format!("is not valid JSON ({not_json})"),
        Ok(v) if has_otlp_keys(&v) => format!("is not readable OTLP/JSON ({e})"),
        Ok(_) => not_otlp(text),
    }
}

fn has_otlp_keys(v: &Value) -> bool {
    [
        "resourceSpans",
        "resource_spans",
        "resourceLogs",
        "resource_logs",
    ]
    .iter()
    .any(|k| v.get(k).is_some())
}

/// What `text`, valid JSON, is instead of an OTLP trace or logs request.
fn not_otlp(text: &str) -> String {
    let value = serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
    let Value::Object(map) = &value else {
        return format!(
            "is not OTLP/JSON: found a JSON {} instead of an object with `resourceSpans` or `resourceLogs`",
            kind_of(&value)
        );
    };
    if map.contains_key("asof") {
        return "is an asof JSON Lines dataset, not an OTLP trace: load it with `asof load`".into();
    }
    let mut keys: Vec<&str> = map.keys().map(String::as_str).take(5).collect();
    keys.sort();
    format!(
        "is not OTLP/JSON: found an object with {} instead of `resourceSpans` or `resourceLogs`",
        if keys.is_empty() {
            "no keys".to_owned()
        } else {
            format!(
                "the keys {}",
                keys.iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    )
}

pub(super) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
