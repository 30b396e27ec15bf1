//! One trace converted, and carried on batch by batch (design.md §7, "A
//! trace at a time"): passes 2, 3 and 5 over the spans a batch adds, from
//! the state the earlier batches left — who each span's agent is, the model
//! calls in order of start, the evidence found and what each call's input
//! held, what was said. A whole import is one batch from nothing.
//!
//! A batch carries the state on only when its spans cannot change what the
//! earlier spans meant; [`TraceOut::extend`] checks that first and, when they
//! could, says why, and the trace is converted again from its start (the
//! growing import counts how often). What it checks:
//!
//! * no new span is the missing ancestor of earlier spans under which an agent
//!   span stands (their agent would change);
//! * a new model call starts after every earlier one, and after every instant
//!   at which an earlier statement looked for its agent's latest call; its
//!   output names no tool call id an earlier input showed, and no belief-tool
//!   call an earlier belief-tool span was read alone for;
//! * a new tool span, memory search or retrieval ends after every earlier
//!   model call started (an earlier call could have read it), and a new tool
//!   span's call id is not one an earlier call already showed;
//! * a new memory write ends no earlier than the earlier ones.
//!
//! A trace whose log records carry its messages is converted again whole at
//! each batch: a record can fill in a span read before.

use super::undo::{Epoch, Journaled, JournaledSet, Trail};
use super::*;
use crate::import::Tally;
use std::collections::VecDeque;

/// One trace's conversion: what the merge reads of it, and the state a
/// batch carries on.
pub(super) struct TraceOut {
    /// Where its first span is in the input: the order traces are summed up in.
    pub(super) first: usize,
    /// What joining its log records counted.
    pub(super) joined: read::JoinCounts,
    /// What joining them said (read again with every batch).
    pub(super) joined_report: ImportReport,
    /// The trace's first start (where its beliefs' valid time starts by
    /// default); `Micros::MAX` before its first span.
    pub(super) start: Micros,
    /// What its agents read (pass 3), and what each model call's input held.
    pub(super) items: Vec<Ev>,
    pub(super) in_front: Vec<Vec<usize>>,
    /// Tool results by call id.
    pub(super) by_call: Journaled<String, usize>,
    /// Its model calls, in order of start.
    pub(super) calls: Vec<Call>,
    /// Each agent's first model call as it became so, in the order they did:
    /// (index into `calls`, its key, agent) — the header's agents, without a
    /// pass over every call at each batch.
    pub(super) first_calls: Vec<(usize, CallKey, Arc<str>)>,
    /// What its agents said (pass 5).
    pub(super) said: Vec<Said>,
    /// Its spans that carry evaluations, in the order they were read.
    pub(super) evaluated: Vec<Evaluated>,
    /// Its first root span: (start, place in the input, name).
    pub(super) root: Option<(Micros, usize, String)>,
    /// What reading it counted, by kind.
    pub(super) counts: Counts,
    /// How each model call was read (its convention), in order of start.
    pub(super) cases: Tally,
    /// What was left out, each where a whole run's passes meet it.
    pub(super) skipped: Vec<(Met, Skipped)>,
    /// A memory delete retracted a belief its record gave.
    pub(super) deletes_retract: bool,
    /// Items made or changed since the merge last took them (a result
    /// first read by a later call is recorded then: merge.rs).
    pub(super) touched: Vec<usize>,
    /// Call ids a result was first found by since the merge last took them
    /// (a statement citing one by name now finds it), or no longer found by.
    pub(super) new_ids: Vec<String>,
    /// Frozen: quiet long enough that a growing import let its spans go
    /// ([`TraceOut::freeze`]); it converts no more spans.
    pub(super) frozen: bool,
    /// Retired (its conversion given up: [`TraceOut::retired`]): what its
    /// evaluations added to the run's summary, as they were then.
    pub(super) retired: Option<Box<ImportReport>>,
    /// What the merge is to take again since it last took the trace: the
    /// items, statements and calls from these on (a trace taken up from a
    /// checkpoint; all of them when converted from its start).
    pub(super) rewound: Option<Rewind>,
    sweep: Sweep,
    /// The batch being converted, and the state before each of the last
    /// batches (at most [`CHECKPOINTS`]), oldest first.
    epoch: Epoch,
    checkpoints: VecDeque<Checkpoint>,
}

/// How many batches back a trace can be taken up from, its first batch (the
/// one from nothing) excluded: before it is its start (in a debug build, as
/// the tests run, two: so that running out of checkpoints, and converting
/// the trace from its start, is what tests do too).
const CHECKPOINTS: usize = if cfg!(debug_assertions) { 2 } else { 32 };

/// How many of a trace's last spans a growing import converts as a batch of
/// their own when it converts the trace from its start (in a debug build, a
/// few: so that the tests take traces up from that checkpoint too).
const TAIL: usize = if cfg!(debug_assertions) { 3 } else { 4096 };

/// Where a trace was taken up from: the merge takes its items, statements
/// and model calls from these on again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Rewind {
    pub(super) items: usize,
    pub(super) said: usize,
    pub(super) calls: usize,
}

impl Rewind {
    fn min(self, other: Rewind) -> Rewind {
        Rewind {
            items: self.items.min(other.items),
            said: self.said.min(other.said),
            calls: self.calls.min(other.calls),
        }
    }
}

/// The state before a batch, as far as truncating and undoing do not give
/// it back: what only grows, by length; what is set, by value.
struct Checkpoint {
    epoch: Epoch,
    taken: usize,
    first: usize,
    start: Micros,
    items: usize,
    calls: usize,
    said: usize,
    evaluated: usize,
    skipped: usize,
    listed: usize,
    root: Option<(Micros, usize, String)>,
    counts: Counts,
    cases: Tally,
    deletes_retract: bool,
    horizon: Option<Micros>,
    memory_end: Option<(Micros, usize)>,
}

/// A change in place, undone by going back to a checkpoint before it.
enum Change {
    /// Item `n` was first seen in a model call's input: what it was before.
    Seen {
        n: usize,
        recorded: Micros,
        no_content: bool,
        no_call_id: bool,
    },
    /// `listed[n]` was `old`.
    Listed {
        n: usize,
        old: usize,
    },
    /// A tool result was queued unread at this place, or taken off the
    /// front.
    UnreadIn(usize),
    UnreadOut((Micros, Micros, usize)),
    /// A search began to wait for a model call, or stopped waiting (it was
    /// at this place).
    WaitingIn,
    WaitingOut(usize, (usize, Vec<usize>)),
}

/// What reading a trace counted, summed over the traces into the summary.
#[derive(Clone, Copy, Default)]
pub(super) struct Counts {
    pub(super) model_calls: usize,
    pub(super) tool_spans: usize,
    pub(super) memory_searches: usize,
    pub(super) memory_writes: usize,
    pub(super) retrievals: usize,
    pub(super) agent_spans: usize,
    pub(super) span_events: usize,
    /// Model calls that carry no message content.
    pub(super) empty_calls: usize,
    /// Model calls whose agent is their service, or `agent`.
    pub(super) from_service: usize,
    pub(super) unnamed: usize,
    /// Belief-tool spans read alone (their call in no output).
    pub(super) belief_tools_alone: usize,
}

/// A model call, as `asof calls` lists it.
pub(super) struct Call {
    /// (start, end, place in the input): the order calls are numbered in.
    pub(super) key: CallKey,
    pub(super) agent: Arc<str>,
    pub(super) trace: Arc<str>,
    pub(super) span: String,
    pub(super) model: Option<String>,
    /// The tool calls its output made: (call id, tool name).
    pub(super) tool_calls: Vec<(Option<String>, String)>,
}

/// A model call's place in the order of a run's calls: (start, end, place
/// in the input).
pub(super) type CallKey = (Micros, Micros, usize);

/// A span's evaluations, and what they can judge.
pub(super) struct Evaluated {
    pub(super) id: String,
    pub(super) locator: String,
    /// The model call it is (its index among the trace's calls).
    pub(super) call: Option<usize>,
    pub(super) events: Vec<wire::SpanEvent>,
}

/// A user or system message as a trace knows it once it has read it: the
/// first 128 bits of the SHA-256 of its role and text, not a copy of the
/// text (two messages alike in it would take some 2^64 tries to make, where
/// a fast hash's 64 bits can be collided on purpose).
type MessageKey = [u8; 16];

fn message_key(role: &str, text: &str) -> MessageKey {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update((role.len() as u64).to_le_bytes());
    h.update(role.as_bytes());
    h.update(text.as_bytes());
    let digest = h.finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// A memory record: its store (when named) and its id.
type Record = (Option<String>, String);

/// What the passes carry from one batch to the next.
#[derive(Default)]
struct Sweep {
    /// Spans converted.
    taken: usize,
    /// Each span's agent, and whether it is asof's default.
    agents: Vec<Arc<str>>,
    agent_assumed: Vec<bool>,
    /// Each span by id.
    span_at: Journaled<String, usize>,
    /// Parent ids named by a span and not read.
    missing: JournaledSet<String>,
    /// Each model call's span, in order of start, and each call by its span.
    call_spans: Vec<usize>,
    call_of: Journaled<usize, usize>,
    /// The tool calls the model emitted, by call id: (tool, call).
    emitted: Journaled<String, (String, usize)>,
    /// Tool-result ids an input showed.
    shown: JournaledSet<String>,
    /// The latest instant at which a statement looked for its agent's
    /// latest model call.
    horizon: Option<Micros>,
    /// An id-less tool result, by (agent, input message, part).
    by_place: Journaled<(Arc<str>, usize, usize), usize>,
    /// Tool results not yet read by a model call, in the order the tools
    /// started: (start, end, item).
    unread: VecDeque<(Micros, Micros, usize)>,
    /// A user or system message, by [`message_key`] of its role and text.
    by_message: Journaled<MessageKey, usize>,
    /// (agent, place in the history) → the message read there and its items.
    read_before: Journaled<(usize, usize), (Arc<Msg>, Vec<usize>)>,
    /// Each agent's number, in order of first model call.
    ix: Journaled<Arc<str>, usize>,
    /// The call (k + 1) whose input last listed each item.
    listed: Vec<usize>,
    /// Memory searches and retrievals no model call has come after yet:
    /// (span, the items they fetched).
    waiting: Vec<(usize, Vec<usize>)>,
    /// Belief-tool calls shown in an output: their ids and arguments.
    from_output: JournaledSet<String>,
    /// Ids and arguments of belief-tool spans read alone.
    alone: JournaledSet<String>,
    /// The last memory write read: (end, place in the input).
    memory_end: Option<(Micros, usize)>,
    /// A memory record (store, record id) → the (topic, claim)s its write gave.
    gave: Journaled<Record, Vec<(String, String)>>,
    /// The changes in place above (the maps keep their own).
    changes: Trail<Change>,
}

impl TraceOut {
    /// Nothing of the trace converted yet.
    pub(super) fn new() -> TraceOut {
        TraceOut {
            first: usize::MAX,
            joined: read::JoinCounts::default(),
            joined_report: ImportReport::default(),
            start: Micros::MAX,
            items: Vec::new(),
            in_front: Vec::new(),
            by_call: Journaled::default(),
            calls: Vec::new(),
            first_calls: Vec::new(),
            said: Vec::new(),
            evaluated: Vec::new(),
            root: None,
            counts: Counts::default(),
            cases: Tally::default(),
            skipped: Vec::new(),
            deletes_retract: false,
            touched: Vec::new(),
            new_ids: Vec::new(),
            frozen: false,
            retired: None,
            rewound: Some(Rewind::default()),
            sweep: Sweep::default(),
            epoch: 0,
            checkpoints: VecDeque::new(),
        }
    }

    /// One trace converted whole, its log records joined.
    pub(super) fn of(trace: read::JoinedTrace, options: &Options) -> TraceOut {
        let mut out = TraceOut::new();
        out.joined = trace.counts();
        out.joined_report = trace.report;
        // From nothing, no span can change what an earlier one meant (and
        // every span has its body: a growing import reads them again first).
        let whole = out.extend(&trace.spans, &trace.gidx, options);
        debug_assert!(whole.is_ok(), "{whole:?}");
        out
    }

    /// One trace converted whole as a growing import converts it from its
    /// start: its last spans (about [`TAIL`], from a place where every span
    /// read before has ended before any read after starts) as a batch of
    /// their own, so that a checkpoint stands before them (the spans of the
    /// next requests, which may overtake those, take the trace up from
    /// there, not from its start again); whole when there is no such place,
    /// or the last spans change what the spans before them meant.
    pub(super) fn of_growing(trace: read::JoinedTrace, options: &Options) -> TraceOut {
        let Some(cut) = clean_cut(&trace.spans) else {
            return TraceOut::of(trace, options);
        };
        let mut out = TraceOut::new();
        out.joined = trace.counts();
        out.joined_report = trace.report.clone();
        let first = out.extend(&trace.spans[..cut], &trace.gidx[..cut], options);
        debug_assert!(first.is_ok(), "{first:?}");
        match out.extend(&trace.spans, &trace.gidx, options) {
            Ok(None) => out,
            _ => TraceOut::of(trace, options),
        }
    }

    /// Converts `spans[taken..]`, the spans a batch added to the trace
    /// (`gidx`: each span's place in the input), from the state the earlier
    /// batches left. When they could change what an earlier span meant, it
    /// is taken up from the latest checkpoint before which they could not,
    /// and says why (`Ok(Some(why))`); when none is left, it refuses, saying
    /// why, and is to be converted from its start.
    pub(super) fn extend(
        &mut self,
        spans: &[SpanRec],
        gidx: &[usize],
        options: &Options,
    ) -> Result<Option<&'static str>, &'static str> {
        if self.sweep.taken >= spans.len() {
            return Ok(None);
        }
        let mut fell_back = None;
        if self.sweep.taken > 0
            && let Err(why) = self.check(spans, options)
        {
            if !self.take_up(spans, options) {
                return Err(why);
            }
            fell_back = Some(why);
        }
        // A checkpoint converts again only spans that kept their bodies
        // (the growing import lets go only those before every checkpoint);
        // should one not have, the trace is read again from its start.
        if spans[self.sweep.taken..].iter().any(|s| s.body.is_none()) {
            return Err("a span to convert again had let its body go");
        }
        // From nothing, the batch runs at epoch 0 and is not remembered:
        // going back before it is converting the trace again.
        if self.sweep.taken > 0 {
            self.keep_checkpoint();
            self.epoch += 1;
        }
        let from = self.sweep.taken;
        self.joined.spans = spans.len();
        let new = Batch::shape(self, spans, gidx, options);
        self.tool_spans(spans, gidx, &new, options);
        self.fetched(spans, gidx, &new);
        self.inputs(spans, gidx, &new, options);
        self.outputs(spans, gidx, &new, options);
        self.belief_tools(spans, gidx, &new, options);
        self.span_events(spans, gidx, from);
        self.memory(spans, gidx, &new, options);
        self.sweep.taken = spans.len();
        Ok(fell_back)
    }

    /// The first span any checkpoint kept converts again: those before it
    /// are read again only when the trace is converted from its start.
    pub(super) fn converted_again_from(&self) -> usize {
        self.checkpoints
            .front()
            .map_or(self.sweep.taken, |oldest| oldest.taken)
    }

    /// Whether the trace looks done: its root span read, and every span it
    /// names as a parent (a growing import retires a trace sooner when it
    /// does).
    pub(super) fn looks_done(&self) -> bool {
        self.root.is_some() && self.sweep.missing.is_empty()
    }

    /// Frozen: what carrying the conversion on needs let go (its sweep's
    /// state and checkpoints); what the merge reads of it kept.
    pub(super) fn freeze(&mut self) {
        self.frozen = true;
        self.sweep = Sweep::default();
        self.checkpoints = VecDeque::new();
    }

    /// The keys of its first and last model calls (in order of start).
    pub(super) fn call_span(&self) -> Option<(CallKey, CallKey)> {
        Some((self.calls.first()?.key, self.calls.last()?.key))
    }

    /// The trace retired (design.md §7, "Runs that are over leave memory"):
    /// of its conversion only what the run's summary and header read of it —
    /// its place, start, counts, cases, what was left out, its root and
    /// agents' first calls — and `evaluations`, what its evaluations added
    /// to the summary as the merge last numbered it.
    pub(super) fn retired(self, evaluations: ImportReport) -> TraceOut {
        let mut out = TraceOut::new();
        out.first = self.first;
        out.joined = self.joined;
        out.joined_report = self.joined_report;
        out.start = self.start;
        out.first_calls = self.first_calls;
        out.root = self.root;
        out.counts = self.counts;
        out.cases = self.cases;
        out.skipped = self.skipped;
        out.deletes_retract = self.deletes_retract;
        out.rewound = None;
        out.frozen = true;
        out.retired = Some(Box::new(evaluations));
        out
    }

    /// Keeps the state before the batch about to be converted as a
    /// checkpoint, forgetting what only the oldest needed.
    fn keep_checkpoint(&mut self) {
        let w = &self.sweep;
        self.checkpoints.push_back(Checkpoint {
            epoch: self.epoch,
            taken: w.taken,
            first: self.first,
            start: self.start,
            items: self.items.len(),
            calls: self.calls.len(),
            said: self.said.len(),
            evaluated: self.evaluated.len(),
            skipped: self.skipped.len(),
            listed: w.listed.len(),
            root: self.root.clone(),
            counts: self.counts,
            cases: self.cases.clone(),
            deletes_retract: self.deletes_retract,
            horizon: w.horizon,
            memory_end: w.memory_end,
        });
        if self.checkpoints.len() > CHECKPOINTS {
            self.checkpoints.pop_front();
            if let Some(oldest) = self.checkpoints.front() {
                self.forget(oldest.epoch);
            }
        }
    }

    /// Goes back checkpoint by checkpoint, newest first, to the first
    /// from which `spans[taken..]` change nothing an earlier span meant;
    /// false when none is left (the state is then of no use: the trace is
    /// converted from its start).
    fn take_up(&mut self, spans: &[SpanRec], options: &Options) -> bool {
        while let Some(checkpoint) = self.checkpoints.pop_back() {
            self.restore(checkpoint);
            if self.check(spans, options).is_ok() {
                return true;
            }
        }
        false
    }

    /// The state `checkpoint` kept: what later batches changed in place
    /// undone, newest first, what they added cut off. The merge is told to
    /// take what follows it again, and the items changed back.
    fn restore(&mut self, checkpoint: Checkpoint) {
        let to = checkpoint.epoch;
        let w = &mut self.sweep;
        while let Some(change) = w.changes.pop_after(to) {
            match change {
                Change::Seen {
                    n,
                    recorded,
                    no_content,
                    no_call_id,
                } => {
                    if let Some(e) = self.items.get_mut(n) {
                        e.seen = false;
                        e.recorded = recorded;
                        if no_content {
                            e.content.clear();
                        }
                        if no_call_id {
                            e.call_id = None;
                        }
                    }
                    self.touched.push(n);
                }
                Change::Listed { n, old } => {
                    if let Some(l) = w.listed.get_mut(n) {
                        *l = old;
                    }
                }
                Change::UnreadIn(at) => {
                    w.unread.remove(at);
                }
                Change::UnreadOut(q) => w.unread.push_front(q),
                Change::WaitingIn => {
                    w.waiting.pop();
                }
                Change::WaitingOut(at, waiting) => w.waiting.insert(at, waiting),
            }
        }
        let new_ids = &mut self.new_ids;
        self.by_call.undo(to, |id| new_ids.push(id.clone()));
        w.span_at.undo(to, |_| {});
        w.missing.undo(to);
        w.call_of.undo(to, |_| {});
        w.emitted.undo(to, |_| {});
        w.shown.undo(to);
        w.by_place.undo(to, |_| {});
        w.by_message.undo(to, |_| {});
        w.read_before.undo(to, |_| {});
        w.ix.undo(to, |_| {});
        w.from_output.undo(to);
        w.alone.undo(to);
        w.gave.undo(to, |_| {});
        let c = checkpoint;
        w.taken = c.taken;
        w.agents.truncate(c.taken);
        w.agent_assumed.truncate(c.taken);
        w.call_spans.truncate(c.calls);
        w.listed.truncate(c.listed);
        w.horizon = c.horizon;
        w.memory_end = c.memory_end;
        self.items.truncate(c.items);
        self.in_front.truncate(c.calls);
        self.calls.truncate(c.calls);
        self.first_calls.retain(|&(k, _, _)| k < c.calls);
        self.said.truncate(c.said);
        self.evaluated.truncate(c.evaluated);
        self.skipped.truncate(c.skipped);
        self.first = c.first;
        // A batch reads the trace to its end: the spans joined are those taken.
        self.joined.spans = c.taken;
        self.start = c.start;
        self.root = c.root;
        self.counts = c.counts;
        self.cases = c.cases;
        self.deletes_retract = c.deletes_retract;
        self.touched.retain(|&n| n < c.items);
        let back = Rewind {
            items: c.items,
            said: c.said,
            calls: c.calls,
        };
        self.rewound = Some(self.rewound.map_or(back, |r| r.min(back)));
        self.epoch = to;
    }

    /// Forgets what going back to before epoch `to` would need.
    fn forget(&mut self, to: Epoch) {
        let w = &mut self.sweep;
        w.changes.forget(to);
        self.by_call.forget(to);
        w.span_at.forget(to);
        w.missing.forget(to);
        w.call_of.forget(to);
        w.emitted.forget(to);
        w.shown.forget(to);
        w.by_place.forget(to);
        w.by_message.forget(to);
        w.read_before.forget(to);
        w.ix.forget(to);
        w.from_output.forget(to);
        w.alone.forget(to);
        w.gave.forget(to);
    }

    /// Whether `spans[taken..]` leave what the earlier spans meant as it
    /// was (module docs); why not.
    fn check(&self, spans: &[SpanRec], options: &Options) -> Result<(), &'static str> {
        let w = &self.sweep;
        let new = &spans[w.taken..];
        let last_call = w.call_spans.last().map(|&c| (spans[c].start, spans[c].end));
        let called_by = |end: Micros| last_call.is_some_and(|(start, _)| end <= start);
        if options.agent.is_none() {
            let new_at: HashMap<&str, usize> = new
                .iter()
                .enumerate()
                .map(|(i, s)| (s.id.as_str(), w.taken + i))
                .collect();
            for s in new.iter().filter(|s| w.missing.contains(&s.id)) {
                if names_an_agent(spans, s, &w.span_at, &new_at) {
                    return Err("an agent span arrived after spans under it");
                }
            }
        }
        for s in new {
            match &s.role {
                Role::Call { output, .. } => {
                    if last_call.is_some_and(|last| (s.start, s.end) < last) {
                        return Err("a model call starts before an earlier one");
                    }
                    if w.horizon.is_some_and(|h| s.start <= h) {
                        return Err(
                            "a model call starts before a statement that looked for the latest",
                        );
                    }
                    for part in output.iter().flat_map(|m| &m.parts) {
                        let Part::ToolCall { id, name, args } = part else {
                            continue;
                        };
                        if id.as_ref().is_some_and(|id| w.shown.contains(id)) {
                            return Err("a model call emits a tool call an earlier input showed");
                        }
                        if is_belief_tool(options, name)
                            && (id.as_ref().is_some_and(|id| w.alone.contains(id))
                                || w.alone.contains(&dialect::canonical(args)))
                        {
                            return Err("a model call shows a belief-tool call read alone before");
                        }
                    }
                }
                Role::Tool { name, call_id, .. } if !is_belief_tool(options, name) => {
                    if called_by(s.end) {
                        return Err("a tool ends before an earlier model call started");
                    }
                    if call_id
                        .as_ref()
                        .is_some_and(|id| self.by_call.contains_key(id))
                    {
                        return Err("a tool's call id was shown before");
                    }
                }
                Role::Memory {
                    op: MemoryOp::Search,
                    ..
                }
                | Role::Retrieval { .. }
                    if called_by(s.end) =>
                {
                    return Err("a search ends before an earlier model call started");
                }
                Role::Memory { op, .. }
                    if *op != MemoryOp::Search
                        && w.memory_end.is_some_and(|(end, _)| s.end < end) =>
                {
                    return Err("a memory write ends before an earlier one");
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The latest model call of `agent` started by `at` (index into
    /// `calls`); a later batch's call must start after `at`.
    fn latest_call(&mut self, spans: &[SpanRec], agent: &str, at: Micros) -> Option<usize> {
        let w = &mut self.sweep;
        w.horizon = Some(w.horizon.map_or(at, |h| h.max(at)));
        // The calls are in order of start: those started by `at` come first.
        let started = w.call_spans.partition_point(|&c| spans[c].start <= at);
        (0..started)
            .rev()
            .find(|&k| &*w.agents[w.call_spans[k]] == agent)
    }

    fn skip(&mut self, met: Met, span: &str, reason: String) {
        self.skipped.push((
            met,
            Skipped {
                location: format!("span {span}"),
                reason,
            },
        ));
    }
}

/// The latest place, at least [`TAIL`] spans from the end and no further
/// back than half the spans, before which every span has ended before any
/// span from it on starts: where a trace read in order can be cut in two
/// batches that change nothing of each other's (an agent span exported last,
/// which started first, leaves none).
fn clean_cut(spans: &[SpanRec]) -> Option<usize> {
    let n = spans.len();
    if n <= 2 * TAIL {
        return None;
    }
    let mut starts_from = vec![Micros::MAX; n + 1];
    for i in (n / 2..n).rev() {
        starts_from[i] = starts_from[i + 1].min(spans[i].start);
    }
    let mut ended = spans[..n / 2].iter().map(|s| s.end).max()?;
    let mut cut = None;
    for i in n / 2..=n - TAIL {
        if ended <= starts_from[i] {
            cut = Some(i);
        }
        ended = ended.max(spans[i].end);
    }
    cut
}

/// Whether span `s`, read after spans under it, is or stands under an agent
/// span that names its agent (so the spans under it were given another).
fn names_an_agent(
    spans: &[SpanRec],
    s: &SpanRec,
    old: &Journaled<String, usize>,
    new: &HashMap<&str, usize>,
) -> bool {
    let mut at = Some(s);
    let mut steps = 0;
    while let Some(span) = at {
        if span.agent.is_some() {
            return true;
        }
        steps += 1;
        if steps > spans.len() {
            return false;
        }
        at = span.parent.as_deref().and_then(|p| {
            new.get(p)
                .or_else(|| old.get(p))
                .and_then(|&i| spans.get(i))
        });
    }
    false
}

/// Pass 2 over a batch's spans: the run's shape as they add to it.
struct Batch {
    /// The batch's new tool spans by end, its memory writes by end (each
    /// by place in the trace), and the index of its first model call.
    tools: Vec<usize>,
    memory_writes: Vec<usize>,
    calls_from: usize,
}

impl Batch {
    fn shape(out: &mut TraceOut, spans: &[SpanRec], gidx: &[usize], options: &Options) -> Batch {
        let from = out.sweep.taken;
        let e = out.epoch;
        let range = from..spans.len();
        for i in range.clone() {
            let s = &spans[i];
            out.start = out.start.min(s.start);
            out.sweep.span_at.get_or_insert_with(e, s.id.clone(), || i);
            out.first = out.first.min(gidx[i]);
        }
        let w = &mut out.sweep;
        for i in range.clone() {
            w.missing.remove(e, &spans[i].id);
        }
        for i in range.clone() {
            if let Some(p) = &spans[i].parent
                && !w.span_at.contains_key(p)
            {
                w.missing.insert(e, p.clone());
            }
        }
        for i in range.clone() {
            let (agent, assumed) = agent_of(spans, i, &w.span_at, options);
            if assumed && matches!(spans[i].role, Role::Call { .. }) {
                match agent {
                    Some(_) => out.counts.from_service += 1,
                    None => out.counts.unnamed += 1,
                }
            }
            w.agents.push(Arc::from(agent.unwrap_or("agent")));
            w.agent_assumed.push(assumed);
        }
        let mut calls: Vec<usize> = range
            .clone()
            .filter(|&i| matches!(spans[i].role, Role::Call { .. }))
            .collect();
        calls.sort_by_key(|&i| (spans[i].start, spans[i].end, i));
        let mut tools: Vec<usize> = range
            .clone()
            .filter(|&i| matches!(spans[i].role, Role::Tool { .. }))
            .collect();
        tools.sort_by_key(|&i| (spans[i].end, i));
        let mut memory_writes: Vec<usize> = range
            .clone()
            .filter(|&i| matches!(spans[i].role, Role::Memory { op, .. } if op != MemoryOp::Search))
            .collect();
        memory_writes.sort_by_key(|&i| (spans[i].end, i));
        let c = &mut out.counts;
        c.model_calls += calls.len();
        c.tool_spans += tools.len();
        for s in &spans[range.clone()] {
            match &s.role {
                Role::Memory {
                    op: MemoryOp::Search,
                    ..
                } => c.memory_searches += 1,
                Role::Memory { .. } => c.memory_writes += 1,
                Role::Retrieval { .. } => c.retrievals += 1,
                Role::Agent { .. } => c.agent_spans += 1,
                Role::Call { input, output, .. } if input.is_empty() && output.is_empty() => {
                    c.empty_calls += 1
                }
                _ => {}
            }
        }
        let calls_from = out.sweep.call_spans.len();
        for &i in &calls {
            let s = &spans[i];
            let k = out.sweep.call_spans.len();
            out.sweep.call_spans.push(i);
            out.sweep.call_of.insert(e, i, k);
            out.in_front.push(Vec::new());
            let Role::Call {
                dialect, output, ..
            } = &s.role
            else {
                continue;
            };
            out.cases.bump(dialect.describe());
            let mut tool_calls = Vec::new();
            for part in output.iter().flat_map(|m| &m.parts) {
                if let Part::ToolCall { id, name, .. } = part {
                    if let Some(id) = id {
                        out.sweep
                            .emitted
                            .get_or_insert_with(e, id.clone(), || (name.clone(), k));
                    }
                    tool_calls.push((id.clone(), name.clone()));
                }
            }
            let key = (s.start, s.end, gidx[i]);
            let agent = &out.sweep.agents[i];
            let first = (out.first_calls.iter())
                .filter(|(_, _, a)| a == agent)
                .map(|&(_, key, _)| key)
                .min();
            if first.is_none_or(|first| key < first) {
                out.first_calls.push((out.calls.len(), key, agent.clone()));
            }
            out.calls.push(Call {
                key,
                agent: out.sweep.agents[i].clone(),
                trace: s.trace.clone(),
                span: s.id.clone(),
                model: s.model.clone(),
                tool_calls,
            });
        }
        for i in range {
            let s = &spans[i];
            if s.parent.is_none()
                && out
                    .root
                    .as_ref()
                    .is_none_or(|(start, at, _)| (s.start, gidx[i]) < (*start, *at))
            {
                out.root = Some((s.start, gidx[i], s.name.clone()));
            }
            if s.events.iter().any(|e| e.name == EVALUATION) {
                out.evaluated.push(Evaluated {
                    id: s.id.clone(),
                    locator: s.locator(),
                    call: out.sweep.call_of.get(&i).copied(),
                    events: s
                        .events
                        .iter()
                        .filter(|e| e.name == EVALUATION)
                        .cloned()
                        .collect(),
                });
            }
        }
        Batch {
            tools,
            memory_writes,
            calls_from,
        }
    }
}

/// Span `i`'s agent: `--agent`, else the name of the nearest agent span at
/// or above it, else its resource's `service.name` (`None`: neither, the
/// agent is `agent`); and whether it is asof's default.
fn agent_of<'s>(
    spans: &'s [SpanRec],
    i: usize,
    span_at: &Journaled<String, usize>,
    options: &'s Options,
) -> (Option<&'s str>, bool) {
    if let Some(a) = &options.agent {
        return (Some(a.as_str()), false);
    }
    let mut at = Some(i);
    let mut steps = 0;
    while let Some(k) = at {
        let span = &spans[k];
        if let Some(name) = &span.agent {
            return (Some(name), false);
        }
        steps += 1;
        if steps > spans.len() {
            break;
        }
        at = span
            .parent
            .as_deref()
            .and_then(|p| span_at.get(p))
            .copied()
            .filter(|&k| k < spans.len());
    }
    (spans[i].service.as_deref(), true)
}

impl TraceOut {
    /// Pass 3a: each new tool span's result (or its error), one item per
    /// span, queued in the order the tools started (the n-th tool span run
    /// after a model call's tool calls answers the n-th of them).
    fn tool_spans(&mut self, spans: &[SpanRec], gidx: &[usize], new: &Batch, options: &Options) {
        for &t in &new.tools {
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
            let n = self.items.len();
            self.items.push(Ev {
                source: name.clone(),
                kind: "other",
                content,
                observed: s.end,
                recorded: s.end,
                locator: s.locator(),
                call_id: call_id.clone(),
                seen: false,
                met: Met(0, s.end, 0, gidx[t], 0, 0),
            });
            self.touched.push(n);
            if let Some(id) = call_id {
                self.found_by(id, n);
            }
            let key = (s.start, s.end, n);
            let queue = &mut self.sweep.unread;
            let at = queue.partition_point(|&q| q < key);
            queue.insert(at, key);
            self.sweep.changes.push(self.epoch, Change::UnreadIn(at));
        }
    }

    /// Pass 3b: what a memory search or a retrieval returned is in front of
    /// the agent's next model call (design.md §7): it was fetched for it.
    /// Searches read before that call wait for it.
    fn fetched(&mut self, spans: &[SpanRec], gidx: &[usize], new: &Batch) {
        let from = self.sweep.taken;
        for i in from..spans.len() {
            let s = &spans[i];
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
            let mut found = Vec::with_capacity(records.len());
            for (j, r) in records.iter().enumerate() {
                let place = match &r.id {
                    Some(id) => format!("{what} {id}"),
                    None => format!("{what} {j}"),
                };
                found.push(self.items.len());
                self.touched.push(self.items.len());
                self.items.push(Ev {
                    source: source.clone(),
                    kind: "other",
                    content: r.content.clone(),
                    observed: s.end,
                    recorded: s.end,
                    locator: format!("{} {place}", s.locator()),
                    call_id: None,
                    seen: true,
                    met: Met(1, 0, 0, gidx[i], j, 0),
                });
            }
            self.sweep.waiting.push((i, found));
            self.sweep.changes.push(self.epoch, Change::WaitingIn);
        }
        // Each waiting search's next call: the first (by start) of its agent
        // that starts once it has ended, among the calls added now.
        let calls_from = new.calls_from;
        let w = &mut self.sweep;
        let mut at = 0;
        while let Some((i, found)) = w.waiting.get(at) {
            let s = &spans[*i];
            let next = (calls_from..w.call_spans.len()).find(|&k| {
                let c = w.call_spans[k];
                w.agents[c] == w.agents[*i] && spans[c].start >= s.end
            });
            match next {
                Some(k) => {
                    self.in_front[k].extend_from_slice(found);
                    let waited = w.waiting.remove(at);
                    w.changes.push(self.epoch, Change::WaitingOut(at, waited));
                }
                None => at += 1,
            }
        }
    }

    /// Pass 3c: each new model call's input messages. Each call repeats the
    /// history before it: a message at the same place of the same agent's
    /// history, the same (shared) message, is what it was when first read —
    /// its items are taken as they were, so a long run is read in time that
    /// grows with its calls, not their square.
    fn inputs(&mut self, spans: &[SpanRec], gidx: &[usize], new: &Batch, options: &Options) {
        for k in new.calls_from..self.sweep.call_spans.len() {
            let c = self.sweep.call_spans[k];
            let Role::Call { input, .. } = &spans[c].role else {
                continue;
            };
            let next = self.sweep.ix.len();
            let agent = self.sweep.agents[c].clone();
            let ag = *self.sweep.ix.get_or_insert_with(self.epoch, agent, || next);
            for (i, m) in input.iter().enumerate() {
                let found_before = self
                    .sweep
                    .read_before
                    .get(&(ag, i))
                    .filter(|(known, _)| Arc::ptr_eq(known, m))
                    .map(|(_, found)| found.clone());
                let found_here = match found_before {
                    Some(found) => found,
                    None => {
                        let found = self.message(spans, gidx, (c, i), m, options);
                        self.sweep.read_before.insert(
                            self.epoch,
                            (ag, i),
                            (m.clone(), found.clone()),
                        );
                        found
                    }
                };
                for n in found_here {
                    let listed = &mut self.sweep.listed;
                    if listed.len() <= n {
                        listed.resize(n + 1, 0);
                    }
                    if listed[n] != k + 1 {
                        let old = std::mem::replace(&mut listed[n], k + 1);
                        self.sweep
                            .changes
                            .push(self.epoch, Change::Listed { n, old });
                        self.in_front[k].push(n);
                    }
                }
            }
        }
    }

    /// The items input message `i` of call span `c` shows, read the first
    /// time it is met.
    fn message(
        &mut self,
        spans: &[SpanRec],
        gidx: &[usize],
        (c, i): (usize, usize),
        m: &Arc<Msg>,
        options: &Options,
    ) -> Vec<usize> {
        let s = &spans[c];
        let mut found_all = Vec::new();
        for (j, part) in m.parts.iter().enumerate() {
            let locator = || {
                if m.parts.len() > 1 {
                    format!("{} input message {i} part {j}", s.locator())
                } else {
                    format!("{} input message {i}", s.locator())
                }
            };
            let met = Met(2, s.start, s.end, gidx[c], i, j);
            let found = match part {
                // A user or system message, or media the model was
                // given (design.md §7): once per trace, role and text.
                Part::Text(text) | Part::Media(text)
                    if matches!(part, Part::Media(_))
                        || ((m.role == "user" || m.role == "system")
                            && !text.trim().is_empty()) =>
                {
                    let key = message_key(&m.role, text);
                    let items = &mut self.items;
                    let touched = &mut self.touched;
                    Some(
                        *self
                            .sweep
                            .by_message
                            .get_or_insert_with(self.epoch, key, || {
                                let n = items.len();
                                touched.push(n);
                                items.push(Ev {
                                    source: m.role.clone(),
                                    kind: if m.role == "user" { "human" } else { "other" },
                                    content: text.clone(),
                                    observed: s.start,
                                    recorded: s.start,
                                    locator: locator(),
                                    call_id: None,
                                    seen: true,
                                    met,
                                });
                                n
                            }),
                    )
                }
                Part::ToolResult { id, content } => {
                    self.tool_result(spans, c, (i, j, met), m, id, content, locator, options)
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
    }

    /// A tool result in an input message is its tool call (design.md §7):
    /// found by its call id; an id-less one by its place in the history;
    /// else the next tool span of this trace not yet read, in the order the
    /// tools started. Content never merges two calls: identical outputs stay
    /// two items. A belief tool's result is none.
    #[allow(clippy::too_many_arguments)]
    fn tool_result(
        &mut self,
        spans: &[SpanRec],
        c: usize,
        (i, j, met): (usize, usize, Met),
        m: &Arc<Msg>,
        id: &Option<String>,
        content: &str,
        locator: impl Fn() -> String,
        options: &Options,
    ) -> Option<usize> {
        let s = &spans[c];
        let epoch = self.epoch;
        let w = &mut self.sweep;
        if let Some(id) = id {
            w.shown.insert(epoch, id.clone());
        }
        let tool_name = id
            .as_ref()
            .and_then(|id| w.emitted.get(id))
            .map(|(name, _)| name.as_str())
            .or(m.name.as_deref());
        if tool_name.is_some_and(|name| is_belief_tool(options, name)) {
            return None;
        }
        let tool_name = tool_name.map(str::to_owned);
        let place = (w.agents[c].clone(), i, j);
        let known = match id {
            Some(id) => self.by_call.get(id).copied(),
            None => w.by_place.get(&place).copied(),
        }
        .or_else(|| {
            let items = &self.items;
            let queue = &mut w.unread;
            while let Some(&q) = queue.front().filter(|&&(_, _, n)| items[n].seen) {
                queue.pop_front();
                w.changes.push(epoch, Change::UnreadOut(q));
            }
            queue.iter().map(|&(_, _, n)| n).find(|&n| {
                let e = &items[n];
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
                let e = &mut self.items[n];
                if !e.seen {
                    self.touched.push(n);
                    self.sweep.changes.push(
                        epoch,
                        Change::Seen {
                            n,
                            recorded: e.recorded,
                            no_content: e.content.is_empty(),
                            no_call_id: e.call_id.is_none(),
                        },
                    );
                    e.seen = true;
                    e.recorded = s.start;
                    if e.content.is_empty() {
                        e.content = content.to_owned();
                    }
                    if e.call_id.is_none() {
                        e.call_id = id.clone();
                    }
                }
                n
            }
            None => {
                let n = self.items.len();
                self.touched.push(n);
                self.items.push(Ev {
                    source: tool_name.unwrap_or_else(|| "tool".to_owned()),
                    kind: "other",
                    content: content.to_owned(),
                    observed: s.start,
                    recorded: s.start,
                    locator: locator(),
                    call_id: id.clone(),
                    seen: true,
                    met,
                });
                n
            }
        };
        match id {
            Some(id) => self.found_by(id, n),
            None => {
                self.sweep.by_place.get_or_insert_with(epoch, place, || n);
            }
        }
        Some(n)
    }

    /// Item `n` is found by call id `id`, unless an earlier one is.
    fn found_by(&mut self, id: &str, n: usize) {
        if !self.by_call.contains_key(id) {
            self.by_call.insert(self.epoch, id.to_owned(), n);
            self.new_ids.push(id.to_owned());
        }
    }

    /// Pass 5a: what the agent said in the new model calls' outputs —
    /// belief-tool calls, and prose a rule reads — with the call id or
    /// arguments of each belief-tool call, so its tool span is not read twice.
    fn outputs(&mut self, spans: &[SpanRec], gidx: &[usize], new: &Batch, options: &Options) {
        for k in new.calls_from..self.sweep.call_spans.len() {
            let c = self.sweep.call_spans[k];
            let s = &spans[c];
            let Role::Call { output, .. } = &s.role else {
                continue;
            };
            let agent = self.sweep.agents[c].clone();
            let assumed = self.sweep.agent_assumed[c];
            let from = self.said.len();
            let mut skips = 0;
            for (i, m) in output.iter().enumerate() {
                for (j, part) in m.parts.iter().enumerate() {
                    let Part::ToolCall { id, name, args } = part else {
                        continue;
                    };
                    if !is_belief_tool(options, name) {
                        continue;
                    }
                    if let Some(id) = id {
                        self.sweep.from_output.insert(self.epoch, id.clone());
                    }
                    self.sweep
                        .from_output
                        .insert(self.epoch, dialect::canonical(args));
                    let origin = format!("{} output message {i} part {j}", s.locator());
                    let retract = *name == options.retract_tool;
                    let reason = match serde_json::from_str::<Value>(args) {
                        Ok(Value::Object(map)) => match fields(&map, "", retract) {
                            Ok(f) => {
                                self.said.push(Said {
                                    agent: agent.to_string(),
                                    agent_assumed: assumed,
                                    recorded: s.end,
                                    call: Some(k),
                                    origin,
                                    source: SaidBy::Tool.name(retract),
                                    ..f
                                });
                                continue;
                            }
                            Err(reason) => reason,
                        },
                        _ => "its arguments are not a JSON object".to_owned(),
                    };
                    let met = Met(1, s.start, s.end, gidx[c], skips, 0);
                    skips += 1;
                    self.skip(
                        met,
                        &s.id,
                        format!("{name} call {}: {reason}", id.as_deref().unwrap_or("?")),
                    );
                }
            }
            for rule in &options.rules {
                matches(rule, k, s, output, (&agent, assumed), &mut self.said);
            }
            for (seq, x) in self.said[from..].iter_mut().enumerate() {
                x.met = Met(0, s.start, s.end, gidx[c], seq, 0);
            }
        }
    }

    /// Pass 5b: belief-tool spans whose call is in no model call's output.
    fn belief_tools(&mut self, spans: &[SpanRec], gidx: &[usize], new: &Batch, options: &Options) {
        for &t in &new.tools {
            let s = &spans[t];
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
            let known = |key: &String| self.sweep.from_output.contains(key);
            let canonical = args.as_deref().map(dialect::canonical);
            if call_id.as_ref().is_some_and(known) || canonical.as_ref().is_some_and(known) {
                continue;
            }
            // A model call's output shown later would have covered it.
            for key in call_id.iter().cloned().chain(canonical) {
                self.sweep.alone.insert(self.epoch, key);
            }
            let met = Met(2, s.end, 0, gidx[t], 0, 0);
            let retract = *name == options.retract_tool;
            let parsed = args
                .as_deref()
                .map(serde_json::from_str::<Value>)
                .and_then(Result::ok);
            let Some(Value::Object(map)) = parsed else {
                self.skip(
                    met,
                    &s.id,
                    format!("{name} span: its arguments are missing or not a JSON object"),
                );
                continue;
            };
            match fields(&map, "", retract) {
                Ok(f) => {
                    self.counts.belief_tools_alone += 1;
                    let agent = self.sweep.agents[t].clone();
                    let call = self.latest_call(spans, &agent, s.start);
                    self.said.push(Said {
                        agent: agent.to_string(),
                        agent_assumed: self.sweep.agent_assumed[t],
                        recorded: s.start,
                        call,
                        origin: s.locator(),
                        source: SaidBy::Tool.name(retract),
                        met: Met(1, s.end, 0, gidx[t], 0, 0),
                        ..f
                    });
                }
                Err(reason) => self.skip(met, &s.id, format!("{name} span: {reason}")),
            }
        }
    }

    /// Pass 5c: `asof.belief` / `asof.retract` events of the new spans.
    fn span_events(&mut self, spans: &[SpanRec], gidx: &[usize], from: usize) {
        for (i, s) in spans.iter().enumerate().skip(from) {
            let said_from = self.said.len();
            let mut skips = 0;
            for e in &s.events {
                let retract = match e.name.as_str() {
                    "asof.belief" => false,
                    "asof.retract" => true,
                    _ => continue,
                };
                self.counts.span_events += 1;
                let map: Map<String, Value> = e
                    .attributes
                    .iter()
                    .map(|kv| (kv.key.clone(), kv.value.to_json()))
                    .collect();
                let met = Met(3, 0, 0, gidx[i], skips, 0);
                let Some(at) =
                    wire::nanos_to_micros(&e.time).filter(|t| time::format_opt(*t).is_some())
                else {
                    skips += 1;
                    self.skip(
                        met,
                        &s.id,
                        format!("{} event: its time is missing or unreadable", e.name),
                    );
                    continue;
                };
                match fields(&map, "asof.", retract) {
                    Ok(f) => {
                        let agent = self.sweep.agents[i].clone();
                        let call = match self.sweep.call_of.get(&i) {
                            Some(&k) => Some(k),
                            None => self.latest_call(spans, &agent, at),
                        };
                        self.said.push(Said {
                            agent: agent.to_string(),
                            agent_assumed: self.sweep.agent_assumed[i],
                            recorded: at,
                            call,
                            origin: format!("{} event {}", s.locator(), e.name),
                            source: SaidBy::Event.name(retract),
                            ..f
                        });
                    }
                    Err(reason) => {
                        skips += 1;
                        self.skip(met, &s.id, format!("{} event: {reason}", e.name));
                    }
                }
            }
            for (seq, x) in self.said[said_from..].iter_mut().enumerate() {
                x.met = Met(2, 0, 0, gidx[i], seq, 0);
            }
        }
    }

    /// Pass 5d: what the agent wrote to its memory, read by the rules with
    /// `in: memory` (an assertion recorded when the write ended); a
    /// `delete_memory` of a record that gave a belief retracts it.
    fn memory(&mut self, spans: &[SpanRec], gidx: &[usize], new: &Batch, options: &Options) {
        let rules: Vec<&Rule> = options
            .rules
            .iter()
            .filter(|r| r.within.contains(&Within::Memory))
            .collect();
        for &i in &new.memory_writes {
            let s = &spans[i];
            self.sweep.memory_end = Some((s.end, gidx[i]));
            let Role::Memory {
                op,
                store,
                records,
                record_id,
            } = &s.role
            else {
                continue;
            };
            let agent = self.sweep.agents[i].clone();
            let assumed = self.sweep.agent_assumed[i];
            let from = self.said.len();
            if *op == MemoryOp::Delete {
                if let Some(id) = record_id {
                    let key = (store.clone(), id.clone());
                    let gave = self.sweep.gave.remove(self.epoch, &key).unwrap_or_default();
                    let call = match gave.is_empty() {
                        true => None,
                        false => self.latest_call(spans, &agent, s.start),
                    };
                    for (topic, claim) in gave {
                        self.deletes_retract = true;
                        self.said.push(Said {
                            retract: true,
                            agent: agent.to_string(),
                            agent_assumed: assumed,
                            topic,
                            claim: Some(claim),
                            confidence: None,
                            valid_from: None,
                            valid_to: None,
                            cites: None,
                            note: Some(format!("memory record {id} deleted")),
                            recorded: s.end,
                            call,
                            origin: s.locator(),
                            source: "memory deletes",
                            met: Met::default(),
                        });
                    }
                }
            } else {
                for (j, r) in records.iter().enumerate() {
                    let id = r.id.clone().or_else(|| record_id.clone());
                    let place = match &id {
                        Some(id) => format!("memory record {id}"),
                        None => format!("memory record {j}"),
                    };
                    for rule in &rules {
                        for caps in rule.regex.captures_iter(&r.content) {
                            let (Some(quote), Some(claim)) = (caps.get(0), caps.name("claim"))
                            else {
                                continue;
                            };
                            let claim = claim.as_str().trim();
                            if claim.is_empty() {
                                continue;
                            }
                            if let Some(id) = &id {
                                self.sweep.gave.update(
                                    self.epoch,
                                    (store.clone(), id.clone()),
                                    Vec::new,
                                    |gave| gave.push((rule.topic.clone(), claim.to_owned())),
                                );
                            }
                            let call = self.latest_call(spans, &agent, s.start);
                            self.said.push(Said {
                                retract: false,
                                agent: agent.to_string(),
                                agent_assumed: assumed,
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
                                call,
                                origin: format!("{} {place}", s.locator()),
                                source: "rules",
                                met: Met::default(),
                            });
                        }
                    }
                }
            }
            for (seq, x) in self.said[from..].iter_mut().enumerate() {
                x.met = Met(3, s.end, 0, gidx[i], seq, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A span from `start` to `end`.
    fn at(start: Micros, end: Micros) -> SpanRec {
        let body = Body::bare(String::new(), Role::Other);
        SpanRec::new(
            "t".into(),
            format!("{start}-{end}"),
            None,
            (start, end),
            None,
            body,
        )
    }

    /// A trace converted from its start is cut where nothing read after
    /// started before what was read before ended; a span overtaken moves the
    /// cut back; an agent span read last, which started first, leaves none.
    #[test]
    fn a_trace_is_cut_where_nothing_after_started_before_what_came_before_ended() {
        let n = 4 * TAIL;
        let spans: Vec<SpanRec> = (0..n as Micros).map(|i| at(i * 10, i * 10 + 5)).collect();
        assert_eq!(clean_cut(&spans), Some(n - TAIL));
        let mut racing = spans.clone();
        racing.swap(n - TAIL - 1, n - TAIL);
        assert_eq!(clean_cut(&racing), Some(n - TAIL - 1));
        let mut agent = spans.clone();
        agent.push(at(0, n as Micros * 10 + 100));
        assert_eq!(clean_cut(&agent), None);
        assert_eq!(clean_cut(&spans[..2 * TAIL]), None, "too short to cut");
    }
}
