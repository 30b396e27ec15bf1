//! A run converted a trace at a time, then merged (design.md §7, "A trace
//! at a time"). A span names only spans of its own trace, so passes 2–5 —
//! who the agent is, what it read, what it said — are a function of one
//! trace's spans (trace.rs). What crosses traces is the merge: the log — the
//! evidence and what was said, in recorded order across the traces, the
//! evidence numbered `T1, T2, …` in that order (pass 4, 6a), what was said
//! swept with each agent's latest assertion per topic (6b) —, the model
//! calls numbered by their start (6d), the header (7). Ties between traces at
//! one instant are broken by [`Met`], the order in which the passes of one
//! whole run would have met them, so a run merged from its traces is the run
//! converted whole.
//!
//! The merge is kept between batches ([`Merged`]): every entry of the log by
//! its key in an ordered index, the log's order and ranks as last written,
//! and the sweep's state every [`EVERY`] statements. A batch finds the
//! earliest entry it changed, keeps the log before it, takes the sweep up
//! from the last state kept before it, and writes the log from there on: the
//! suffix. A whole import is one batch from nothing.

use super::*;
use based::Based;
use said::{Numbers, SaidSweep};
use std::collections::BTreeMap;
use trace::{Counts, Rewind};

/// How many statements apart the sweep's state is kept (in a debug build,
/// as the tests run, a few: so that taking the sweep up from a kept state
/// is what every test does).
const EVERY: usize = if cfg!(debug_assertions) { 3 } else { 256 };

/// Where an entry stands in the log: by recorded instant, evidence before
/// what was said at one instant, evidence by when it was observed, then
/// where the passes met it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct LogKey(Micros, bool, Micros, Met);

/// An entry of the log: an item of evidence or a statement of a trace.
#[derive(Clone, Copy, Debug)]
enum Entry {
    Item(usize, usize),
    Said(usize, usize),
}

fn item_key(e: &Ev) -> LogKey {
    LogKey(e.recorded, false, e.observed, e.met)
}

fn said_key(s: &Said) -> LogKey {
    LogKey(s.recorded, true, 0, s.met)
}

/// The merge as the last batch left it.
#[derive(Default)]
pub(super) struct Merged {
    /// Every entry by its key.
    index: BTreeMap<LogKey, Entry>,
    /// Each trace's entries' keys as indexed: its items, its statements.
    item_keys: Vec<Vec<LogKey>>,
    said_keys: Vec<Vec<LogKey>>,
    /// Each trace's first start as last merged.
    starts: Vec<Micros>,
    /// The log as last written, and how many of its entries before each
    /// place are evidence (those of retired traces let go).
    log: Based<LogKey>,
    evidence_before: Based<usize>,
    /// Each trace's items' ranks, and the item at each rank.
    ranks: Vec<Vec<usize>>,
    by_rank: Based<(usize, usize)>,
    /// The key of the last entry let go with the traces retired: no batch
    /// may change the log at or before it.
    retired_to: Option<LogKey>,
    /// Each trace's statements' event ids.
    said_ids: Vec<Vec<Option<String>>>,
    /// Each trace's statements by the call ids they cite by name.
    cited: Vec<HashMap<String, Vec<usize>>>,
    /// Statements citing an evidence id by name, with the highest rank they
    /// name (their citation is of whatever holds that rank).
    naming: Vec<(usize, usize, usize)>,
    /// The sweep's state before a place of the log, every [`EVERY`]
    /// statements; what it left out, in log order.
    kept: Vec<(usize, SaidSweep)>,
    skipped: Vec<Skipped>,
    /// Items kept cut at the dataset's limit, each trace's flags and in all.
    long: Vec<Vec<bool>>,
    longs: usize,
    /// The model calls as last listed.
    listed: super::calls::Listed,
}

/// What a batch merged: the log from `keep` on (the events before it are
/// as the last batch wrote them), and the run's header and summary.
pub(super) struct Merge {
    pub(super) keep: usize,
    pub(super) events: Vec<RawEvent>,
    pub(super) origins: Vec<Location>,
    pub(super) header: RawHeader,
    pub(super) report: ImportReport,
    /// Beliefs and retractions in the whole log.
    pub(super) said: (usize, usize),
    /// The model calls before those in `report.calls` (which lists the
    /// rest): as the last batch listed them.
    pub(super) calls_from: usize,
}

impl Merged {
    /// The log key of item `n` of trace `t`, as indexed.
    pub(super) fn item_key(&self, t: usize, n: usize) -> Option<LogKey> {
        self.item_keys[t].get(n).copied()
    }

    /// The log key of statement `i` of trace `t`, as indexed.
    pub(super) fn said_key(&self, t: usize, i: usize) -> Option<LogKey> {
        self.said_keys[t].get(i).copied()
    }

    /// The event id statement `i` of trace `t` was given, if it made one.
    pub(super) fn said_id(&self, t: usize, i: usize) -> Option<String> {
        self.said_ids[t].get(i).cloned().flatten()
    }

    /// The items in the order they are numbered: (trace, item).
    #[cfg(test)]
    pub(super) fn ranked(&self) -> &[(usize, usize)] {
        self.by_rank.range(0, self.by_rank.len())
    }
}

impl Numbers for Merged {
    fn rank(&self, t: usize, n: usize) -> usize {
        self.ranks[t][n]
    }

    fn at_rank(&self, rank: usize) -> Option<(usize, usize)> {
        self.by_rank.get(rank).copied()
    }

    fn retired(&self, rank: usize) -> bool {
        rank < self.by_rank.base()
    }
}

/// Whether a merge takes the evidence's text out of the traces (an import
/// read once) or copies it (a growing import keeps them for the next batch).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Content {
    Take,
    Keep,
}

impl Merged {
    /// Merges `traces` from nothing: the whole log (nothing retired, so
    /// nothing a batch could change).
    pub(super) fn whole(
        first: &str,
        traces: &mut [TraceOut],
        report: ImportReport,
        options: &Options,
        content: Content,
    ) -> Merge {
        Merged::default()
            .merge(first, traces, &[], report, options, content)
            .expect("a merge from nothing has no retired trace to reach")
    }

    /// Merges `traces` (`rewound[t]`: where trace `t` was taken up from
    /// since the last merge — its start when converted again or new, and
    /// for a trace past the end of `rewound` — or `None`, carried on): the
    /// log from the earliest entry the batch changed, `report` (what pass 1
    /// read) completed; `None` when the batch changed what retired traces
    /// left (the import is then converted again from its start).
    pub(super) fn merge(
        &mut self,
        first: &str,
        traces: &mut [TraceOut],
        rewound: &[Option<Rewind>],
        mut report: ImportReport,
        options: &Options,
        content: Content,
    ) -> Option<Merge> {
        let rewound: Vec<Option<Rewind>> = (0..traces.len())
            .map(|t| rewound.get(t).copied().unwrap_or(Some(Rewind::default())))
            .collect();
        let changed = self.take_changes(traces, &rewound);
        if let Some(retired) = self.retired_to
            && changed.iter().any(|k| *k <= retired)
        {
            return None;
        }
        let keep = self.first_changed(changed);
        let events_from = self.evidence_before[keep];
        self.log.truncate(keep);
        self.evidence_before.truncate(keep + 1);
        self.by_rank.truncate(events_from);
        // The suffix: every entry from the first changed, numbered first
        // (a statement may name evidence recorded after it).
        let from_key = self.log.last().copied().or(self.retired_to);
        let suffix: Vec<(LogKey, Entry)> = match from_key {
            Some(k) => self
                .index
                .range((std::ops::Bound::Excluded(k), std::ops::Bound::Unbounded))
                .map(|(k, e)| (*k, *e))
                .collect(),
            None => self.index.iter().map(|(k, e)| (*k, *e)).collect(),
        };
        for &(_, entry) in &suffix {
            if let Entry::Item(t, n) = entry {
                self.ranks[t][n] = self.by_rank.len();
                self.by_rank.push((t, n));
            }
        }
        let (mut sweep, mut since_kept) = self.sweep_at(traces, keep, options);
        let mut events = Vec::with_capacity(suffix.len());
        let mut origins = Vec::with_capacity(suffix.len());
        let mut evidence = events_from;
        for (key, entry) in suffix {
            let at = self.log.len();
            self.log.push(key);
            match entry {
                Entry::Item(t, n) => {
                    let id = self.id(t, n);
                    events.push(evidence_event(&mut traces[t].items[n], id, content));
                    evidence += 1;
                    origins.push(Location::record("evidence", evidence));
                }
                Entry::Said(t, i) => {
                    if since_kept >= EVERY || self.kept.is_empty() {
                        sweep.skipped = self.skipped.len();
                        self.kept.push((at, sweep.clone()));
                        since_kept = 0;
                    }
                    since_kept += 1;
                    let mut skipped = std::mem::take(&mut self.skipped);
                    let (event, id) = sweep.step(traces, self, (t, i), options, &mut skipped);
                    self.skipped = skipped;
                    self.said_ids[t][i] = Some(id);
                    events.push(event);
                    origins.push(Location::record(
                        "belief",
                        sweep.beliefs + sweep.retractions,
                    ));
                }
            }
            self.evidence_before.push(evidence);
        }
        let mut listed = std::mem::take(&mut self.listed);
        let listing = listed.list(traces, &rewound, self, from_key);
        self.listed = listed;
        let (calls_from, calls) = listing?;
        self.summary(traces, &sweep, &mut report, options, content);
        report.calls = calls;
        let header = self.header(first, traces, &sweep, options);
        Some(Merge {
            keep,
            events,
            origins,
            header,
            report,
            said: (sweep.beliefs, sweep.retractions),
            calls_from,
        })
    }

    /// The places of the log and of the model calls let go: no batch
    /// writes or lists them again.
    pub(super) fn settled(&self) -> (usize, usize) {
        (self.log.base(), self.listed.settled())
    }

    /// The keys of trace `t`'s first and last entries, as indexed.
    pub(super) fn entries_of(&self, t: usize) -> Option<(LogKey, LogKey)> {
        let keys = || self.item_keys[t].iter().chain(&self.said_keys[t]);
        Some((*keys().min()?, *keys().max()?))
    }

    /// The place in the log of the first entry at or after `key` (with no
    /// key, the log's end).
    pub(super) fn place_of(&self, key: Option<LogKey>) -> usize {
        match key {
            Some(key) => self.log.partition_point(|k| *k < key),
            None => self.log.len(),
        }
    }

    /// What no batch can change any more, given the first entry and the
    /// first model call a trace still growing has: the place in the log
    /// before that entry — moved back before any statement that names by id
    /// an item ranked after it (that name would find another item, should
    /// they be numbered again) — and the place among the calls before that
    /// call and before any call row naming an entry after the log's place.
    pub(super) fn unchangeable(
        &self,
        first: Option<LogKey>,
        first_call: Option<trace::CallKey>,
    ) -> (usize, usize) {
        let mut upto = self.place_of(first).max(self.log.base());
        loop {
            let ranked = self.evidence_before.get(upto).copied().unwrap_or(0);
            let before = (self.naming.iter())
                .filter(|&&(_, _, rank)| rank >= ranked)
                .map(|&(t, i, _)| self.place_of(Some(self.said_keys[t][i])))
                .filter(|&at| at < upto)
                .min();
            match before {
                Some(at) => upto = at.max(self.log.base()),
                None => break,
            }
            if upto == self.log.base() {
                break;
            }
        }
        let named = upto.checked_sub(1).and_then(|at| self.log.get(at)).copied();
        let calls = (self.listed)
            .place_of(first_call)
            .min(self.listed.naming_no_later(named.or(self.retired_to)));
        (upto, calls)
    }

    /// Whether anything was let go.
    pub(super) fn let_go(&self) -> bool {
        self.log.base() > 0 || self.listed.let_go()
    }

    /// The place among the model calls of the first at or after `key`.
    pub(super) fn call_place_of(&self, key: Option<trace::CallKey>) -> usize {
        self.listed.place_of(key)
    }

    /// Lets the log before place `upto` and the model calls before place
    /// `calls_upto` go (what [`Merged::unchangeable`] gave), keeping the
    /// sweep's state at `upto` (where the log is written from, at the
    /// earliest, from now on), and retires traces `ts`, all of whose
    /// entries and calls are among those. Returns what each one's
    /// evaluations add to the run's summary, as now numbered.
    pub(super) fn retire(
        &mut self,
        traces: &[TraceOut],
        ts: &[usize],
        (upto, calls_upto): (usize, usize),
        options: &Options,
    ) -> Vec<ImportReport> {
        let given = (ts.iter())
            .map(|&t| {
                let mut report = ImportReport::default();
                evaluations(t, &traces[t], self, &self.said_ids[t], &mut report);
                report
            })
            .collect();
        // The sweep's state at `upto`: the last kept before it, taken on.
        let from = self.kept.iter().rposition(|(at, _)| *at <= upto);
        let (at, mut sweep) = match from.and_then(|k| self.kept.get(k)) {
            Some((at, sweep)) => (*at, sweep.clone()),
            None => (0, SaidSweep::default()),
        };
        let mut skipped = Vec::new();
        for key in self.log.range(at, upto) {
            if let Some(&Entry::Said(t, i)) = self.index.get(key) {
                let _ = sweep.step(traces, self, (t, i), options, &mut skipped);
            }
        }
        let later = self.kept.split_off(from.map_or(0, |k| k + 1));
        self.kept = std::iter::once((upto, sweep))
            .chain(later.into_iter().filter(|(at, _)| *at > upto))
            .collect();
        for key in self.log.range(self.log.base(), upto) {
            self.index.remove(key);
        }
        for &t in ts {
            self.item_keys[t] = Vec::new();
            self.said_keys[t] = Vec::new();
            self.ranks[t] = Vec::new();
            self.said_ids[t] = Vec::new();
            self.cited[t] = HashMap::new();
            self.long[t] = Vec::new();
        }
        self.naming.retain(|(t, _, _)| !ts.contains(t));
        if let Some(last) = upto.checked_sub(1).and_then(|at| self.log.get(at)) {
            self.retired_to = Some(*last);
        }
        let ranked = (self.evidence_before.get(upto).copied()).unwrap_or(self.by_rank.base());
        self.log.let_go_before(upto);
        self.evidence_before.let_go_before(upto);
        self.by_rank.let_go_before(ranked);
        self.listed.retire(ts, calls_upto);
        given
    }

    /// Takes what each trace changed since the last merge into the index;
    /// returns the keys, old and new, of every entry that changed.
    fn take_changes(&mut self, traces: &mut [TraceOut], rewound: &[Option<Rewind>]) -> Vec<LogKey> {
        let count = traces.len();
        if self.evidence_before.is_empty() {
            self.evidence_before.push(0);
        }
        self.item_keys.resize_with(count, Vec::new);
        self.said_keys.resize_with(count, Vec::new);
        self.starts.resize(count, Micros::MAX);
        self.ranks.resize_with(count, Vec::new);
        self.said_ids.resize_with(count, Vec::new);
        self.cited.resize_with(count, HashMap::new);
        self.long.resize_with(count, Vec::new);
        let mut changed = Vec::new();
        for (t, out) in traces.iter_mut().enumerate() {
            if let Some(r) = rewound[t] {
                // What follows where the trace was taken up from is taken
                // again: its items (and those it changed back) as touched.
                let items = r.items.min(self.item_keys[t].len());
                let said = r.said.min(self.said_keys[t].len());
                for k in self.item_keys[t]
                    .drain(items..)
                    .chain(self.said_keys[t].drain(said..))
                {
                    self.index.remove(&k);
                    changed.push(k);
                }
                self.ranks[t].truncate(items);
                self.said_ids[t].truncate(said);
                for statements in self.cited[t].values_mut() {
                    statements.retain(|&i| i < said);
                }
                self.naming.retain(|&(u, i, _)| u != t || i < said);
                self.longs -= self.long[t][items..].iter().filter(|&&l| l).count();
                self.long[t].truncate(items);
                out.touched.extend(items..out.items.len());
            }
            let mut touched = std::mem::take(&mut out.touched);
            touched.sort_unstable();
            touched.dedup();
            self.ranks[t].resize(out.items.len(), usize::MAX);
            self.long[t].resize(out.items.len(), false);
            for n in touched {
                let key = item_key(&out.items[n]);
                match self.item_keys[t].get(n).copied() {
                    Some(old) => {
                        self.index.remove(&old);
                        changed.push(old);
                        self.item_keys[t][n] = key;
                    }
                    None => self.item_keys[t].push(key),
                }
                self.index.insert(key, Entry::Item(t, n));
                changed.push(key);
                let long = is_long(&out.items[n]);
                if long != self.long[t][n] {
                    self.long[t][n] = long;
                    if long {
                        self.longs += 1;
                    } else {
                        self.longs -= 1;
                    }
                }
            }
            for i in self.said_keys[t].len()..out.said.len() {
                let s = &out.said[i];
                let key = said_key(s);
                self.said_keys[t].push(key);
                self.said_ids[t].push(None);
                self.index.insert(key, Entry::Said(t, i));
                changed.push(key);
                let mut highest = None;
                for name in s.cites.iter().flatten() {
                    self.cited[t].entry(name.clone()).or_default().push(i);
                    if let Some(rank) = name
                        .strip_prefix('T')
                        .and_then(|d| d.parse::<usize>().ok())
                        .and_then(|r| r.checked_sub(1))
                    {
                        highest = highest.max(Some(rank));
                    }
                }
                if let Some(rank) = highest {
                    self.naming.push((t, i, rank));
                }
            }
            // A statement citing a call id by name finds what now answers it.
            for id in std::mem::take(&mut out.new_ids) {
                for &i in self.cited[t].get(&id).into_iter().flatten() {
                    changed.push(self.said_keys[t][i]);
                }
            }
            // A belief naming no valid_from starts at its trace's start.
            if self.starts[t] != out.start {
                self.starts[t] = out.start;
                for (i, s) in out.said.iter().enumerate() {
                    if s.valid_from.is_none() && !s.retract {
                        changed.push(self.said_keys[t][i]);
                    }
                }
            }
        }
        changed
    }

    /// Where the log changed first: the place of the earliest changed key,
    /// moved back to the earliest statement before it that names by id an
    /// item ranked after it (that name now finds another item).
    fn first_changed(&self, changed: Vec<LogKey>) -> usize {
        let mut keep = match changed.iter().min() {
            Some(first) => self.log.partition_point(|k| k < first),
            None => self.log.len(),
        };
        loop {
            let ranked = self.evidence_before[keep];
            let before = self
                .naming
                .iter()
                .filter(|&&(_, _, rank)| rank >= ranked)
                .map(|&(t, i, _)| self.said_keys[t][i])
                .map(|k| self.log.partition_point(|l| *l < k))
                .filter(|&at| at < keep)
                .min();
            match before {
                Some(at) => keep = at,
                None => return keep,
            }
        }
    }

    /// The sweep's state before place `keep` of the log — the last state
    /// kept at or before it, taken on over the statements between — and
    /// how many statements that was.
    fn sweep_at(
        &mut self,
        traces: &[TraceOut],
        keep: usize,
        options: &Options,
    ) -> (SaidSweep, usize) {
        let from = self.kept.iter().rposition(|(at, _)| *at <= keep);
        self.kept.truncate(from.map_or(0, |k| k + 1));
        let (at, mut sweep) = match self.kept.last() {
            Some((at, sweep)) => (*at, sweep.clone()),
            None => (0, SaidSweep::default()),
        };
        self.skipped.truncate(sweep.skipped);
        let mut skipped = std::mem::take(&mut self.skipped);
        let mut taken = 0;
        for key in self.log.range(at, keep) {
            if let Some(&Entry::Said(t, i)) = self.index.get(key) {
                let _ = sweep.step(traces, self, (t, i), options, &mut skipped);
                taken += 1;
            }
        }
        self.skipped = skipped;
        (sweep, taken)
    }

    /// The run's summary: what pass 1 read (`report`), what the traces
    /// counted, what the sweep assumed and left out, the evaluations, the
    /// model calls, the notes.
    fn summary(
        &self,
        traces: &mut [TraceOut],
        sweep: &SaidSweep,
        report: &mut ImportReport,
        options: &Options,
        content: Content,
    ) {
        let mut by_first: Vec<usize> = (0..traces.len()).collect();
        by_first.sort_by_key(|&t| traces[t].first);
        summed(report, traces, &by_first, content);
        report.evidence = self.by_rank.len();
        if self.longs > 0 {
            report.defaults.add(
                &format!(
                    "evidence longer than {} MiB: its first {} MiB kept whole",
                    asof_core::dataset::MAX_CONTENT >> 20,
                    asof_core::dataset::MAX_CONTENT >> 20
                ),
                self.longs,
            );
        }
        for c in &sweep.defaults.0 {
            report.defaults.add(&c.what, c.count);
        }
        for c in &sweep.by_source.0 {
            report.assertions_by_source.add(&c.what, c.count);
        }
        report.skipped.extend(self.skipped.iter().cloned());
        for (t, out) in traces.iter().enumerate() {
            match &out.retired {
                Some(given) => said::add_evaluations(report, given),
                None => evaluations(t, out, self, &self.said_ids[t], report),
            }
        }
        notes(options, report);
    }

    /// Pass 7: the header — the run named after the file and its first root
    /// span, the agents (those of the model calls by their first call, then
    /// those who said something) and the topics (as first said).
    fn header(
        &self,
        first: &str,
        traces: &[TraceOut],
        sweep: &SaidSweep,
        options: &Options,
    ) -> RawHeader {
        let mut first_call: Vec<(trace::CallKey, &str)> = Vec::new();
        let mut at: HashMap<&str, usize> = HashMap::new();
        let firsts =
            (traces.iter()).flat_map(|o| o.first_calls.iter().map(|(_, key, agent)| (*key, agent)));
        for (key, agent) in firsts {
            match at.get(&**agent) {
                Some(&k) if first_call[k].0 <= key => {}
                Some(&k) => first_call[k].0 = key,
                None => {
                    at.insert(agent, first_call.len());
                    first_call.push((key, agent));
                }
            }
        }
        first_call.sort_unstable();
        let mut agents: Vec<String> = first_call.iter().map(|(_, a)| (*a).to_owned()).collect();
        for a in &sweep.agents {
            if !agents.contains(a) {
                agents.push(a.clone());
            }
        }
        if agents.is_empty() {
            agents.push(options.agent.clone().unwrap_or_else(|| "agent".into()));
        }
        let root = traces
            .iter()
            .filter_map(|o| o.root.as_ref())
            .min_by_key(|(start, at, _)| (*start, *at))
            .map(|(_, _, name)| name.clone());
        super::header(first, root, agents, sweep.topics.clone(), options)
    }
}

/// Adds what reading the traces counted to the run's summary, as one
/// whole run's passes would have: what joining log records said, then the
/// run's shape, how each model call was read, the defaults, what was left
/// out (in the order the passes meet it) and the notes.
fn summed(
    report: &mut ImportReport,
    traces: &mut [TraceOut],
    by_first: &[usize],
    content: Content,
) {
    let mut c = Counts::default();
    for out in traces.iter() {
        let o = out.counts;
        c.model_calls += o.model_calls;
        c.tool_spans += o.tool_spans;
        c.memory_searches += o.memory_searches;
        c.memory_writes += o.memory_writes;
        c.retrievals += o.retrievals;
        c.agent_spans += o.agent_spans;
        c.span_events += o.span_events;
        c.empty_calls += o.empty_calls;
        c.from_service += o.from_service;
        c.unnamed += o.unnamed;
        c.belief_tools_alone += o.belief_tools_alone;
    }
    let mut skipped: Vec<(Met, Skipped)> = Vec::new();
    for &t in by_first {
        let out = &mut traces[t];
        let joined = match content {
            Content::Take => std::mem::take(&mut out.joined_report),
            Content::Keep => out.joined_report.clone(),
        };
        for d in joined.defaults.0 {
            report.defaults.add(&d.what, d.count);
        }
        skipped.extend(joined.skipped.into_iter().map(|s| (Met::default(), s)));
    }
    if !traces.is_empty() {
        report.read.add("model calls", c.model_calls);
        report.read.add("tool spans", c.tool_spans);
        for (what, count) in [
            ("memory searches", c.memory_searches),
            ("memory writes and deletes", c.memory_writes),
            ("retrievals", c.retrievals),
        ] {
            if count > 0 {
                report.read.add(what, count);
            }
        }
        report.read.add("agent spans", c.agent_spans);
    }
    for &t in by_first {
        for case in &traces[t].cases.0 {
            report.cases.add(&case.what, case.count);
        }
    }
    if c.from_service > 0 {
        report.defaults.add(
            "model calls under no agent span: the resource's service.name is the agent",
            c.from_service,
        );
    }
    if c.unnamed > 0 {
        report.defaults.add(
            "model calls with no agent span and no service.name: agent `agent`",
            c.unnamed,
        );
    }
    if c.belief_tools_alone > 0 {
        report.defaults.add(
            "belief-tool calls in no model call's output: recorded at the tool span's start",
            c.belief_tools_alone,
        );
    }
    if c.span_events > 0 {
        report.read.add("asof span events", c.span_events);
    }
    let mut later: Vec<(Met, Skipped)> = traces
        .iter()
        .flat_map(|o| o.skipped.iter().cloned())
        .collect();
    later.sort_by_key(|(met, _)| *met);
    skipped.extend(later);
    report.skipped.extend(skipped.into_iter().map(|(_, s)| s));
    if c.empty_calls > 0 {
        report.notes.push(format!(
            "{} of {} model calls carry no message content (capture was off, or it went to OTLP log records not given: add the logs file): nothing they read is evidence",
            c.empty_calls, c.model_calls
        ));
    }
    if traces.iter().any(|o| o.deletes_retract) {
        report
            .notes
            .push("a delete_memory of a record that gave a belief retracts that belief".to_owned());
    }
}
