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
//! A growing import keeps each trace's conversion and carries on only the
//! traces new spans fall into (trace.rs).

use super::*;
use trace::Counts;

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
    let mut by_first: Vec<usize> = (0..traces.len()).collect();
    by_first.sort_by_key(|&t| traces[t].first);
    summed(&mut report, traces, &by_first, content);
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
        let said_here = out
            .said
            .iter()
            .enumerate()
            .filter(|(_, x)| x.met.0 == 0 && x.call == Some(k))
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
