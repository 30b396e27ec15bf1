//! Deterministic synthetic incidents in the JSON Lines format (`asof gen`), for
//! benchmarks and scale tests. The same seed always gives the same bytes.
//!
//! The log mixes evidence (some arriving hours or days late), assertions citing
//! one to three earlier evidence items with claims that flip, closed and open
//! valid intervals, `clip: false`, retractions by topic and by assertion, and
//! events sharing a recorded instant. Every retraction is generated only where
//! its (agent, topic) holds something, so the output always loads.
//!
//! No SQL and no store: `asof gen`, the benchmarks and the tests write these
//! logs; loading them is the store's business.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

use serde_json::json;
use std::io::Write;

/// The shape of a generated log; the same config gives the same bytes.
#[derive(Debug, Clone, Copy)]
pub struct GenConfig {
    /// How many events.
    pub events: u64,
    /// How many topics.
    pub topics: u32,
    /// How many agents.
    pub agents: u32,
    /// The seed of its random choices.
    pub seed: u64,
}

/// SplitMix64: small, fast, and good enough for synthetic data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const START: i64 = 1_767_225_600_000_000; // 2026-01-01T00:00:00Z
const MINUTE: i64 = 60_000_000;
const KINDS: [&str; 7] = ["alert", "log", "metric", "trace", "ticket", "chat", "human"];

fn t(micros: i64) -> String {
    asof_core::time::format(micros)
}

/// What the generator knows of one (agent, topic), enough to emit only
/// retractions that match something.
#[derive(Debug, Clone, Copy, Default)]
struct Scope {
    /// Something is certainly held.
    held: bool,
    /// Claims asserted since the last whole-topic retraction (bit per claim).
    claims_seen: u8,
    /// The last assertion, if its claim was new to the scope when asserted.
    fresh_last: Option<u64>,
}

/// A recorded clock for [`generate_with`]: the first event's instant and the
/// step between events (still shared by one event in ten), instead of the
/// default 2026-01-01 start and 1–90 s steps. `asof gen --follow-rate` uses it
/// to record events at the pace they are written.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// The first event's recorded time (µs).
    pub start: i64,
    /// The step between events (µs).
    pub step: i64,
}

/// Writes a synthetic dataset of `config.events` events (header line included in
/// neither count) to `out`.
pub fn generate(config: GenConfig, out: &mut impl Write) -> std::io::Result<()> {
    generate_with(config, None, out)
}

/// The log [`generate`] writes for `config`, read back, and its replay (for
/// tests: a generated log must be valid, so anything else is a panic).
pub fn log_of(config: GenConfig) -> (asof_core::model::Dataset, asof_core::engine::Replay) {
    let mut jsonl = Vec::new();
    generate(config, &mut jsonl).expect("generate");
    let text = String::from_utf8(jsonl).expect("UTF-8");
    let log = asof_core::dataset::read_str("gen.jsonl", asof_core::dataset::Format::Jsonl, &text)
        .expect("valid")
        .dataset;
    let replay = asof_core::engine::replay(&log.header, &log.events);
    (log, replay)
}

impl Pace {
    /// Events recorded from now at `rate` a second: one event in ten shares
    /// the instant before it, so the step is a ninth longer than 1/rate.
    pub fn at_rate(rate: u32) -> Pace {
        Pace {
            start: asof_core::time::now(),
            step: (1_000_000 * 10 / 9 / i64::from(rate.max(1))).max(1),
        }
    }
}

/// [`generate`] on the recorded clock `pace` when given.
pub fn generate_with(
    config: GenConfig,
    pace: Option<Pace>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    generate_shaped(config, pace, None, out)
}

/// The agents a fleet's incidents draw from: an agent id is a role and a
/// model, so a fleet question can group by either.
const FLEET_AGENTS: [&str; 6] = [
    "triage-gpt-4o",
    "triage-o3",
    "sre-claude",
    "sre-llama",
    "db-gpt-4o",
    "db-claude",
];

/// How one incident of a fleet differs from [`generate`]'s default: its id,
/// its agents, which topics have a resolution or age, and verifications.
#[derive(Debug, Clone)]
struct Variety {
    id: String,
    agents: Vec<&'static str>,
    resolved: Vec<bool>,
    stale_after: Vec<bool>,
    /// Percent of events that are a verification of a recent evidence item.
    verify_percent: u64,
}

/// Incident `index` of a fleet made from `seed` (`asof gen --incidents`):
/// about `events` events (half to one and a half times as many), one to four
/// agents of `FLEET_AGENTS`, 5–40 topics of which about 70% have a
/// resolution and 30% go stale after 30 minutes without support, and about
/// one event in twenty-five a verification (some rejecting or staling the
/// evidence). The same (seed, index, events) always gives the same bytes.
pub fn fleet_incident(
    seed: u64,
    index: u64,
    events: u64,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let mut rng = Rng(seed.wrapping_mul(0x1000_0000_01B3) ^ index.wrapping_add(0x666c_6565_7400));
    let agents = 1 + rng.below(4) as usize;
    let first = rng.below(FLEET_AGENTS.len() as u64) as usize;
    let topics = 5 + rng.below(36) as u32;
    let variety = Variety {
        id: format!("fleet-{seed}-{index:04}"),
        agents: (0..agents)
            .map(|a| FLEET_AGENTS[(first + a) % FLEET_AGENTS.len()])
            .collect(),
        resolved: (0..topics).map(|_| rng.chance(70)).collect(),
        stale_after: (0..topics).map(|_| rng.chance(30)).collect(),
        verify_percent: 4,
    };
    let config = GenConfig {
        events: events / 2 + rng.below(events + 1),
        topics,
        agents: agents as u32,
        seed: rng.next(),
    };
    generate_shaped(config, None, Some(&variety), out)
}

fn generate_shaped(
    config: GenConfig,
    pace: Option<Pace>,
    variety: Option<&Variety>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let topics = config.topics.max(1);
    let agents = config.agents.max(1);
    let mut rng = Rng(config.seed ^ 0x6173_6f66);
    let agent_id = |a: usize| match variety {
        Some(v) => v.agents[a % v.agents.len()].to_owned(),
        None => format!("agent-{a}"),
    };
    let header = json!({
        "asof": 1,
        "incident": {
            "id": variety.map_or_else(|| format!("gen-{}", config.seed), |v| v.id.clone()),
            "title": format!("Synthetic incident ({} events, seed {})", config.events, config.seed),
        },
        "agents": (0..agents as usize).map(|a| json!({"id": agent_id(a), "name": format!("Agent {a}")})).collect::<Vec<_>>(),
        "topics": (0..topics).map(|k| {
            let many = k % 10 == 9;
            let mut topic = json!({
                "id": format!("topic-{k}"),
                "question": format!("Question {k}?"),
                "cardinality": if many { "many" } else { "one" },
                "resolution": format!("claim-{}", k % 4),
            });
            if let Some(v) = variety {
                if !v.resolved[k as usize]
                    && let Some(fields) = topic.as_object_mut()
                {
                    fields.remove("resolution");
                }
                if v.stale_after[k as usize] {
                    topic["stale_after"] = json!("30m");
                }
            }
            topic
        }).collect::<Vec<_>>(),
    });
    writeln!(out, "{header}")?;
    let verify_percent = variety.map_or(0, |v| v.verify_percent);
    let mut verification_n = 0u64;

    let mut now = pace.map_or(START, |p| p.start - p.step);
    let mut recent_evidence: Vec<(u64, i64)> = Vec::with_capacity(64);
    let mut scopes = vec![Scope::default(); (agents as usize) * (topics as usize)];
    let (mut evidence_n, mut assertion_n, mut retraction_n) = (0u64, 0u64, 0u64);

    for _ in 0..config.events {
        // Recorded time moves 1-90 s per event; 10% of events share an instant.
        if !rng.chance(10) {
            now += match pace {
                Some(p) => p.step,
                None => rng.below(90) as i64 * 1_000_000 + 1_000_000,
            };
        }
        // Only a fleet's incidents verify (the default log's bytes stay as they were).
        if verify_percent > 0 && !recent_evidence.is_empty() && rng.chance(verify_percent) {
            verification_n += 1;
            let (id, _) = recent_evidence[rng.below(recent_evidence.len() as u64) as usize];
            const STATES: [&str; 5] = [
                "rejected",
                "stale",
                "direct-read",
                "conflicted",
                "claim-supported",
            ];
            let line = json!({"verify": {
                "id": format!("V{verification_n}"),
                "evidence": format!("E{id}"),
                "state": STATES[rng.below(STATES.len() as u64) as usize],
                "by": "reviewer",
                "recorded_at": t(now),
            }});
            writeln!(out, "{line}")?;
            continue;
        }
        let roll = rng.below(100);
        if roll < 35 || recent_evidence.is_empty() {
            evidence_n += 1;
            let lag = match rng.below(100) {
                0..=89 => rng.below(10) as i64 * MINUTE,
                90..=97 => rng.below(12 * 60) as i64 * MINUTE,
                _ => rng.below(5 * 24 * 60) as i64 * MINUTE,
            };
            let observed = now - lag;
            let kind = KINDS[rng.below(KINDS.len() as u64) as usize];
            let line = json!({"evidence": {
                "id": format!("E{evidence_n}"),
                "kind": kind,
                "source": format!("{kind}-source-{}", rng.below(20)),
                "locator": format!("{kind}/{evidence_n}"),
                "observed_at": t(observed),
                "recorded_at": t(now),
                "reliability": (50 + rng.below(51)) as f64 / 100.0,
                "summary": format!("synthetic {kind} #{evidence_n}"),
            }});
            writeln!(out, "{line}")?;
            if recent_evidence.len() == 64 {
                recent_evidence.remove(0);
            }
            recent_evidence.push((evidence_n, observed));
            continue;
        }
        let agent = rng.below(agents as u64) as usize;
        let topic = rng.below(topics as u64) as usize;
        let scope = &mut scopes[agent * topics as usize + topic];
        let because = recent_evidence[rng.below(recent_evidence.len() as u64) as usize].0;
        if roll >= 92 && scope.held {
            retraction_n += 1;
            let mut body = json!({
                "id": format!("R{retraction_n}"),
                "agent": agent_id(agent),
                "recorded_at": t(now),
                "because": [format!("E{because}")],
            });
            match scope.fresh_last {
                // The last assertion brought a claim new to the scope and nothing
                // came after it, so its versions are certainly still held.
                Some(a) if rng.chance(40) => body["assertion"] = json!(format!("A{a}")),
                _ => {
                    body["topic"] = json!(format!("topic-{topic}"));
                    scope.claims_seen = 0;
                }
            }
            // Conservatively: nothing is known to be held until the next assertion.
            scope.held = false;
            scope.fresh_last = None;
            writeln!(out, "{}", json!({ "retract": body }))?;
            continue;
        }
        assertion_n += 1;
        let cites = 1 + rng.below(3) as usize;
        let mut supported = Vec::with_capacity(cites);
        let mut earliest = now;
        for _ in 0..cites {
            let (id, observed) = recent_evidence[rng.below(recent_evidence.len() as u64) as usize];
            let id = format!("E{id}");
            if !supported.contains(&id) {
                supported.push(id);
                earliest = earliest.min(observed);
            }
        }
        let claim = rng.below(4) as u8;
        let valid_from = earliest - rng.below(30) as i64 * MINUTE;
        let mut body = json!({
            "id": format!("A{assertion_n}"),
            "agent": agent_id(agent),
            "topic": format!("topic-{topic}"),
            "claim": format!("claim-{claim}"),
            "confidence": (3 + rng.below(8)) as f64 / 10.0,
            "valid_from": t(valid_from),
            "recorded_at": t(now),
            "supported_by": supported,
        });
        if rng.chance(30) {
            body["valid_to"] = json!(t(valid_from + (1 + rng.below(240)) as i64 * MINUTE));
        } else if rng.chance(5) {
            body["clip"] = json!(false);
        }
        writeln!(out, "{}", json!({ "believe": body }))?;
        let fresh = scope.claims_seen & (1 << claim) == 0;
        scope.claims_seen |= 1 << claim;
        scope.held = true;
        scope.fresh_last = fresh.then_some(assertion_n);
    }
    Ok(())
}

/// Writes a synthetic agent run as OTLP/JSON (`asof gen --otlp`): `config.events`
/// spans in the GenAI conventions, one trace and `invoke_agent` span per agent,
/// written as the OpenTelemetry Collector's file exporter does (a request per
/// batch of 512 spans, in the order spans end; hex ids; numeric enums).
///
/// Each step is a model call (its input: the last tool result; its output: a
/// tool call, and now and then a stated hypothesis `root cause is claim-N
/// (confidence 0.P)` about `topic-K`) followed by that tool's span; every tenth
/// step calls `record_belief` instead, so belief tools alone make beliefs.
pub fn otlp(config: GenConfig, out: &mut impl Write) -> std::io::Result<()> {
    otlp_with(config, false, out)
}

/// [`otlp`]; with `history`, each model call's input is the agent's whole
/// history so far (every earlier input, output and tool result), as content
/// capture records a real agent loop: the trace grows with the square of
/// its steps. Requests then hold 32 spans each (a batch exporter's flush).
pub fn otlp_with(config: GenConfig, history: bool, out: &mut impl Write) -> std::io::Result<()> {
    otlp_batched(
        config,
        history,
        if history { 32 } else { 512 },
        (0, None),
        out,
    )
}

/// [`otlp`] of a fleet at work: each agent runs one run after another, each
/// run its own trace of about `run_spans` spans (a model call and a tool span
/// a step) closed by its `invoke_agent` span, exported last as the SDKs do;
/// `run_spans` 0 is [`otlp`]: one run per agent for the whole log.
pub fn otlp_fleet(config: GenConfig, run_spans: u64, out: &mut impl Write) -> std::io::Result<()> {
    otlp_batched(config, false, 512, (run_spans.div_ceil(2), None), out)
}

/// [`otlp`] cut into requests of `spans_per_request` spans, one OTLP/JSON
/// request each, as an SDK's batch exporter sends a run to `asof serve`.
pub fn otlp_requests(config: GenConfig, spans_per_request: usize) -> Vec<String> {
    otlp_runs(config, spans_per_request, 0, None)
}

/// [`otlp_fleet`] cut into requests of `spans_per_request` spans. With
/// `span_rate`, the spans are stamped as a fleet exporting that many spans
/// a second stamps them: the agents' steps shortened so that the fleet's
/// span time passes one second for every `span_rate` spans (a benchmark
/// that sends them at that rate sees the agents' clocks keep pace with its
/// own); without, each step takes the seconds a model call and a tool take.
pub fn otlp_runs(
    config: GenConfig,
    spans_per_request: usize,
    run_spans: u64,
    span_rate: Option<u32>,
) -> Vec<String> {
    let mut bytes = Vec::new();
    // Writing to memory cannot fail.
    let _ = otlp_batched(
        config,
        false,
        spans_per_request.max(1),
        (run_spans.div_ceil(2), span_rate),
        &mut bytes,
    );
    String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A step's mean length in µs, unpaced (a model call of 1–5 s, a tool of
/// 0.2–2.2 s, and the gaps between them): two spans.
const MEAN_STEP: f64 = 4_350_000.0;

/// Writes the generated run: `runs` is (steps a run takes, 0 for one run per
/// agent; the fleet's spans a second of span time, `None` for unpaced).
fn otlp_batched(
    config: GenConfig,
    history: bool,
    per_request: usize,
    runs: (u64, Option<u32>),
    out: &mut impl Write,
) -> std::io::Result<()> {
    let (run_steps, span_rate) = runs;
    // A length of the unpaced run, paced (never below a microsecond, so
    // that spans keep their order).
    let scale = span_rate.map_or(1.0, |rate| {
        2_000_000.0 / (MEAN_STEP * f64::from(rate.max(1)))
    });
    let paced = |micros: i64| ((micros as f64 * scale).round() as i64).max(1);
    let agents = config.agents.max(1) as u64;
    let topics = config.topics.max(1) as u64;
    let mut rng = Rng(config.seed ^ 0x6f74_6c70);
    let nanos = |micros: i64| format!("{}", micros as i128 * 1000);
    let string = |key: &str, value: &str| json!({"key": key, "value": {"stringValue": value}});
    // An agent's first run keeps the id it always had; its later runs, theirs.
    let trace_id = |a: u64, run: u64| {
        format!(
            "{:016x}{:016x}",
            config.seed.wrapping_add(0x5eed),
            (run << 32) | (a + 1)
        )
    };
    let mut span_n: u64 = 0;
    let mut next_span = || {
        span_n += 1;
        format!("{:016x}", span_n.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    };
    let mut roots: Vec<String> = (0..agents).map(|_| next_span()).collect();
    // Each agent's run: its number, steps taken and first instant.
    let mut runs: Vec<(u64, u64, i64)> = vec![(0, 0, START); agents as usize];
    let mut batch: Vec<serde_json::Value> = Vec::with_capacity(512);
    let flush = |batch: &mut Vec<serde_json::Value>, out: &mut dyn Write| -> std::io::Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let request = json!({"resourceSpans": [{
            "resource": {"attributes": [string("service.name", "synthetic-agent"), string("telemetry.sdk.name", "opentelemetry")]},
            "scopeSpans": [{"scope": {"name": "asof.synth", "version": "1"}, "spans": std::mem::take(batch)}],
        }]});
        writeln!(out, "{request}")
    };
    let agent_span = |trace: &str, root: &str, a: u64, from: i64, to: i64| {
        json!({
            "traceId": trace, "spanId": root, "name": format!("invoke_agent agent-{a}"), "kind": 1,
            "startTimeUnixNano": nanos(from - paced(1_000_000)), "endTimeUnixNano": nanos(to),
            "attributes": [string("gen_ai.operation.name", "invoke_agent"), string("gen_ai.agent.name", &format!("agent-{a}"))],
            "status": {},
        })
    };
    let mut now = START;
    let mut last_result: Vec<Option<(String, String)>> = vec![None; agents as usize];
    let mut said: Vec<Vec<serde_json::Value>> = vec![Vec::new(); agents as usize];
    let total = config.events.max(agents + 2);
    let mut written: u64 = 0;
    let mut step: u64 = 0;
    // Each step writes two spans; the agent spans close the run.
    while written + agents + 2 <= total {
        step += 1;
        let a = rng.below(agents);
        let trace = trace_id(a, runs[a as usize].0);
        let start = now;
        let end = start + paced(1_000_000 + rng.below(4_000_000) as i64);
        let call_id = format!("call_{step}");
        let belief = step.is_multiple_of(10);
        let topic = rng.below(topics);
        let claim = rng.below(4);
        let confidence = (3 + rng.below(7)) as f64 / 10.0;
        let mut input = vec![
            json!({"role": "user", "parts": [{"type": "text", "content": format!("Investigate topic-{topic} (step {step}).")}]}),
        ];
        if let Some((id, result)) = &last_result[a as usize] {
            input.push(json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": id, "response": result}]}));
        }
        if history {
            // The tool result answers the last step's call; then the new ask.
            input.reverse();
            let so_far = &mut said[a as usize];
            so_far.extend(input);
            input = so_far.clone();
        }
        let (tool, args) = if belief {
            (
                "record_belief",
                json!({"topic": format!("topic-{topic}"), "claim": format!("claim-{claim}"), "confidence": confidence}),
            )
        } else {
            (
                "query_metrics",
                json!({"query": format!("metric-{}", rng.below(1000))}),
            )
        };
        let answer = json!({"role": "assistant", "parts": [
            {"type": "text", "content": format!("Looking at topic-{topic}: root cause is claim-{claim} (confidence {confidence}).")},
            {"type": "tool_call", "id": call_id, "name": tool, "arguments": args},
        ], "finish_reason": "tool_call"});
        if history {
            said[a as usize].push(answer.clone());
        }
        let output = json!([answer]);
        batch.push(json!({
            "traceId": trace, "spanId": next_span(), "parentSpanId": roots[a as usize],
            "name": "chat synthetic-model", "kind": 3,
            "startTimeUnixNano": nanos(start), "endTimeUnixNano": nanos(end),
            "attributes": [
                string("gen_ai.operation.name", "chat"),
                string("gen_ai.provider.name", "synthetic"),
                string("gen_ai.request.model", "synthetic-model"),
                string("gen_ai.input.messages", &serde_json::Value::Array(input).to_string()),
                string("gen_ai.output.messages", &output.to_string()),
            ],
            "status": {},
        }));
        let tool_start = end + paced(100_000);
        let tool_end = tool_start + paced(200_000 + rng.below(2_000_000) as i64);
        let result = if belief {
            "recorded".to_owned()
        } else {
            format!("value {} at step {step}", rng.below(10_000))
        };
        batch.push(json!({
            "traceId": trace, "spanId": next_span(), "parentSpanId": roots[a as usize],
            "name": format!("execute_tool {tool}"), "kind": 1,
            "startTimeUnixNano": nanos(tool_start), "endTimeUnixNano": nanos(tool_end),
            "attributes": [
                string("gen_ai.operation.name", "execute_tool"),
                string("gen_ai.tool.name", tool),
                string("gen_ai.tool.call.id", &call_id),
                string("gen_ai.tool.call.arguments", &args.to_string()),
                string("gen_ai.tool.call.result", &result),
            ],
            "status": {},
        }));
        last_result[a as usize] = (!belief).then_some((call_id, result));
        written += 2;
        now = tool_end + paced(50_000);
        let run = &mut runs[a as usize];
        run.1 += 1;
        if run.1 == run_steps && written + agents + 3 <= total {
            // The run ends: its agent span, and the agent's next run begins.
            batch.push(agent_span(&trace, &roots[a as usize], a, run.2, now));
            written += 1;
            *run = (run.0 + 1, 0, now);
            roots[a as usize] = next_span();
            last_result[a as usize] = None;
            said[a as usize].clear();
            now += paced(50_000);
        }
        if batch.len() >= per_request {
            flush(&mut batch, out)?;
        }
    }
    for (a, root) in roots.iter().enumerate() {
        let (run, _, from) = runs[a];
        batch.push(agent_span(
            &trace_id(a as u64, run),
            root,
            a as u64,
            from,
            now,
        ));
    }
    flush(&mut batch, out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use asof_core::model::EventBody;

    fn incident(seed: u64, index: u64) -> (Vec<u8>, asof_core::model::Dataset) {
        let mut bytes = Vec::new();
        fleet_incident(seed, index, 400, &mut bytes).expect("in memory");
        let log = asof_core::dataset::read_bytes(
            "fleet.jsonl",
            asof_core::dataset::Format::Jsonl,
            &bytes,
        )
        .expect("a fleet incident loads")
        .dataset;
        (bytes, log)
    }

    /// A fleet's incidents differ in what a fleet question groups by, load,
    /// and are the same bytes every time.
    #[test]
    fn a_fleet_s_incidents_vary_and_repeat() {
        let logs: Vec<_> = (0..12).map(|i| incident(3, i)).collect();
        assert_eq!(incident(3, 5).0, logs[5].0, "the same bytes again");
        let ids: std::collections::BTreeSet<_> = logs
            .iter()
            .map(|(_, l)| l.header.incident.id.clone())
            .collect();
        assert_eq!(ids.len(), 12, "every incident its own id");
        let sizes: std::collections::BTreeSet<_> =
            logs.iter().map(|(_, l)| l.events.len()).collect();
        assert!(
            sizes.len() > 6 && sizes.iter().all(|&n| (200..=600).contains(&n)),
            "{sizes:?}"
        );
        let agent_counts: std::collections::BTreeSet<_> =
            logs.iter().map(|(_, l)| l.header.agents.len()).collect();
        assert!(agent_counts.len() > 1, "{agent_counts:?}");
        let topics = logs.iter().flat_map(|(_, l)| &l.header.topics);
        let (resolved, unresolved): (Vec<_>, Vec<_>) = topics.partition(|t| t.resolution.is_some());
        assert!(!resolved.is_empty() && !unresolved.is_empty());
        assert!(
            logs.iter()
                .flat_map(|(_, l)| &l.header.topics)
                .any(|t| t.stale_after == Some(1_800_000_000))
        );
        let verifications = logs
            .iter()
            .flat_map(|(_, l)| &l.events)
            .filter(|e| matches!(&e.body, EventBody::Verify(v) if v.state.as_str() == "rejected"))
            .count();
        assert!(verifications > 0);
    }

    /// The spans' start and end times (µs) of generated OTLP requests.
    fn span_times(requests: &[String]) -> Vec<(i64, i64)> {
        let nanos = |v: &serde_json::Value| {
            v.as_str()
                .and_then(|s| s.parse::<i64>().ok())
                .expect("nanos")
                / 1000
        };
        requests
            .iter()
            .flat_map(|line| {
                let request: serde_json::Value = serde_json::from_str(line).expect("JSON");
                let spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"].clone();
                spans.as_array().cloned().unwrap_or_default()
            })
            .map(|span| {
                (
                    nanos(&span["startTimeUnixNano"]),
                    nanos(&span["endTimeUnixNano"]),
                )
            })
            .collect()
    }

    /// A paced fleet's span time passes a second for every `span_rate`
    /// spans, its spans in the order they end as unpaced; unpaced, a step
    /// takes seconds.
    #[test]
    fn a_paced_fleet_s_span_time_keeps_its_rate() {
        let config = GenConfig {
            events: 20_000,
            topics: 5,
            agents: 4,
            seed: 3,
        };
        let span_of = |times: &[(i64, i64)]| {
            let first = times.iter().map(|t| t.0).min().expect("spans");
            let last = times.iter().map(|t| t.1).max().expect("spans");
            (last - first) as f64 / 1e6
        };
        let paced = span_times(&otlp_runs(config, 200, 2000, Some(2000)));
        let seconds = span_of(&paced);
        assert!(
            (8.0..12.0).contains(&seconds),
            "{seconds} s for 20,000 spans at 2,000/s"
        );
        assert!(paced.iter().all(|(start, end)| start <= end));
        let steps: Vec<i64> = paced
            .iter()
            .filter(|t| t.1 - t.0 < 5_000)
            .map(|t| t.1)
            .collect();
        assert!(steps.windows(2).all(|w| w[0] <= w[1]), "steps end in order");
        let unpaced = span_times(&otlp_runs(config, 200, 2000, None));
        assert_eq!(unpaced.len(), paced.len(), "the same spans");
        assert!(span_of(&unpaced) > 40_000.0, "{} s", span_of(&unpaced));
    }
}
