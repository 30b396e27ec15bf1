//! Pass 6d, kept between batches: each model call in order of its start
//! across the traces, with the evidence first in front of the model at it
//! (so the lists of a run partition the evidence that reached the model),
//! what its output said, and its tool calls with the evidence their results
//! became (`asof calls`, design.md §5).
//!
//! A growing import lists again only the calls from the first one a batch
//! changed, so a batch costs the calls it touches, not the run's. A call's
//! row changes when
//! * a call starts before it (its number moves), or it is new, or its trace
//!   was converted again;
//! * its output says something new (a statement read from it later);
//! * a tool call of its gets its result (found by the call id);
//! * what it names is numbered again: an item or statement at or after the
//!   first log entry the batch changed. Each row keeps the latest log key it
//!   names, and the rows the largest such key up to each, so the first row
//!   to list again is a binary search.

use super::based::Based;
use super::merge::{LogKey, Merged};
use super::said::Numbers;
use super::trace::{CallKey, Rewind, TraceOut};
use asof_core::model::{ModelCall, ToolCallMade};

/// The calls as last listed, and what listing the next batch's needs (not
/// the rows: those listed are handed over, and a row listed again is made
/// again).
#[derive(Default)]
pub(super) struct Listed {
    /// Each call in order: its key, its trace and its index there (those of
    /// retired traces let go).
    order: Based<(CallKey, usize, usize)>,
    /// The latest log key the rows up to each name.
    reach: Based<Option<LogKey>>,
    /// The key of the last call let go with the traces retired: no batch
    /// may list a call again at or before it.
    retired_to: Option<CallKey>,
    /// Rows with a tool call whose result is not found yet, by place, with
    /// those calls' ids.
    pending: Vec<(usize, Vec<String>)>,
    /// Per trace: its calls and statements taken so far, the call (its
    /// index in the trace) that first had each item in front of the model,
    /// the statements each call's own output made.
    calls_taken: Vec<usize>,
    said_taken: Vec<usize>,
    first: Vec<Vec<usize>>,
    said_in: Vec<Vec<Vec<usize>>>,
    /// Per trace: the keys of its calls as listed (in order: a trace's
    /// calls are in order of start, so its row for call `k` is at the place
    /// of its `k`-th key).
    keys: Vec<Vec<CallKey>>,
}

impl Listed {
    /// Brings the list up to `traces` (`rewound[t]`: where trace `t` was
    /// taken up from since — its start when converted again or new), the
    /// log's entries up to `kept` numbered as before (`None`: none).
    /// Returns the place of the first row listed again and the rows from
    /// there on; `None` when a call would come before one retired.
    pub(super) fn list(
        &mut self,
        traces: &[TraceOut],
        rewound: &[Option<Rewind>],
        merged: &Merged,
        kept: Option<LogKey>,
    ) -> Option<(usize, Vec<ModelCall>)> {
        let count = traces.len();
        self.calls_taken.resize(count, 0);
        self.said_taken.resize(count, 0);
        self.first.resize_with(count, Vec::new);
        self.said_in.resize_with(count, Vec::new);
        self.keys.resize_with(count, Vec::new);
        let mut cut = self.order.len();
        let at = |order: &Based<(CallKey, usize, usize)>, key: CallKey| {
            order.partition_point(|o| o.0 < key)
        };
        // What each trace adds: new calls from where it was taken (from
        // where it was taken up from, when it was), their statements.
        let mut added: Vec<(CallKey, usize, usize)> = Vec::new();
        let mut again = vec![usize::MAX; count];
        for (t, out) in traces.iter().enumerate() {
            if let Some(r) = rewound[t] {
                again[t] = r.calls;
                if let Some(&key) = self.keys[t].get(r.calls) {
                    cut = cut.min(at(&self.order, key));
                }
                self.keys[t].truncate(r.calls);
                self.calls_taken[t] = self.calls_taken[t].min(r.calls);
                self.said_taken[t] = self.said_taken[t].min(r.said);
                self.first[t].truncate(r.items);
                for k in self.first[t].iter_mut().filter(|k| **k >= r.calls) {
                    *k = usize::MAX;
                }
                self.said_in[t].truncate(r.calls);
                for said in &mut self.said_in[t] {
                    said.retain(|&i| i < r.said);
                }
            }
            let from = self.calls_taken[t];
            if let Some(call) = out.calls.get(from) {
                cut = cut.min(at(&self.order, call.key));
            }
            let first = &mut self.first[t];
            first.resize(out.items.len(), usize::MAX);
            for k in from..out.calls.len() {
                added.push((out.calls[k].key, t, k));
                for &n in &out.in_front[k] {
                    if first[n] == usize::MAX {
                        first[n] = k;
                    }
                }
            }
            self.said_in[t].resize_with(out.calls.len(), Vec::new);
            for i in self.said_taken[t]..out.said.len() {
                let x = &out.said[i];
                if let (0, Some(k)) = (x.met.0, x.call) {
                    self.said_in[t][k].push(i);
                    // A call's output is read with the call, so what it says
                    // comes with it; listed again all the same if not.
                    debug_assert!(k >= from, "a statement of call {k} came after it");
                    if k < from {
                        cut = cut.min(at(&self.order, out.calls[k].key));
                    }
                }
            }
            self.keys[t].extend(out.calls[from..].iter().map(|c| c.key));
            self.calls_taken[t] = out.calls.len();
            self.said_taken[t] = out.said.len();
        }
        if let Some(retired) = self.retired_to
            && added.iter().any(|a| a.0 <= retired)
        {
            return None;
        }
        // A tool call whose result is found now (a trace carried on never
        // loses or changes a result it found).
        let before = cut;
        for (p, ids) in self.pending.iter().filter(|(p, _)| *p < before) {
            let out = &traces[self.order[*p].1];
            if ids.iter().any(|id| out.by_call.contains_key(id)) {
                cut = cut.min(*p);
            }
        }
        // What is numbered again from the first entry the batch changed.
        let renumbered = match kept {
            Some(kept) => self.reach.partition_point(|r| r.is_none_or(|r| r <= kept)),
            None => 0,
        };
        cut = cut.min(renumbered);
        // The rows from `cut` listed again, in order.
        if cut < self.order.base() {
            return None;
        }
        let mut tail: Vec<(CallKey, usize, usize)> = self
            .order
            .drain_from(cut)
            .filter(|&(_, t, k)| k < again[t])
            .collect();
        tail.extend(added);
        tail.sort_unstable_by_key(|o| o.0);
        self.reach.truncate(cut);
        self.pending.retain(|(p, _)| *p < cut);
        let mut rows = Vec::with_capacity(tail.len());
        for (j, &(_, t, k)) in tail.iter().enumerate() {
            let p = cut + j;
            let (row, names, pending) = self.row(traces, merged, p, t, k);
            let reach = self.reach.last().copied().flatten().max(names);
            rows.push(row);
            self.reach.push(reach);
            if !pending.is_empty() {
                self.pending.push((p, pending));
            }
        }
        self.order.extend(tail);
        Some((cut, rows))
    }

    /// The place of the first call at or after `key` (with no key, the
    /// end).
    pub(super) fn place_of(&self, key: Option<CallKey>) -> usize {
        match key {
            Some(key) => self.order.partition_point(|o| o.0 < key),
            None => self.order.len(),
        }
    }

    /// The place of the first row naming a log entry after `key` (with no
    /// key, the first row).
    pub(super) fn naming_no_later(&self, key: Option<LogKey>) -> usize {
        match key {
            Some(key) => self.reach.partition_point(|r| r.is_none_or(|r| r <= key)),
            None => self.reach.base(),
        }
    }

    /// Whether any row was let go.
    pub(super) fn let_go(&self) -> bool {
        self.order.base() > 0
    }

    /// The calls let go: no batch lists them again.
    pub(super) fn settled(&self) -> usize {
        self.order.base()
    }

    /// Lets the rows before place `upto` go (they are never listed again)
    /// and retires traces `ts`, all of whose calls are among them: what
    /// their rows were made from is let go too.
    pub(super) fn retire(&mut self, ts: &[usize], upto: usize) {
        if let Some(last) = upto.checked_sub(1).and_then(|at| self.order.get(at)) {
            self.retired_to = Some(last.0);
        }
        self.order.let_go_before(upto);
        self.reach.let_go_before(upto);
        self.pending.retain(|(p, _)| *p >= upto);
        for &t in ts {
            self.calls_taken[t] = 0;
            self.said_taken[t] = 0;
            self.first[t] = Vec::new();
            self.said_in[t] = Vec::new();
            self.keys[t] = Vec::new();
        }
    }

    /// The row of call `k` of trace `t` at place `p`, the latest log key it
    /// names, and the ids of its tool calls that have no result yet.
    fn row(
        &self,
        traces: &[TraceOut],
        merged: &Merged,
        p: usize,
        t: usize,
        k: usize,
    ) -> (ModelCall, Option<LogKey>, Vec<String>) {
        let out = &traces[t];
        let call = &out.calls[k];
        let mut names: Option<LogKey> = None;
        let mut read_new: Vec<usize> = out.in_front[k]
            .iter()
            .copied()
            .filter(|&n| self.first[t][n] == k)
            .collect();
        read_new.sort_by_key(|&n| merged.rank(t, n));
        for &n in &read_new {
            names = names.max(merged.item_key(t, n));
        }
        let said = self.said_in[t][k]
            .iter()
            .filter_map(|&i| {
                names = names.max(merged.said_key(t, i));
                merged.said_id(t, i)
            })
            .collect();
        let mut pending = Vec::new();
        let tool_calls = call
            .tool_calls
            .iter()
            .map(|(id, name)| {
                let result = id.as_deref().and_then(|id| out.by_call.get(id).copied());
                if let (Some(id), None) = (id, result) {
                    pending.push(id.clone());
                }
                if let Some(n) = result {
                    names = names.max(merged.item_key(t, n));
                }
                ToolCallMade {
                    id: id.clone(),
                    name: name.clone(),
                    evidence: result.map(|n| merged.id(t, n)),
                }
            })
            .collect();
        let row = ModelCall {
            n: p + 1,
            agent: call.agent.to_string(),
            trace: call.trace.to_string(),
            span: call.span.clone(),
            started: call.key.0,
            ended: call.key.1,
            model: call.model.clone(),
            read_new: read_new.iter().map(|&n| merged.id(t, n)).collect(),
            said,
            tool_calls,
        };
        (row, names, pending)
    }
}
