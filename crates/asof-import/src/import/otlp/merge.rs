//! A run converted a trace at a time, then merged (design.md §7, "One trace
//! at a time"). A span names only spans of its own trace, so passes 2–5 —
//! who the agent is, what it read, what it said — are a function of one
//! trace's spans: [`TraceOut::of`]. What crosses traces is the merge
//! ([`merge`]): the evidence numbered in recorded order (pass 4), what was
//! said swept in recorded order with each agent's latest assertion per topic
//! (pass 6b), the model calls numbered by their start (6d), the header (7).
//! Ties between traces at one instant are broken by [`Met`], the order in
//! which the passes of one whole run would have met them, so a run merged
//! from its traces is the run converted whole.
//!
//! A growing import keeps each trace's conversion and converts again only
//! the traces new spans fall into.

use super::*;

/// One trace converted on its own: everything the merge needs of it, owned
/// (no span is borrowed), so a growing import can keep it between batches.
pub(super) struct TraceOut {
    /// Where its first span is in the input: the order traces are summed up in.
    pub(super) first: usize,
    /// What joining its log records counted.
    pub(super) joined: read::JoinCounts,
    /// The trace's first start (where its beliefs' valid time starts by
    /// default).
    pub(super) start: Micros,
    /// What its agents read (pass 3), and what each model call's input held.
    pub(super) items: Vec<Ev>,
    pub(super) in_front: Vec<Vec<usize>>,
    /// Tool results by call id.
    pub(super) by_call: HashMap<String, usize>,
    /// Its model calls, in order of start.
    pub(super) calls: Vec<Call>,
    /// What its agents said (pass 5); the first `said_in_output` were said
    /// in model calls' outputs.
    pub(super) said: Vec<Said>,
    pub(super) said_in_output: usize,
    /// Its spans that carry evaluations, in the order they were read.
    pub(super) evaluated: Vec<Evaluated>,
    /// Its first root span: (start, place in the input, name).
    pub(super) root: Option<(Micros, usize, String)>,
    /// Model calls that carry no message content.
    pub(super) empty_calls: usize,
    /// What reading it counted, assumed and left out.
    pub(super) report: ImportReport,
}

/// A model call, as `asof calls` lists it.
pub(super) struct Call {
    /// (start, end, place in the input): the order calls are numbered in.
    pub(super) key: (Micros, Micros, usize),
    pub(super) agent: String,
    pub(super) trace: String,
    pub(super) span: String,
    pub(super) model: Option<String>,
    /// The tool calls its output made: (call id, tool name).
    pub(super) tool_calls: Vec<(Option<String>, String)>,
}

/// A span's evaluations, and what they can judge.
pub(super) struct Evaluated {
    pub(super) id: String,
    pub(super) locator: String,
    /// The model call it is (its index among the trace's calls).
    pub(super) call: Option<usize>,
    pub(super) events: Vec<wire::SpanEvent>,
}

impl TraceOut {
    /// Passes 2, 3 and 5 over the spans of one trace, its log records
    /// joined to them.
    pub(super) fn of(trace: read::JoinedTrace, options: &Options) -> TraceOut {
        let joined = trace.counts();
        let (spans, gidx) = (&trace.spans[..], &trace.gidx[..]);
        let mut report = trace.report;
        let run = Run::new(spans, gidx, options, &mut report);
        let gathered = gather_evidence(&run, options);
        let (mut said, from_output) = said_in_outputs(&run, options, &mut report);
        let said_in_output = said.len();
        said.extend(said_by_belief_tools(
            &run,
            options,
            &from_output,
            &mut report,
        ));
        said.extend(said_in_span_events(&run, &mut report));
        said.extend(said_in_memory(&run, options, &mut report));
        let calls = run
            .calls
            .iter()
            .map(|&c| {
                let s = &spans[c];
                let tool_calls = match &s.role {
                    Role::Call { output, .. } => output
                        .iter()
                        .flat_map(|m| &m.parts)
                        .filter_map(|p| match p {
                            Part::ToolCall { id, name, .. } => Some((id.clone(), name.clone())),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                Call {
                    key: (s.start, s.end, gidx[c]),
                    agent: run.agents[c].to_owned(),
                    trace: s.trace.clone(),
                    span: s.id.clone(),
                    model: s.model.clone(),
                    tool_calls,
                }
            })
            .collect();
        let evaluated = spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.events.iter().any(|e| e.name == EVALUATION))
            .map(|(i, s)| Evaluated {
                id: s.id.clone(),
                locator: s.locator(),
                call: match s.role {
                    Role::Call { .. } => run.calls.iter().position(|&c| c == i),
                    _ => None,
                },
                events: s
                    .events
                    .iter()
                    .filter(|e| e.name == EVALUATION)
                    .cloned()
                    .collect(),
            })
            .collect();
        let root = spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.parent.is_none())
            .map(|(i, s)| (s.start, gidx[i], s.name.clone()))
            .min_by_key(|(start, at, _)| (*start, *at));
        TraceOut {
            first: gidx.iter().copied().min().unwrap_or(usize::MAX),
            joined,
            start: run.trace_start.first().copied().unwrap_or_default(),
            by_call: gathered
                .by_call
                .iter()
                .map(|(&(_, id), &n)| (id.to_owned(), n))
                .collect(),
            items: gathered.items,
            in_front: gathered.in_front,
            calls,
            said,
            said_in_output,
            evaluated,
            root,
            empty_calls: run.empty_calls,
            report,
        }
    }
}

/// Whether a merge takes the evidence's text out of the traces (an import
/// read once) or copies it (a growing import keeps them for the next batch).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Content {
    Take,
    Keep,
}

/// Passes 4, 6 and 7: the traces converted one by one made one run's
/// dataset, `report` (what pass 1 read) completed.
pub(super) fn merge(
    first: &str,
    traces: &mut [TraceOut],
    mut report: ImportReport,
    options: &Options,
    content: Content,
) -> Draft {
    let calls: usize = traces.iter().map(|o| o.calls.len()).sum();
    let empty: usize = traces.iter().map(|o| o.empty_calls).sum();
    if empty > 0 {
        report.notes.push(format!(
            "{empty} of {calls} model calls carry no message content (capture was off, or it went to OTLP log records not given: add the logs file): nothing they read is evidence"
        ));
    }
    let mut by_first: Vec<usize> = (0..traces.len()).collect();
    by_first.sort_by_key(|&t| traces[t].first);
    for t in by_first {
        let out = &mut traces[t];
        take_report(
            &mut report,
            match content {
                Content::Take => std::mem::take(&mut out.report),
                Content::Keep => out.report.clone(),
            },
        );
    }
    // Every model call, in order of start across the traces.
    let mut call_order: Vec<(usize, usize)> = traces
        .iter()
        .enumerate()
        .flat_map(|(t, o)| (0..o.calls.len()).map(move |k| (t, k)))
        .collect();
    call_order.sort_by_key(|&(t, k)| traces[t].calls[k].key);
    let numbered = Numbered::of(traces);
    let mut built = evidence_events(traces, &numbered, content, &mut report);
    report.evidence = numbered.order.len();
    let call_agents: Vec<&str> = call_order
        .iter()
        .map(|&(t, k)| traces[t].calls[k].agent.as_str())
        .collect();
    said_events(
        traces,
        &numbered,
        &call_agents,
        options,
        &mut built,
        &mut report,
    );
    for (t, out) in traces.iter().enumerate() {
        evaluations(t, out, &numbered, &built.said_ids[t], &mut report);
    }
    report.calls = model_calls(traces, &call_order, &numbered, &built);
    built.in_recorded_order();
    notes(options, &mut report);
    let root = traces
        .iter()
        .filter_map(|o| o.root.as_ref())
        .min_by_key(|(start, at, _)| (*start, *at))
        .map(|(_, _, name)| name.clone());
    let header = header(first, root, built.agents, built.topics, options);
    Draft {
        header,
        events: built.events,
        origins: built.origins,
        report,
    }
}

/// Adds what reading one trace counted to the run's summary: counts add
/// up, what was left out is listed after what was before, a note is said
/// once.
fn take_report(into: &mut ImportReport, from: ImportReport) {
    for (to, counts) in [
        (&mut into.read, from.read),
        (&mut into.cases, from.cases),
        (&mut into.defaults, from.defaults),
        (&mut into.assertions_by_source, from.assertions_by_source),
    ] {
        for c in counts.0 {
            to.add(&c.what, c.count);
        }
    }
    into.skipped.extend(from.skipped);
    for note in from.notes {
        if !into.notes.contains(&note) {
            into.notes.push(note);
        }
    }
}

/// Pass 6d: each model call in order of its start, with the evidence first
/// in front of the model at it (so the lists of a run partition the evidence
/// that reached the model), what its output said, and its tool calls with the
/// evidence their results became (`asof calls`, design.md §5).
fn model_calls(
    traces: &[TraceOut],
    call_order: &[(usize, usize)],
    numbered: &Numbered,
    built: &Built,
) -> Vec<asof_core::model::ModelCall> {
    let mut seen: Vec<Vec<bool>> = traces.iter().map(|o| vec![false; o.items.len()]).collect();
    let mut calls = Vec::with_capacity(call_order.len());
    for (at, &(t, k)) in call_order.iter().enumerate() {
        let out = &traces[t];
        let call = &out.calls[k];
        let mut read_new: Vec<usize> = out.in_front[k]
            .iter()
            .copied()
            .filter(|&n| !std::mem::replace(&mut seen[t][n], true))
            .collect();
        read_new.sort_by_key(|&n| numbered.rank(t, n));
        let said_here = out.said[..out.said_in_output]
            .iter()
            .enumerate()
            .filter(|(_, x)| x.call == Some(k))
            .filter_map(|(i, _)| built.said_ids[t].get(i).cloned().flatten())
            .collect();
        let tool_calls = call
            .tool_calls
            .iter()
            .map(|(id, name)| asof_core::model::ToolCallMade {
                id: id.clone(),
                name: name.clone(),
                evidence: id
                    .as_deref()
                    .and_then(|id| out.by_call.get(id))
                    .map(|&n| numbered.id(t, n).to_owned()),
            })
            .collect();
        calls.push(asof_core::model::ModelCall {
            n: at + 1,
            agent: call.agent.clone(),
            trace: call.trace.clone(),
            span: call.span.clone(),
            started: call.key.0,
            ended: call.key.1,
            model: call.model.clone(),
            read_new: read_new
                .iter()
                .map(|&n| numbered.id(t, n).to_owned())
                .collect(),
            said: said_here,
            tool_calls,
        });
    }
    calls
}
