//! Passes 3, 4 and 6a of `import otlp` (design.md §7): what the agent read.
//! Every tool result is one item (its call id, else its order — never its
//! content), every user or system message, every medium, memory record and
//! retrieved document; each recorded when a model call first showed it;
//! numbered `T1, T2, …` in recorded order; kept whole.

use super::*;

/// The evidence of a run: tool results (from their spans, then from the
/// messages that show them) and user/system input messages; what each model
/// call's input held (indices into `items`); tool results by call id.
pub(super) struct Gathered<'s> {
    pub(super) items: Vec<Ev>,
    pub(super) in_front: Vec<Vec<usize>>,
    /// By (trace number, call id).
    pub(super) by_call: HashMap<(u32, &'s str), usize>,
}

/// Pass 3: the items a run's agents read, in three named passes — the tool
/// spans' results ([`Gathering::tool_spans`]), what a memory search or a
/// retrieval fetched ([`Gathering::fetched`]), then each model call's input
/// messages ([`Gathering::inputs`]), which find the tool results again and
/// add the user and system messages.
pub(super) fn gather_evidence<'s>(run: &Run<'s>, options: &Options) -> Gathered<'s> {
    let mut g = Gathering::tool_spans(run, options);
    let mut in_front: Vec<Vec<usize>> = vec![Vec::new(); run.calls.len()];
    g.fetched(&mut in_front);
    g.inputs(&mut in_front);
    Gathered {
        items: g.evidence,
        in_front,
        by_call: g.by_call,
    }
}

/// The run being read, the items found so far and the indexes that find
/// them again.
struct Gathering<'a, 's> {
    run: &'a Run<'s>,
    options: &'a Options,
    evidence: Vec<Ev>,
    /// By (trace number, call id).
    by_call: HashMap<(u32, &'s str), usize>,
    /// An id-less tool result, by (trace, agent, input message, part): the
    /// same message in the history every later call repeats.
    by_place: HashMap<(u32, &'s str, usize, usize), usize>,
    /// Each trace's tool results not yet read by a model call, in the order
    /// the tools started (read ones are dropped from the front as they are met).
    unread: Vec<std::collections::VecDeque<usize>>,
    /// A user or system message, by (trace, role, text).
    by_message: HashMap<(u32, &'s str, &'s str), usize>,
}

impl<'a, 's> Gathering<'a, 's> {
    /// Pass 3a: each tool span's result (or its error), one item per span.
    fn tool_spans(run: &'a Run<'s>, options: &'a Options) -> Gathering<'a, 's> {
        let spans = run.spans;
        let mut g = Gathering {
            run,
            options,
            evidence: Vec::new(),
            by_call: HashMap::new(),
            by_place: HashMap::new(),
            unread: vec![Default::default(); run.traces.len()],
            by_message: HashMap::new(),
        };
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
            let n = g.evidence.len();
            g.evidence.push(Ev {
                source: name.clone(),
                kind: "other",
                content,
                observed: s.end,
                recorded: s.end,
                locator: s.locator(),
                call_id: call_id.clone(),
                seen: false,
                met: Met(0, s.end, 0, run.gidx[t], 0, 0),
            });
            if let Some(id) = call_id {
                g.by_call.entry((run.trace_of[t], id.as_str())).or_insert(n);
            }
            g.unread[run.trace_of[t] as usize].push_back(n);
            started.push(s.start);
        }
        // The n-th tool span run after a model call's tool calls answers the n-th
        // of them: queues are in the order the tools started (parallel tools
        // may end in another order).
        for queue in &mut g.unread {
            queue
                .make_contiguous()
                .sort_by_key(|&n| (started[n], g.evidence[n].observed, n));
        }
        g
    }

    /// Pass 3b: what a memory search or a retrieval returned is in front of
    /// the agent's next model call (design.md §7): it was fetched for it.
    fn fetched(&mut self, in_front: &mut [Vec<usize>]) {
        let run = self.run;
        let spans = run.spans;
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
                run.trace_of[c] == run.trace_of[i]
                    && run.agents[c] == run.agents[i]
                    && spans[c].start >= s.end
            });
            for (j, r) in records.iter().enumerate() {
                let n = self.evidence.len();
                let place = match &r.id {
                    Some(id) => format!("{what} {id}"),
                    None => format!("{what} {j}"),
                };
                self.evidence.push(Ev {
                    source: source.clone(),
                    kind: "other",
                    content: r.content.clone(),
                    observed: s.end,
                    recorded: s.end,
                    locator: format!("{} {place}", s.locator()),
                    call_id: None,
                    seen: true,
                    met: Met(1, 0, 0, run.gidx[i], j, 0),
                });
                if let Some(k) = next {
                    in_front[k].push(n);
                }
            }
        }
    }

    /// Pass 3c: each model call's input messages. Each call repeats the
    /// history before it: a message at the same place of the same agent's
    /// history in the same trace, the same (shared) message, is what it was
    /// when first read — its items are taken as they were, so a long run is
    /// read in time that grows with its calls, not their square.
    fn inputs(&mut self, in_front: &mut [Vec<usize>]) {
        let run = self.run;
        // (trace, agent, place in the history) → the message read there and its items.
        type Place = (usize, usize, usize);
        let mut read_before: HashMap<Place, (Arc<Msg>, Vec<usize>)> = HashMap::new();
        // Each agent's number, in order of first appearance.
        let mut ix: HashMap<&str, usize> = HashMap::new();
        // The call (k + 1) whose input last listed each item.
        let mut listed: Vec<usize> = Vec::new();
        for (k, &c) in run.calls.iter().enumerate() {
            let Role::Call { input, .. } = &run.spans[c].role else {
                continue;
            };
            let t = run.trace_of[c] as usize;
            let next = ix.len();
            let ag = *ix.entry(run.agents[c]).or_insert(next);
            for (i, m) in input.iter().enumerate() {
                let found_before = read_before
                    .get(&(t, ag, i))
                    .filter(|(known, _)| Arc::ptr_eq(known, m))
                    .map(|(_, found)| found.clone());
                let found_here = match found_before {
                    Some(found) => found,
                    None => {
                        let found = self.message(c, i, m);
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
    }

    /// The items input message `i` of call span `c` shows, read the first
    /// time it is met.
    fn message(&mut self, c: usize, i: usize, m: &'s Arc<Msg>) -> Vec<usize> {
        let run = self.run;
        let s = &run.spans[c];
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
                // A user or system message, or media the model was
                // given (design.md §7): once per trace, role and text.
                Part::Text(text) | Part::Media(text)
                    if matches!(part, Part::Media(_))
                        || ((m.role == "user" || m.role == "system")
                            && !text.trim().is_empty()) =>
                {
                    let key = (run.trace_of[c], m.role.as_str(), text.as_str());
                    let evidence = &mut self.evidence;
                    Some(*self.by_message.entry(key).or_insert_with(|| {
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
                            met: Met(2, s.start, s.end, run.gidx[c], i, j),
                        });
                        n
                    }))
                }
                Part::ToolResult { id, content } => {
                    self.tool_result(c, (i, j), m, id, content, locator)
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
    fn tool_result(
        &mut self,
        c: usize,
        (i, j): (usize, usize),
        m: &'s Arc<Msg>,
        id: &'s Option<String>,
        content: &str,
        locator: impl Fn() -> String,
    ) -> Option<usize> {
        let (run, options) = (self.run, self.options);
        let s = &run.spans[c];
        let trace = run.trace_of[c];
        let tool_name = id
            .as_ref()
            .and_then(|id| run.emitted.get(&(trace, id.as_str())))
            .map(|&(name, _)| name)
            .or(m.name.as_deref());
        if tool_name.is_some_and(|name| is_belief_tool(options, name)) {
            return None;
        }
        let place = (trace, run.agents[c], i, j);
        let known = match id {
            Some(id) => self.by_call.get(&(trace, id.as_str())).copied(),
            None => self.by_place.get(&place).copied(),
        }
        .or_else(|| {
            let evidence = &self.evidence;
            let queue = &mut self.unread[trace as usize];
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
                let e = &mut self.evidence[n];
                if !e.seen {
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
                let n = self.evidence.len();
                self.evidence.push(Ev {
                    source: tool_name.unwrap_or("tool").to_owned(),
                    kind: "other",
                    content: content.to_owned(),
                    observed: s.start,
                    recorded: s.start,
                    locator: locator(),
                    call_id: id.clone(),
                    seen: true,
                    met: Met(2, s.start, s.end, run.gidx[c], i, j),
                });
                n
            }
        };
        match id {
            Some(id) => {
                self.by_call.entry((trace, id.as_str())).or_insert(n);
            }
            None => {
                self.by_place.entry(place).or_insert(n);
            }
        }
        Some(n)
    }
}

/// The evidence ids (`T1`, `T2` … in recorded order across the run's
/// traces) and the order itself.
pub(super) struct Numbered {
    /// (trace, item) in recorded order.
    pub(super) order: Vec<(usize, usize)>,
    /// Each trace's items' ranks from 0.
    ranks: Vec<Vec<usize>>,
    /// Each trace's items' ids.
    ids: Vec<Vec<String>>,
}

impl Numbered {
    /// Pass 4.
    pub(super) fn of(traces: &[TraceOut]) -> Numbered {
        let mut order: Vec<(usize, usize)> = traces
            .iter()
            .enumerate()
            .flat_map(|(t, out)| (0..out.items.len()).map(move |n| (t, n)))
            .collect();
        order.sort_by_key(|&(t, n)| {
            let e = &traces[t].items[n];
            (e.recorded, e.observed, e.met)
        });
        let mut ranks: Vec<Vec<usize>> = traces.iter().map(|o| vec![0; o.items.len()]).collect();
        let mut ids: Vec<Vec<String>> = traces
            .iter()
            .map(|o| vec![String::new(); o.items.len()])
            .collect();
        for (rank, &(t, n)) in order.iter().enumerate() {
            ranks[t][n] = rank;
            ids[t][n] = format!("T{}", rank + 1);
        }
        Numbered { order, ranks, ids }
    }

    /// The id of item `n` of trace `t`.
    pub(super) fn id(&self, t: usize, n: usize) -> &str {
        &self.ids[t][n]
    }

    /// Its rank from 0: its place in the order.
    pub(super) fn rank(&self, t: usize, n: usize) -> usize {
        self.ranks[t][n]
    }

    /// The item numbered `id`: `T` and its rank from 1, written as
    /// [`Numbered::of`] writes it (no sign, no leading zero).
    pub(super) fn item(&self, id: &str) -> Option<(usize, usize)> {
        let digits = id.strip_prefix('T')?;
        if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let rank: usize = digits.parse().ok()?;
        self.order.get(rank.checked_sub(1)?).copied()
    }
}

/// The dataset's events so far, where each came from, and the agents and
/// topics they name (in first-seen order).
pub(super) struct Built {
    pub(super) events: Vec<RawEvent>,
    pub(super) origins: Vec<Location>,
    /// Each event's recorded instant.
    pub(super) recorded: Vec<Micros>,
    pub(super) agents: Vec<String>,
    pub(super) topics: Vec<String>,
    /// The event id (`B…`, `R…`) each thing said became, by trace and its
    /// index there.
    pub(super) said_ids: Vec<Vec<Option<String>>>,
}

impl Built {
    /// Puts the events in recorded order, evidence before what was said at
    /// one instant, each kind in its own order otherwise (a stable merge of
    /// two runs already in recorded order). So what a trace adds later lands
    /// at the end of the log unless it was recorded earlier: a store that
    /// follows a growing trace rewrites only the events from the first one
    /// that changed (design.md §7, "Live ingestion").
    pub(super) fn in_recorded_order(&mut self) {
        let mut order: Vec<usize> = (0..self.events.len()).collect();
        order.sort_by_key(|&i| self.recorded[i]);
        let mut events: Vec<Option<RawEvent>> = self.events.drain(..).map(Some).collect();
        let mut origins: Vec<Option<Location>> = self.origins.drain(..).map(Some).collect();
        for &i in &order {
            self.events.extend(events[i].take());
            self.origins.extend(origins[i].take());
        }
        self.recorded = order.iter().map(|&i| self.recorded[i]).collect();
    }
}

/// Pass 6a: one evidence event per item, in recorded order.
///
/// Takes each item's content when `content` says nothing reads it after.
pub(super) fn evidence_events(
    traces: &mut [TraceOut],
    numbered: &Numbered,
    content: merge::Content,
    report: &mut ImportReport,
) -> Built {
    let said: usize = traces.iter().map(|o| o.said.len()).sum();
    let all = numbered.order.len() + said;
    let mut events: Vec<RawEvent> = Vec::with_capacity(all);
    let mut origins: Vec<Location> = Vec::with_capacity(all);
    let mut recorded: Vec<Micros> = Vec::with_capacity(all);
    for &(t, n) in &numbered.order {
        let e = &mut traces[t].items[n];
        let mut locator = e.locator.clone();
        if let Some(id) = &e.call_id {
            locator.push_str(&format!(" tool call {id}"));
        }
        let summary: String = if e.content.is_empty() {
            format!("{} result (content not captured in the trace)", e.source)
        } else {
            asof_core::text::first_chars(&e.content, SUMMARY_CHARS).to_owned()
        };
        events.push(RawEvent::Evidence(RawEvidence {
            id: numbered.id(t, n).to_owned(),
            kind: e.kind.into(),
            source: e.source.clone(),
            locator,
            observed_at: RawTime::at(e.observed),
            observed_until: None,
            recorded_at: RawTime::at(e.recorded),
            reliability: None,
            content: crate::import::whole_content(
                match content {
                    merge::Content::Take => std::mem::take(&mut e.content),
                    merge::Content::Keep => e.content.clone(),
                },
                &summary,
                report,
            ),
            summary,
        }));
        origins.push(Location::record("evidence", events.len()));
        recorded.push(e.recorded);
    }
    Built {
        events,
        origins,
        recorded,
        agents: Vec::new(),
        topics: Vec::new(),
        said_ids: Vec::new(),
    }
}
