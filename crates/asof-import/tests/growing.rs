//! A growing OTLP import (`otlp::Growing`: what `asof serve` and a trace's
//! `--follow` run) against `asof import otlp` of the same lines read whole:
//! after every batch, the import of everything fed so far is the import of
//! those lines — header, events, where each came from, and the summary —
//! whatever order the spans arrive in and however the lines are cut.

use asof_import::import::otlp::{self, Growing, Options, rules};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// What an import made, as comparable text: its header, events and their
/// origins (each in full), and its summary.
fn made(draft: &asof_import::import::Draft) -> (String, String, String, String) {
    (
        format!("{:?}", draft.header),
        format!("{:#?}", draft.events),
        format!("{:?}", draft.origins),
        serde_json::to_string_pretty(&draft.report).expect("a summary is JSON"),
    )
}

/// Feeds `lines` to a growing import in batches cut after the given line
/// counts and checks it against the whole read after each batch: the log
/// it hands over (the events before the first changed as the last batch
/// gave them, the rest new) as the whole draft would be, and its whole
/// draft too.
///
/// The import reads its lines again from what was fed (as a follow reads
/// its file again), so spans let their bodies go as they do live.
fn check_batches(name: &str, lines: &[String], cuts: &[usize], options: &Options) -> Growing {
    let file: Arc<Mutex<Vec<u8>>> = Arc::default();
    let again = file.clone();
    let mut growing =
        Growing::new(name, options).reading_again(Box::new(move |from: u64, len: u64| {
            let bytes = again.lock().map_err(|e| e.to_string())?;
            let (from, to) = (from as usize, (from + len) as usize);
            bytes
                .get(from..to)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| format!("bytes {from}..{to} of {} fed", bytes.len()))
        }));
    let mut log: Vec<String> = Vec::new();
    let mut origins: Vec<String> = Vec::new();
    let mut calls: Vec<asof_core::model::ModelCall> = Vec::new();
    let mut fed = 0;
    for &cut in cuts.iter().chain(std::iter::once(&lines.len())) {
        let cut = cut.clamp(fed, lines.len());
        if cut == fed {
            continue;
        }
        let batch: String = lines[fed..cut].iter().map(|l| format!("{l}\n")).collect();
        file.lock()
            .expect("the file")
            .extend_from_slice(batch.as_bytes());
        growing.feed(batch.as_bytes()).expect("the lines feed");
        fed = cut;
        let whole: String = lines[..fed].iter().map(|l| format!("{l}\n")).collect();
        match (growing.advance(), otlp::read(name, &whole, options)) {
            (Ok(mut a), Ok(w)) => {
                assert!(a.keep <= log.len(), "keeps no more than it gave");
                // The model calls, like the log, from the first changed.
                assert!(
                    a.calls_from <= calls.len(),
                    "keeps no more calls than it gave"
                );
                calls.truncate(a.calls_from);
                calls.append(&mut a.report.calls);
                a.report.calls = calls.clone();
                log.truncate(a.keep);
                log.extend(a.events.iter().map(|e| format!("{e:#?}")));
                origins.truncate(a.keep);
                origins.extend(a.origins.iter().map(|o| format!("{o:?}")));
                let w_events: Vec<String> = w.events.iter().map(|e| format!("{e:#?}")).collect();
                let w_origins: Vec<String> = w.origins.iter().map(|o| format!("{o:?}")).collect();
                assert_eq!(
                    format!("{:?}", a.header),
                    format!("{:?}", w.header),
                    "header after {fed} lines"
                );
                assert_eq!(log, w_events, "events after {fed} lines");
                assert_eq!(origins, w_origins, "origins after {fed} lines");
                let summary = |r: &asof_import::import::ImportReport| {
                    serde_json::to_string_pretty(r).expect("a summary is JSON")
                };
                assert_eq!(
                    summary(&a.report),
                    summary(&w.report),
                    "summary after {fed} lines"
                );
                let d = growing.draft().expect("the whole draft");
                assert_eq!(made(&d), made(&w), "the whole draft after {fed} lines");
                // As a follow does once the store took the batch.
                growing.retire();
            }
            (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string()),
            (g, w) => panic!(
                "after {fed} lines the growing import {} and the whole read {}",
                if g.is_ok() { "read" } else { "failed" },
                if w.is_ok() { "read" } else { "failed" },
            ),
        }
    }
    growing
}

fn attr(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

/// A span of trace `trace` in the GenAI conventions.
fn span(trace: &str, id: u64, parent: Option<u64>, name: &str, times: (i64, i64)) -> Value {
    let mut s = json!({
        "traceId": trace, "spanId": format!("{id:016x}"), "name": name, "kind": 1,
        "startTimeUnixNano": format!("{}", (1_776_000_000 + times.0) as i128 * 1_000_000_000),
        "endTimeUnixNano": format!("{}", (1_776_000_000 + times.1) as i128 * 1_000_000_000),
        "attributes": [], "status": {},
    });
    if let Some(p) = parent {
        s["parentSpanId"] = json!(format!("{p:016x}"));
    }
    s
}

/// One step of an agent's run, as the generator draws it.
#[derive(Debug, Clone)]
struct Step {
    trace: usize,
    /// When the model call starts (s), how long it and its tool take.
    at: i64,
    call_len: i64,
    tool_len: i64,
    /// Whether the tool call carries its id (on the span and the result).
    with_id: bool,
    /// What the call does: 0 a tool, 1 a belief tool, 2 a retraction, 3
    /// prose only.
    what: u8,
    topic: u8,
    claim: u8,
    /// Whether the tool's span is exported at all, and an `asof.belief`
    /// event on the call.
    tool_span: bool,
    event: bool,
    /// What a belief names as its support: the previous step's tool call,
    /// an evidence id, or nothing (asof cites what the call read).
    cites: u8,
}

fn step() -> impl Strategy<Value = Step> {
    (
        0usize..3,
        0i64..40,
        (0i64..3, 0i64..3),
        any::<bool>(),
        0u8..4,
        (0u8..3, 0u8..3),
        (prop::bool::weighted(0.8), prop::bool::weighted(0.15)),
        0u8..4,
    )
        .prop_map(
            |(
                trace,
                at,
                (call_len, tool_len),
                with_id,
                what,
                (topic, claim),
                (tool_span, event),
                cites,
            )| {
                Step {
                    trace,
                    at,
                    call_len,
                    tool_len,
                    with_id,
                    what,
                    topic,
                    claim,
                    tool_span,
                    event,
                    cites,
                }
            },
        )
}

/// The spans of the runs the steps make: per trace an agent span (or none,
/// then the service is the agent), each step a model call whose input shows
/// the trace's previous tool result and whose output calls a tool or states
/// a belief in prose, and the tool's span.
fn spans_of(steps: &[Step], agent_spans: [bool; 3]) -> Vec<Value> {
    let trace_id = |t: usize| format!("{:032x}", 0xa5_u128 + t as u128);
    let mut out = Vec::new();
    let mut next = 1u64;
    let mut last: [Option<(Option<String>, String)>; 3] = [None, None, None];
    for (t, &has) in agent_spans.iter().enumerate() {
        if has {
            let mut s = span(&trace_id(t), 1000 + t as u64, None, "invoke_agent", (0, 50));
            s["attributes"] = json!([
                attr("gen_ai.operation.name", "invoke_agent"),
                attr("gen_ai.agent.name", &format!("agent-{t}"))
            ]);
            out.push(s);
        }
    }
    for (n, st) in steps.iter().enumerate() {
        let t = st.trace;
        let parent = agent_spans[t].then_some(1000 + t as u64);
        let call_id = format!("call_{n}");
        let mut input = vec![
            json!({"role": "user", "parts": [{"type": "text", "content": format!("look at topic-{}", st.topic)}]}),
        ];
        if let Some((id, result)) = &last[t] {
            let mut part = json!({"type": "tool_call_response", "response": result});
            if let Some(id) = id {
                part["id"] = json!(id);
            }
            input.push(json!({"role": "tool", "parts": [part]}));
        }
        let (tool, args) = match st.what {
            1 => {
                let mut args = json!({"topic": format!("topic-{}", st.topic), "claim": format!("claim-{}", st.claim), "confidence": 0.5});
                match st.cites {
                    1 => args["supported_by"] = json!([format!("call_{}", n.saturating_sub(1))]),
                    2 => args["supported_by"] = json!([format!("T{}", 1 + n % 3)]),
                    _ => {}
                }
                ("record_belief", args)
            }
            2 => (
                "retract_belief",
                json!({"topic": format!("topic-{}", st.topic), "claim": format!("claim-{}", st.claim)}),
            ),
            _ => ("query", json!({"q": format!("m{}", st.claim)})),
        };
        let mut parts =
            vec![json!({"type": "text", "content": format!("root cause is claim-{}", st.claim)})];
        if st.what != 3 {
            let mut call = json!({"type": "tool_call", "name": tool, "arguments": args});
            if st.with_id {
                call["id"] = json!(call_id);
            }
            parts.push(call);
        }
        let output = json!([{"role": "assistant", "parts": parts}]);
        let id = next;
        next += 1;
        let mut call = span(
            &trace_id(t),
            id,
            parent,
            "chat m",
            (st.at, st.at + st.call_len),
        );
        call["attributes"] = json!([
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.request.model", "m"),
            attr("gen_ai.input.messages", &Value::Array(input).to_string()),
            attr("gen_ai.output.messages", &output.to_string()),
        ]);
        if st.event {
            call["events"] = json!([{
                "name": "asof.belief",
                "timeUnixNano": format!("{}", (1_776_000_000 + st.at) as i128 * 1_000_000_000),
                "attributes": [attr("asof.topic", "side"), attr("asof.claim", &format!("c{}", st.claim))],
            }]);
        }
        out.push(call);
        if st.what != 3 && st.tool_span {
            let start = st.at + st.call_len;
            let mut tool_span = span(
                &trace_id(t),
                next,
                parent,
                "execute_tool",
                (start, start + st.tool_len),
            );
            next += 1;
            let result = format!("value {n}");
            let mut attributes = vec![
                attr("gen_ai.operation.name", "execute_tool"),
                attr("gen_ai.tool.name", tool),
                attr("gen_ai.tool.call.arguments", &args.to_string()),
                attr("gen_ai.tool.call.result", &result),
            ];
            if st.with_id {
                attributes.push(attr("gen_ai.tool.call.id", &call_id));
            }
            tool_span["attributes"] = Value::Array(attributes);
            out.push(tool_span);
            last[t] = (st.what == 0).then(|| (st.with_id.then(|| call_id.clone()), result));
        }
    }
    out
}

/// Spans cut into requests of the given sizes, one OTLP/JSON line each.
fn requests(spans: &[Value], sizes: &[usize]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut at = 0;
    let mut sizes = sizes.iter().cycle();
    while at < spans.len() {
        let n = (*sizes.next().unwrap_or(&1)).max(1).min(spans.len() - at);
        lines.push(
            json!({"resourceSpans": [{
                "resource": {"attributes": [attr("service.name", "svc")]},
                "scopeSpans": [{"scope": {"name": "t"}, "spans": spans[at..at + n]}],
            }]})
            .to_string(),
        );
        at += n;
    }
    lines
}

fn options(rules: bool) -> Options {
    let rules = match rules {
        true => rules::parse(
            "rules.yaml",
            "rules:\n  - topic: root-cause\n    in: [assistant]\n    pattern: \"root cause is (?P<claim>[a-z0-9-]+)\"\n",
        )
        .expect("the rules parse"),
        false => Vec::new(),
    };
    Options {
        rules,
        ..Options::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Spans of up to three traces, exported in any order (a child before
    /// its parent, the agent span last or first, a span sent twice), cut
    /// into requests and the requests into batches at random.
    #[test]
    fn a_growing_import_is_the_whole_import_after_every_batch(
        steps in prop::collection::vec(step(), 1..14),
        agent_spans in any::<[bool; 3]>(),
        order in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
        again in prop::option::of(any::<prop::sample::Index>()),
        sizes in prop::collection::vec(1usize..4, 1..6),
        cuts in prop::collection::vec(0usize..20, 0..6),
        rules in any::<bool>(),
    ) {
        let mut spans = spans_of(&steps, agent_spans);
        // Exported in another order: each swap moves a span.
        for (k, ix) in order.iter().enumerate() {
            let (a, b) = (k % spans.len(), ix.index(spans.len()));
            spans.swap(a, b);
        }
        if let Some(ix) = again {
            let copy = spans[ix.index(spans.len())].clone();
            spans.push(copy);
        }
        let lines = requests(&spans, &sizes);
        let mut cuts = cuts;
        cuts.sort_unstable();
        check_batches("run.otlp.jsonl", &lines, &cuts, &options(rules));
    }

    /// Longer runs, their spans exported as they end, the requests
    /// overtaking each other a little (exporters racing to one receiver),
    /// a batch every request or two: a trace is taken up from a checkpoint
    /// a batch or two back, and the import is still the whole read.
    #[test]
    fn racing_requests_are_the_whole_import_after_every_batch(
        steps in prop::collection::vec(step(), 8..40),
        gaps in prop::collection::vec(0i64..3, 40),
        agent_spans in any::<[bool; 3]>(),
        overtakes in prop::collection::vec((any::<prop::sample::Index>(), 1usize..3), 0..6),
        sizes in prop::collection::vec(1usize..4, 1..6),
        per_batch in 1usize..3,
        rules in any::<bool>(),
    ) {
        let mut lines = as_they_end(in_time(steps, &gaps), agent_spans, &sizes);
        let len = lines.len();
        let overtakes: Vec<(usize, usize)> =
            overtakes.iter().map(|(at, by)| (at.index(len), *by)).collect();
        overtake(&mut lines, &overtakes);
        let cuts: Vec<usize> = (per_batch..lines.len()).step_by(per_batch).collect();
        check_batches("run.otlp.jsonl", &lines, &cuts, &options(rules));
    }
}

/// The steps one after another: each starts `gaps` after the one before
/// it ended (its call and its tool).
fn in_time(mut steps: Vec<Step>, gaps: &[i64]) -> Vec<Step> {
    let mut at = 0;
    for (st, gap) in steps
        .iter_mut()
        .zip(gaps.iter().chain(std::iter::repeat(&0)))
    {
        st.at = at + gap;
        at = st.at + st.call_len + st.tool_len;
    }
    steps
}

/// The requests of a run whose spans are exported as they end, cut by
/// `sizes`.
fn as_they_end(steps: Vec<Step>, agent_spans: [bool; 3], sizes: &[usize]) -> Vec<String> {
    let mut spans = spans_of(&steps, agent_spans);
    let end = |s: &Value| -> i128 {
        s["endTimeUnixNano"]
            .as_str()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0)
    };
    spans.sort_by_key(end);
    requests(&spans, sizes)
}

/// Each `(at, by)` moves request `at` ahead of the `by` before it.
fn overtake(lines: &mut Vec<String>, overtakes: &[(usize, usize)]) {
    for &(at, by) in overtakes {
        let line = lines.remove(at);
        lines.insert(at.saturating_sub(by), line);
    }
}

/// A request that overtakes the one before it makes the trace be taken up
/// from the checkpoint before that one, not converted from its start (what
/// the status lines count), and the import is still the whole read.
#[test]
fn a_request_overtaking_another_takes_the_trace_up_from_a_checkpoint() {
    let steps: Vec<Step> = (0..12)
        .map(|n| Step {
            trace: 0,
            at: 0,
            call_len: 1,
            tool_len: 1,
            with_id: true,
            what: if n % 3 == 2 { 1 } else { 0 },
            topic: (n % 2) as u8,
            claim: (n % 3) as u8,
            tool_span: true,
            event: false,
            cites: 0,
        })
        .collect();
    let mut lines = as_they_end(in_time(steps, &[1; 12]), [false; 3], &[2]);
    assert_eq!(lines.len(), 12);
    overtake(&mut lines, &[(9, 1)]);
    let cuts: Vec<usize> = (1..lines.len()).collect();
    let growing = check_batches("run.otlp.jsonl", &lines, &cuts, &options(true));
    let count = |t: &asof_import::import::Tally| t.0.iter().map(|c| c.count).sum::<usize>();
    assert_eq!(count(growing.converted_again()), 0, "never from its start");
    assert!(
        count(growing.taken_up()) >= 1,
        "taken up from a checkpoint: {:?}",
        growing.taken_up()
    );
}

/// Each span and each log record of the requests in `text` as a request of
/// its own (with its resource and scope): the finest cut of a run into
/// batches.
fn one_per_line(text: &str) -> Vec<String> {
    let pick = |v: &Value, keys: [&str; 2]| -> Vec<Value> {
        keys.iter()
            .find_map(|k| v.get(*k).and_then(Value::as_array).cloned())
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let request: Value = serde_json::from_str(line).expect("a request a line");
        for (top, scopes, items) in [
            (
                ["resourceSpans", "resource_spans"],
                ["scopeSpans", "scope_spans"],
                ["spans", "spans"],
            ),
            (
                ["resourceLogs", "resource_logs"],
                ["scopeLogs", "scope_logs"],
                ["logRecords", "log_records"],
            ),
        ] {
            for resource in pick(&request, top) {
                for scope in pick(&resource, scopes) {
                    for item in pick(&scope, items) {
                        let one = json!({
                            top[0]: [{
                                "resource": resource.get("resource").cloned().unwrap_or(json!({})),
                                scopes[0]: [{
                                    "scope": scope.get("scope").cloned().unwrap_or(json!({})),
                                    items[0]: [item],
                                }],
                            }],
                        });
                        out.push(one.to_string());
                    }
                }
            }
        }
    }
    out
}

/// The real instrumentations' traces, and the bundled ones, cut into one
/// request per span and per log record and fed a request at a time: the
/// growing import equals the whole read after every one.
#[test]
fn real_traces_cut_at_every_line_equal_the_whole_read() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let read = |path: &str| {
        std::fs::read_to_string(format!("{root}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let rules_of = |path: &str| Options {
        rules: rules::parse(path, &read(path)).expect("rules"),
        ..Options::default()
    };
    let fixtures = "tests/fixtures/otlp";
    let cases: Vec<(String, String, Options)> = vec![
        (
            "sre-agent".into(),
            read("datasets/sre-agent.otlp.jsonl"),
            rules_of("datasets/sre-agent.rules.yaml"),
        ),
        (
            "sre-agent-rerun".into(),
            read("datasets/sre-agent-rerun.otlp.jsonl"),
            rules_of("datasets/sre-agent.rules.yaml"),
        ),
        (
            "openai-v2".into(),
            read(&format!("{fixtures}/openai-v2.traces.jsonl"))
                + &read(&format!("{fixtures}/openai-v2.logs.jsonl")),
            rules_of(&format!("{fixtures}/openai-v2.rules.yaml")),
        ),
        (
            "genai-logs".into(),
            read(&format!("{fixtures}/genai-logs.logs.jsonl"))
                + &read(&format!("{fixtures}/genai-logs.traces.jsonl")),
            Options::default(),
        ),
        (
            "prose".into(),
            read(&format!("{fixtures}/prose.jsonl")),
            rules_of(&format!("{fixtures}/prose.rules.yaml")),
        ),
        (
            "features".into(),
            read(&format!("{fixtures}/features.jsonl")),
            rules_of(&format!("{fixtures}/features.rules.yaml")),
        ),
    ]
    .into_iter()
    .chain(
        [
            "genai",
            "genai-events",
            "openinference",
            "openllmetry",
            "recheck-genai",
            "recheck-openinference",
            "recheck-openllmetry",
            "span-events",
            "whole",
        ]
        .iter()
        .map(|f| {
            (
                f.to_string(),
                read(&format!("{fixtures}/{f}.jsonl")),
                Options::default(),
            )
        }),
    )
    .collect();
    let mut read_again = 0;
    for (name, text, options) in cases {
        let lines = one_per_line(&text);
        assert!(
            lines.len() > 3,
            "{name} has {} spans and records",
            lines.len()
        );
        let every: Vec<usize> = (1..lines.len()).collect();
        let growing = check_batches(&format!("{name}.jsonl"), &lines, &every, &options);
        read_again += growing.read_again();
    }
    // Agent spans come last: their traces were converted from the start,
    // the spans' bodies read again from the lines fed.
    assert!(read_again > 0, "no trace's spans were read again");
}

/// A model call of trace `a5…` from `at` to `end` (s) whose output calls
/// `record_belief` with `args`.
fn believing(id: u64, (at, end): (i64, i64), args: Value) -> Value {
    let output = json!([{"role": "assistant", "parts": [
        {"type": "tool_call", "id": format!("b{id}"), "name": "record_belief", "arguments": args},
    ]}]);
    let mut call = span(&format!("{:032x}", 0xa5), id, None, "chat m", (at, end));
    call["attributes"] = json!([
        attr("gen_ai.operation.name", "chat"),
        attr("gen_ai.output.messages", &output.to_string()),
    ]);
    call
}

/// A `query` tool span of trace `a5…` with call id `call`.
fn querying(id: u64, (at, end): (i64, i64), call: &str) -> Value {
    let mut tool = span(
        &format!("{:032x}", 0xa5),
        id,
        None,
        "execute_tool",
        (at, end),
    );
    tool["attributes"] = json!([
        attr("gen_ai.operation.name", "execute_tool"),
        attr("gen_ai.tool.name", "query"),
        attr("gen_ai.tool.call.id", call),
        attr("gen_ai.tool.call.result", "42"),
    ]);
    tool
}

/// Spans that arrive late and change what was said before them without
/// changing how the trace was read: a tool that started before every span
/// read (the run's start, where a belief naming no valid_from starts, moves
/// back), and the tool a belief cited by call id before it arrived (the
/// citation now finds it). After each batch the growing import equals the
/// whole read.
#[test]
fn late_spans_change_what_was_said_before_them() {
    let belief = json!({"topic": "root-cause", "claim": "disk"});
    let moved_start = [
        believing(1, (10, 11), belief.clone()),
        querying(2, (5, 30), "q1"),
    ];
    let mut cited = belief;
    cited["supported_by"] = json!(["q7"]);
    let found_later = [
        believing(1, (10, 20), cited.clone()),
        querying(2, (12, 15), "q7"),
    ];
    // Found after the belief: still not cited, and the summary says why
    // (beliefs after it put the sweep's kept states past it).
    let plain = json!({"topic": "side", "claim": "c"});
    let found_after = [
        believing(1, (10, 20), cited),
        believing(3, (21, 22), plain.clone()),
        believing(4, (22, 23), plain.clone()),
        believing(5, (23, 24), plain.clone()),
        believing(6, (24, 25), plain),
        querying(2, (26, 30), "q7"),
    ];
    for spans in [&moved_start[..], &found_later[..], &found_after[..]] {
        let lines = requests(spans, &[1]);
        check_batches(
            "late.otlp.jsonl",
            &lines,
            &[lines.len() - 1],
            &Options::default(),
        );
    }
}

/// Feeds the bundled trace's lines to `growing` one at a time (`written`
/// first sees each, as the file would hold it) until a batch stops the
/// import; what it said.
fn first_stop(mut growing: Growing, mut written: impl FnMut(&str)) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let text = std::fs::read_to_string(format!("{root}/datasets/sre-agent.otlp.jsonl"))
        .expect("the bundled trace");
    for line in one_per_line(&text) {
        let line = format!("{line}\n");
        written(&line);
        growing.feed(line.as_bytes()).expect("the line feeds");
        if let Err(e) = growing.advance() {
            return e.to_string();
        }
    }
    panic!("the agent span, last, converts the trace from its start: the import never stopped")
}

/// A trace converted from its start after its spans let their bodies go
/// reads them again from the file; a file that cannot give them back stops
/// the import with the line it could not read, never a conversion of spans
/// without their bodies.
#[test]
fn spans_that_cannot_be_read_again_stop_the_import() {
    let growing = Growing::new("run.jsonl", &Options::default())
        .reading_again(Box::new(|_, _| Err("the file is gone".to_owned())));
    let stopped = first_stop(growing, |_| {});
    assert!(
        stopped.starts_with("run.jsonl:1: read again: the file is gone"),
        "{stopped}"
    );
}

/// A text of several megabytes is parsed on the machine's cores (a restart
/// feeds its whole archive): what it reads, and the first bad line it
/// names, are what reading the same lines one at a time from a file gives.
#[test]
fn a_text_parsed_on_the_cores_reads_as_its_lines_one_at_a_time() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let one = std::fs::read_to_string(format!("{root}/datasets/sre-agent.otlp.jsonl"))
        .expect("the bundled trace");
    let id = "0000005e5a1700000000000000000001";
    let mut text = String::new();
    let mut copy = 0u32;
    while text.len() <= 5 << 20 {
        copy += 1;
        text.push_str(&one.replace(id, &format!("0000005e5a17{copy:020x}")));
        if copy == 20 {
            text.push_str("{\"resourceSpans\": [\n");
        }
    }
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("big.jsonl");
    std::fs::write(&path, &text).expect("the file");
    let skip = Options {
        skip_bad_lines: true,
        ..Options::default()
    };
    for options in [Options::default(), skip] {
        let parallel = otlp::read("big.jsonl", &text, &options);
        let alone = otlp::read_files(&[("big.jsonl", &path)], &options, &mut |_, _| {});
        match (parallel, alone) {
            (Ok(p), Ok(a)) => assert_eq!(made(&p), made(&a)),
            (Err(p), Err(a)) => {
                assert_eq!(p.to_string(), a.to_string());
                assert!(p.to_string().contains("big.jsonl:"), "{p}");
            }
            (p, a) => panic!("parallel {:?}, alone {:?}", p.is_ok(), a.is_ok()),
        }
    }
}

/// Lines read again that no longer hold the spans read from them (the file
/// changed under the follow) stop the import, saying so, rather than give a
/// trace other spans' bodies.
#[test]
fn spans_read_again_that_differ_stop_the_import() {
    let file: Arc<Mutex<Vec<u8>>> = Arc::default();
    let again = file.clone();
    // What is read again is the file with the trace's id changed.
    let growing = Growing::new("run.jsonl", &Options::default()).reading_again(Box::new(
        move |from: u64, len: u64| {
            let bytes = again.lock().map_err(|e| e.to_string())?;
            let text = String::from_utf8_lossy(&bytes[from as usize..(from + len) as usize])
                .replace(
                    "0000005e5a1700000000000000000001",
                    "0000005e5a1700000000000000000002",
                );
            Ok(text.into_bytes())
        },
    ));
    let stopped = first_stop(growing, |line| {
        (file.lock().expect("the file")).extend_from_slice(line.as_bytes())
    });
    assert!(
        stopped.contains("read again: trace 0000005e5a1700000000000000000001: its spans read again are not those read before")
            && stopped.contains("the file changed under the follow"),
        "{stopped}"
    );
}

/// Span `s` moved into trace `trace`.
fn in_trace(mut s: Value, trace: u64) -> Value {
    s["traceId"] = json!(format!("{trace:032x}"));
    s
}

/// How often every line was converted again because of `why`.
fn whole_for(growing: &Growing, why: &str) -> usize {
    (growing.converted_whole().0.iter())
        .filter(|c| c.what == why)
        .map(|c| c.count)
        .sum()
}

/// Runs that are over are retired as later runs arrive (a debug build
/// retires a trace as soon as a line passes without it); a span that falls
/// into a retired run, or a new run whose spans come before what retired
/// runs left, has every line converted again — but a copy of spans read
/// before (an exporter's retry) is a copy, retired run or not —, and the
/// import still equals the whole read after every batch.
#[test]
fn a_span_reaching_a_retired_run_converts_every_line_again() {
    let run = |trace: u64, id: u64, at: i64, topic: &str| -> Vec<Value> {
        let belief = json!({"topic": topic, "claim": format!("c{trace}")});
        vec![
            in_trace(querying(id, (at, at + 2), &format!("q{id}")), trace),
            in_trace(believing(id + 1, (at + 3, at + 4), belief), trace),
        ]
    };
    let line = |spans: Vec<Value>| requests(&spans, &[spans.len()]).remove(0);
    let lines = vec![
        line(run(0xa1, 10, 0, "disk")),
        line(run(0xb1, 20, 10, "disk")),
        line(run(0xd1, 30, 20, "net")),
        // Late: a span of the first run, retired by now.
        line(vec![in_trace(querying(12, (5, 6), "q12"), 0xa1)]),
        line(run(0xe1, 40, 40, "net")),
        // A new run before every retired one.
        line(run(0xc1, 50, -10, "disk")),
        // Exported again: the first run, and the late span.
        line(run(0xa1, 10, 0, "disk")),
        line(vec![in_trace(querying(12, (5, 6), "q12"), 0xa1)]),
    ];
    let cuts: Vec<usize> = (1..lines.len()).collect();
    let growing = check_batches("runs.otlp.jsonl", &lines, &cuts, &Options::default());
    let retired = growing.retired();
    assert!(retired >= 3, "runs retired: {retired}");
    let why: Vec<&str> = (growing.converted_whole().0.iter())
        .map(|c| c.what.as_str())
        .collect();
    assert!(
        why.contains(&"a trace changed the log at or before what was let go"),
        "{why:?}"
    );
    // The late span alone; its copies and the run's are copies.
    assert_eq!(
        whole_for(&growing, "a span fell into a run retired"),
        1,
        "{why:?}"
    );
}

/// A span that falls into a run let go but not retired yet — a short run
/// over while a longer one that began before it goes on (a supervisor's
/// run), so that the log from the longer one's start is still held — takes
/// that run up again alone: its spans read again from its lines, converted
/// from its start, the log written from its first entry; not every line. A
/// copy of its spans is a copy. The import equals the whole read after
/// every batch. (A debug build lets a run go once a line passes without it:
/// the long run is in every line.)
#[test]
fn a_span_reaching_a_run_let_go_takes_up_that_run_alone() {
    let belief = |topic: &str, claim: &str| json!({"topic": topic, "claim": claim});
    let long = |s: Value| in_trace(s, 0xb1);
    let short = |s: Value| in_trace(s, 0xa1);
    let line = |spans: Vec<Value>| requests(&spans, &[spans.len()]).remove(0);
    let lines = vec![
        line(vec![long(believing(20, (0, 1), belief("net", "up")))]),
        line(vec![
            short(querying(10, (2, 3), "q10")),
            short(believing(11, (4, 9), belief("disk", "full"))),
            long(querying(25, (2, 4), "q25")),
        ]),
        // The short run is let go: the long one goes on.
        line(vec![long(querying(21, (5, 6), "q21"))]),
        // Late: a span of the short run.
        line(vec![
            short(querying(12, (7, 8), "q12")),
            long(querying(22, (9, 10), "q22")),
        ]),
        line(vec![long(believing(23, (11, 12), belief("net", "down")))]),
        // Exported again, into the short run let go again.
        line(vec![
            short(querying(12, (7, 8), "q12")),
            long(querying(24, (13, 14), "q24")),
        ]),
    ];
    let cuts: Vec<usize> = (1..lines.len()).collect();
    let growing = check_batches("runs.otlp.jsonl", &lines, &cuts, &Options::default());
    let again: usize = (growing.converted_again().0.iter())
        .filter(|c| c.what == "a span fell into a run let go")
        .map(|c| c.count)
        .sum();
    // Once: its copy is a copy.
    assert_eq!(again, 1, "taken up again: {:?}", growing.converted_again());
    let whole: usize = growing.converted_whole().0.iter().map(|c| c.count).sum();
    assert_eq!(whole, 0, "{:?}", growing.converted_whole());
}

/// A run let go taken up again reads its spans back from its lines; lines
/// that no longer hold them (the file changed under the follow: here a
/// span's id) stop the import, saying so, rather than convert other spans.
#[test]
fn a_run_let_go_read_back_changed_stops_the_import() {
    let file: Arc<Mutex<Vec<u8>>> = Arc::default();
    let again = file.clone();
    let mut growing = Growing::new("runs.jsonl", &Options::default()).reading_again(Box::new(
        move |from: u64, len: u64| {
            let bytes = again.lock().map_err(|e| e.to_string())?;
            let text = String::from_utf8_lossy(&bytes[from as usize..(from + len) as usize])
                .replace(
                    r#""spanId":"000000000000000a""#,
                    r#""spanId":"00000000000000aa""#,
                );
            Ok(text.into_bytes())
        },
    ));
    let belief = |topic: &str, claim: &str| json!({"topic": topic, "claim": claim});
    let (long, short) = (|s| in_trace(s, 0xb1), |s| in_trace(s, 0xa1));
    let line = |spans: Vec<Value>| requests(&spans, &[spans.len()]).remove(0);
    let lines = [
        line(vec![long(believing(20, (0, 1), belief("net", "up")))]),
        line(vec![
            short(querying(10, (2, 3), "q10")),
            long(querying(25, (2, 4), "q25")),
        ]),
        line(vec![long(querying(21, (5, 6), "q21"))]),
        line(vec![
            short(querying(12, (7, 8), "q12")),
            long(querying(22, (9, 10), "q22")),
        ]),
    ];
    let mut stopped = None;
    for (n, line) in lines.iter().enumerate() {
        let line = format!("{line}\n");
        (file.lock().expect("the file")).extend_from_slice(line.as_bytes());
        growing.feed(line.as_bytes()).expect("the line feeds");
        match growing.advance() {
            Ok(_) => {
                growing.retire();
            }
            Err(e) => {
                stopped = Some((n + 1, e.to_string()));
                break;
            }
        }
    }
    let (at, why) = stopped.expect("the import stops");
    assert_eq!(at, 4, "at the late span: {why}");
    assert!(
        why.contains("read again: trace 000000000000000000000000000000a1: its spans read again are not those read before"),
        "{why}"
    );
}

/// Lines fed with what was parsed ahead of other lines (of their first
/// alone; of as many other lines) are parsed again: every line is read as
/// it is, none skipped or read as another.
#[test]
fn lines_fed_with_what_other_lines_parsed_to_are_parsed_again() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../datasets/sre-agent.otlp.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("the bundled trace");
    let first = format!("{}\n", text.lines().next().expect("a line"));
    assert!(text.lines().count() > 1, "more lines than the first");
    // `lines` fed with what `other` parsed to: the import of `lines` alone.
    let fed_with = |lines: &str, other: &str| {
        let mut growing = Growing::new("run.jsonl", &Options::default());
        (growing.feed_parsed(lines.as_bytes(), Growing::parse(other.as_bytes())))
            .expect("the lines feed");
        let fed = growing.draft().expect("a draft");
        let read = otlp::read("run.jsonl", lines, &Options::default()).expect("the read");
        assert_eq!(made(&fed), made(&read));
    };
    fed_with(&text, &first);
    // As many lines (one), another one.
    let second = format!("{}\n", text.lines().nth(1).expect("a second line"));
    fed_with(&first, &second);
}

/// The single-file fixtures of real instrumentations, each copied `n` times
/// into one trace file, each copy's trace ids its own (their first four
/// hex digits the copy's number).
fn fleet_of_fixtures(n: usize) -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/otlp");
    let mut fixtures = vec![format!(
        "{}/../../datasets/sre-agent.otlp.jsonl",
        env!("CARGO_MANIFEST_DIR")
    )];
    for name in [
        "features",
        "genai-events",
        "genai-logs.logs",
        "genai-logs.traces",
        "genai",
        "openai-v2.logs",
        "openai-v2.traces",
        "openinference",
        "openllmetry",
        "prose",
        "recheck-genai",
        "recheck-openinference",
        "recheck-openllmetry",
        "span-events",
        "whole",
    ] {
        fixtures.push(format!("{dir}/{name}.jsonl"));
    }
    let mut texts: Vec<String> = (fixtures.iter())
        .map(|path| std::fs::read_to_string(path).expect("a fixture"))
        .collect();
    // And what reading a span says: messages that cannot be read, an id
    // that is no id.
    let span = |id: &str, attributes: Value| {
        json!({"traceId": "0000000000000000000000000000dead", "spanId": id, "name": "retrieve",
               "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
               "attributes": attributes})
    };
    let unreadable =
        json!([{"key": "gen_ai.retrieval.documents", "value": {"stringValue": "[not json"}}]);
    let request = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        span("00000000000000d1", unreadable), span("zz", json!([])),
    ]}]}]});
    texts.push(format!("{request}\n"));
    let mut out = String::new();
    for k in 0..n {
        for text in &texts {
            let mut pieces = text.split("\"traceId\":\"");
            out.push_str(pieces.next().unwrap_or_default());
            for piece in pieces {
                assert!(piece.len() > 4, "a trace id after the key");
                out.push_str(&format!("\"traceId\":\"{k:04x}{}", &piece[4..]));
            }
            if !out.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

/// Spans read ahead of being fed — on another thread while the lines
/// before them are fed (a restart's runs), or on the machine's cores a
/// group of lines at a time (a large batch, a whole import) — read as the
/// feeding thread reads them: every span, its role and messages, what
/// reading them said, in order.
#[test]
fn spans_read_ahead_are_read_as_the_feeding_thread_reads_them() {
    let text = fleet_of_fixtures(30);
    assert!(text.len() > 4 << 20, "large enough to be read on the cores");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let batches: Vec<String> = lines.chunks(64).map(|c| c.concat()).collect();
    assert!(batches.iter().all(|b| b.len() < 4 << 20), "small batches");
    let options = Options::default();
    // Fed a batch at a time, each read where it is fed.
    let mut fed = Growing::new("fleet.jsonl", &options);
    // The same batches read ahead, each on its own.
    let mut ahead = Growing::new("fleet.jsonl", &options);
    for batch in &batches {
        fed.feed(batch.as_bytes()).expect("a batch feeds");
        (ahead.feed_parsed(batch.as_bytes(), Growing::parse(batch.as_bytes())))
            .expect("a batch read ahead feeds");
    }
    let fed = made(&fed.draft().expect("a draft"));
    assert_eq!(made(&ahead.draft().expect("a draft")), fed);
    // Read whole: on the cores, its spans read there.
    let whole = otlp::read("fleet.jsonl", &text, &options).expect("the read");
    assert_eq!(made(&whole), fed);
    assert!(
        fed.3.contains("its messages are not read") && fed.3.contains("neither hex nor base64"),
        "what reading a span says is said: {}",
        fed.3
    );
}
