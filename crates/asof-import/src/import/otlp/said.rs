//! Passes 6b–c of `import otlp` (design.md §7): what the agents said
//! (found by trace.rs: belief-tool calls, `asof.*` span events, prose and
//! memory writes read by rules, memory deletes) as beliefs and retractions
//! citing what they named or what their model call read new; and the
//! traces' evaluations, kept with what they judged; with the helpers the
//! passes that find what was said share.

use super::*;
use asof_core::model::Assumed;

/// The latest assertion on an (agent, topic): when, from which model call,
/// and the cut-off of the evidence that call's assertions cite.
#[derive(Clone)]
pub(super) struct Asserted {
    pub(super) at: Micros,
    /// (trace, its model call).
    pub(super) call: Option<(usize, usize)>,
    pub(super) since: Option<Micros>,
}

/// The evidence's ids as the merge numbered them (`T1`, `T2` … in recorded
/// order across the run's traces).
pub(super) trait Numbers {
    /// Item `n` of trace `t`'s rank from 0.
    fn rank(&self, t: usize, n: usize) -> usize;
    /// The item ranked `rank`.
    fn at_rank(&self, rank: usize) -> Option<(usize, usize)>;
    /// Whether the item ranked `rank` is of a trace retired (a growing
    /// import's: recorded before every entry not retired).
    fn retired(&self, _rank: usize) -> bool {
        false
    }
    /// Its id.
    fn id(&self, t: usize, n: usize) -> String {
        format!("T{}", self.rank(t, n) + 1)
    }
    /// The item numbered `id`: `T` and its rank from 1, written as [`Numbers::id`]
    /// writes it (no sign, no leading zero).
    fn item(&self, id: &str) -> Option<(usize, usize)> {
        self.at_rank(rank_of(id)?)
    }
}

/// The rank from 0 an evidence id `T…` writes, as [`Numbers::id`] writes it
/// (no sign, no leading zero).
fn rank_of(id: &str) -> Option<usize> {
    let digits = id.strip_prefix('T')?;
    if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<usize>().ok()?.checked_sub(1)
}

/// Pass 6b as a sweep over what was said, in recorded order across the
/// run's traces: its state at one place of the log, so a merge can take it
/// up again from a place it kept (merge.rs).
#[derive(Clone, Default)]
pub(super) struct SaidSweep {
    /// Per (agent, topic): the latest assertion's time, and the model call
    /// it came from with the cut-off that call's assertions share
    /// (design.md §7: one call, one set of new evidence).
    last_assertion: HashMap<(String, String), Asserted>,
    pub(super) beliefs: usize,
    pub(super) retractions: usize,
    /// Topics and agents in the order they were first said.
    seen_topics: HashSet<String>,
    pub(super) topics: Vec<String>,
    pub(super) agents: Vec<String>,
    /// What the sweep assumed and where its statements came from, and how
    /// many entries it had added to the list of what was left out.
    pub(super) defaults: Tally,
    pub(super) by_source: Tally,
    pub(super) skipped: usize,
}

impl SaidSweep {
    /// The event statement `i` of trace `t` makes — a belief or a
    /// retraction, citing what it names (evidence ids or tool call ids of
    /// its trace) or, naming nothing, what was in front of the agent since
    /// its previous assertion on the topic — and its id; what it left out is
    /// added to `skipped`.
    pub(super) fn step(
        &mut self,
        traces: &[TraceOut],
        numbers: &impl Numbers,
        (t, i): (usize, usize),
        options: &Options,
        skipped: &mut Vec<Skipped>,
    ) -> (RawEvent, String) {
        let out = &traces[t];
        let evidence = &out.items;
        let s = &out.said[i];
        let key = (s.agent.clone(), s.topic.clone());
        let before = self.last_assertion.get(&key);
        let call = s.call.map(|k| (t, k));
        let since = match (before, call) {
            (Some(b), Some(k)) if b.call == Some(k) => b.since,
            (b, _) => b.map(|b| b.at),
        };
        let skipped_before = skipped.len();
        // The belief named no evidence: asof cites what was in front of it.
        let cites_assumed = s.cites.is_none();
        let cites: Vec<String> = match &s.cites {
            Some(named) => {
                let mut ids = Vec::new();
                for name in named {
                    // Evidence of a trace retired: recorded before this.
                    if rank_of(name).is_some_and(|rank| numbers.retired(rank)) {
                        if !ids.contains(name) {
                            ids.push(name.clone());
                        }
                        continue;
                    }
                    let found = match numbers.item(name) {
                        Some((u, n)) => Some((u, n)),
                        None => out.by_call.get(name.as_str()).map(|&n| (t, n)),
                    };
                    match found {
                        Some((u, n)) if traces[u].items[n].recorded <= s.recorded => {
                            let id = numbers.id(u, n);
                            if !ids.contains(&id) {
                                ids.push(id);
                            }
                        }
                        Some((u, n)) => skipped.push(Skipped {
                            location: s.origin.clone(),
                            reason: format!(
                                "cites {name} ({}), which reached the agent at {}, after this: citation dropped",
                                numbers.id(u, n),
                                instant(traces[u].items[n].recorded)
                            ),
                        }),
                        None => skipped.push(Skipped {
                            location: s.origin.clone(),
                            reason: format!(
                                "cites {name}, which is no evidence id or tool call id of this trace: citation dropped"
                            ),
                        }),
                    }
                }
                ids
            }
            None => {
                let cited: Vec<String> = match s.call {
                    Some(k) => {
                        let mut items: Vec<usize> = out.in_front[k]
                            .iter()
                            .copied()
                            .filter(|&n| {
                                evidence[n].recorded <= s.recorded
                                    && since.is_none_or(|at| evidence[n].recorded > at)
                            })
                            .collect();
                        items.sort_by_key(|&n| numbers.rank(t, n));
                        items.into_iter().map(|n| numbers.id(t, n)).collect()
                    }
                    None => Vec::new(),
                };
                self.defaults.bump(if cited.is_empty() {
                    "beliefs and retractions naming no evidence, with no new evidence in front of the agent: they cite nothing"
                } else {
                    "beliefs and retractions naming no evidence: the evidence in front of the agent cited"
                });
                cited
            }
        };
        self.skipped += skipped.len() - skipped_before;
        let valid_from = match s.valid_from {
            Some(at) => at,
            None => match options.valid_from {
                ValidFrom::TraceStart => {
                    self.defaults
                        .bump("beliefs without valid_from: the trace's start");
                    out.start
                }
                ValidFrom::At(at) => {
                    self.defaults
                        .bump("beliefs without valid_from: --valid-from");
                    at
                }
            },
        };
        if !s.retract && s.confidence.is_none() {
            self.defaults.bump("beliefs without confidence: 1");
        }
        if self.seen_topics.insert(s.topic.clone()) {
            self.topics.push(s.topic.clone());
        }
        if !self.agents.contains(&s.agent) {
            self.agents.push(s.agent.clone());
        }
        self.by_source.bump(s.source);
        let why = match &s.note {
            Some(note) => format!("{note} ({})", s.origin),
            None => s.origin.clone(),
        };
        if s.retract {
            self.retractions += 1;
            let id = format!("R{}", self.retractions);
            let event = RawEvent::Retract(RawRetract {
                id: Some(id.clone()),
                agent: Some(s.agent.clone()),
                topic: Some(s.topic.clone()),
                assertion: None,
                claim: s.claim.clone(),
                valid_from: s.valid_from.map(RawTime::at),
                valid_to: s.valid_to.map(RawTime::at),
                recorded_at: RawTime::at(s.recorded),
                because: cites,
                reason: Some(why),
            });
            (event, id)
        } else {
            self.beliefs += 1;
            self.last_assertion.insert(
                key,
                Asserted {
                    at: s.recorded,
                    call,
                    since,
                },
            );
            let id = format!("B{}", self.beliefs);
            let event = RawEvent::Believe(RawBelieve {
                id: Some(id.clone()),
                agent: s.agent.clone(),
                topic: s.topic.clone(),
                claim: s.claim.clone().unwrap_or_default(),
                confidence: s.confidence,
                valid_from: RawTime::at(valid_from),
                valid_to: s.valid_to.map(RawTime::at),
                clip: None,
                recorded_at: RawTime::at(s.recorded),
                supported_by: cites,
                rationale: Some(why),
                assumed: [
                    (s.agent_assumed, Assumed::Agent),
                    (s.confidence.is_none(), Assumed::Confidence),
                    (s.valid_from.is_none(), Assumed::ValidFrom),
                    (cites_assumed, Assumed::SupportedBy),
                ]
                .into_iter()
                .filter(|&(yes, _)| yes)
                .map(|(_, field)| field.as_str().to_owned())
                .collect(),
            });
            (event, id)
        }
    }
}

/// The event the GenAI conventions record an evaluation with.
pub(super) const EVALUATION: &str = "gen_ai.evaluation.result";

/// Pass 6c: each `gen_ai.evaluation.result` on a span of trace `t`, kept
/// with what it judged — the evidence a tool, memory or retrieval span gave,
/// or the assertions a model call made (design.md §7). Kept, not turned
/// into verifications.
pub(super) fn evaluations(
    t: usize,
    out: &TraceOut,
    numbers: &impl Numbers,
    said_ids: &[Option<String>],
    report: &mut ImportReport,
) {
    if out.evaluated.is_empty() {
        return;
    }
    // What the evaluated spans gave: items by their span, statements by
    // their call (each read once, however many evaluations).
    let wanted: HashSet<&str> = out
        .evaluated
        .iter()
        .map(|s| span_part(&s.locator))
        .collect();
    let mut items_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (n, ev) in out.items.iter().enumerate() {
        let span = span_part(&ev.locator);
        if wanted.contains(span) {
            items_of.entry(span).or_default().push(n);
        }
    }
    let calls: HashSet<usize> = out.evaluated.iter().filter_map(|s| s.call).collect();
    let mut said_of: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, x) in out.said.iter().enumerate() {
        if let Some(k) = x.call.filter(|k| calls.contains(k)) {
            said_of.entry(k).or_default().push(i);
        }
    }
    for s in &out.evaluated {
        for e in &s.events {
            let attr = |k: &str| {
                e.attributes
                    .iter()
                    .find(|kv| kv.key == k)
                    .map(|kv| kv.value.to_json())
                    .filter(|v| !v.is_null())
            };
            // A reviewer's finding exchanged as an evaluation (docs/review.md)
            // is not the run's own: skipped, and said so.
            if attr("gen_ai.evaluation.name").and_then(|v| v.as_str().map(str::to_owned))
                == Some(asof_core::review::otlp::NAME.to_owned())
            {
                report.skipped.push(Skipped {
                    location: format!("span {}", s.id),
                    reason: "an asof review finding, not the run's own evaluation: read it as a review (`--review FILE`)".into(),
                });
                continue;
            }
            let value = serde_json::json!({
                "name": attr("gen_ai.evaluation.name"),
                "score_value": attr("gen_ai.evaluation.score.value"),
                "score_label": attr("gen_ai.evaluation.score.label"),
                "explanation": attr("gen_ai.evaluation.explanation"),
                "at": wire::nanos_to_micros(&e.time).map(instant),
                "locator": s.locator,
            });
            let prefix = &s.locator;
            let mut judged: Vec<String> = match s.call {
                // What the call's output said (not belief-tool spans that
                // only borrow the call as their latest).
                Some(k) => said_of
                    .get(&k)
                    .into_iter()
                    .flatten()
                    .filter(|&&i| out.said[i].origin.starts_with(prefix.as_str()))
                    .filter_map(|&i| said_ids.get(i).cloned().flatten())
                    .collect(),
                None => items_of
                    .get(span_part(prefix))
                    .into_iter()
                    .flatten()
                    .filter(|&&n| out.items[n].locator.starts_with(prefix.as_str()))
                    .map(|&n| numbers.id(t, n))
                    .collect(),
            };
            judged.dedup();
            report.read.bump("evaluations");
            if judged.is_empty() {
                report.skipped.push(Skipped {
                    location: format!("span {}", s.id),
                    reason: "an evaluation of a span that gave no evidence or assertion: kept in no item's details".into(),
                });
            }
            for id in judged {
                report
                    .evaluations
                    .entry(id)
                    .or_default()
                    .push(value.clone());
            }
        }
    }
}

/// Adds to `report` what a retired trace's evaluations added to a summary
/// of its own (`given`, from [`evaluations`]).
pub(super) fn add_evaluations(report: &mut ImportReport, given: &ImportReport) {
    for c in &given.read.0 {
        report.read.add(&c.what, c.count);
    }
    report.skipped.extend(given.skipped.iter().cloned());
    for (id, values) in &given.evaluations {
        (report.evaluations.entry(id.clone()).or_default()).extend(values.iter().cloned());
    }
}

/// The part of a locator that names its span: `trace T span S`.
fn span_part(locator: &str) -> &str {
    match locator.match_indices(' ').nth(3) {
        Some((at, _)) => &locator[..at],
        None => locator,
    }
}

/// A belief's or retraction's fields from a JSON object (tool arguments, or a
/// span event's attributes under `prefix`).
pub(super) fn fields(
    map: &Map<String, Value>,
    prefix: &str,
    retract: bool,
) -> Result<Said, String> {
    let get = |k: &str| map.get(&format!("{prefix}{k}")).filter(|v| !v.is_null());
    let string = |k: &str| -> Result<Option<String>, String> {
        match get(k) {
            None => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(other) => Err(format!("{prefix}{k} is a {}, not text", kind_of(other))),
        }
    };
    let when = |k: &str| -> Result<Option<Micros>, String> {
        string(k)?
            .map(|t| time::parse(&t).map_err(|e| format!("{prefix}{k}: {e}")))
            .transpose()
    };
    let topic = string("topic")?.ok_or_else(|| format!("it names no {prefix}topic"))?;
    let claim = string("claim")?;
    if !retract && claim.is_none() {
        return Err(format!("it names no {prefix}claim"));
    }
    let confidence = match get("confidence") {
        None => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => Some(
            s.trim()
                .parse::<f64>()
                .map_err(|_| format!("{prefix}confidence {s:?} is not a number"))?,
        ),
        Some(other) => {
            return Err(format!(
                "{prefix}confidence is a {}, not a number",
                kind_of(other)
            ));
        }
    };
    if let Some(c) = confidence
        && !(0.0..=1.0).contains(&c)
    {
        return Err(format!("{prefix}confidence {c} is not in [0, 1]"));
    }
    let valid_from = when("valid_from")?;
    let valid_to = when("valid_to")?;
    if let (Some(a), Some(b)) = (valid_from, valid_to)
        && b <= a
    {
        return Err(format!("{prefix}valid_to is not after {prefix}valid_from"));
    }
    let cite_key = if retract { "because" } else { "supported_by" };
    let cites = match get(cite_key).or_else(|| if retract { get("supported_by") } else { None }) {
        None => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.trim().to_owned(),
                    other => other.to_string(),
                })
                .filter(|s| !s.is_empty())
                .collect(),
        ),
        Some(Value::String(s)) => Some(
            s.split(',')
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect(),
        ),
        Some(other) => {
            return Err(format!(
                "{prefix}{cite_key} is a {}, not a list of ids",
                kind_of(other)
            ));
        }
    };
    let note = if retract {
        string("reason")?
    } else {
        string("rationale")?
    };
    Ok(Said {
        retract,
        agent: String::new(),
        agent_assumed: false,
        topic,
        claim,
        confidence,
        valid_from,
        valid_to,
        cites,
        note,
        recorded: 0,
        call: None,
        origin: String::new(),
        source: "",
        met: Met::default(),
    })
}

/// Every match of `rule` in a model call's output: an assertion recorded at the
/// call's end, its rationale the verbatim quote and where it stands.
pub(super) fn matches(
    rule: &Rule,
    k: usize,
    s: &SpanRec,
    output: &[Arc<Msg>],
    (agent, agent_assumed): (&str, bool),
    said: &mut Vec<Said>,
) {
    let makes_calls = output
        .iter()
        .flat_map(|m| &m.parts)
        .any(|p| matches!(p, Part::ToolCall { .. }));
    for (i, m) in output.iter().enumerate() {
        for (j, part) in m.parts.iter().enumerate() {
            let (text, within) = match part {
                Part::Text(t) if m.role == "assistant" => {
                    if rule.within.contains(&Within::Assistant) {
                        (t, Within::Assistant)
                    } else if rule.within.contains(&Within::Final) && !makes_calls {
                        (t, Within::Final)
                    } else {
                        continue;
                    }
                }
                Part::Reasoning(t) if rule.within.contains(&Within::Reasoning) => {
                    (t, Within::Reasoning)
                }
                Part::ToolCall { args, .. } if rule.within.contains(&Within::ToolArgs) => {
                    (args, Within::ToolArgs)
                }
                _ => continue,
            };
            for caps in rule.regex.captures_iter(text) {
                let (Some(quote), Some(claim)) = (caps.get(0), caps.name("claim")) else {
                    continue;
                };
                let claim = claim.as_str().trim();
                if claim.is_empty() {
                    continue;
                }
                let confidence = rules::confidence_of(&caps).or(rule.confidence);
                said.push(Said {
                    retract: false,
                    agent: agent.to_owned(),
                    agent_assumed,
                    topic: rule.topic.clone(),
                    claim: Some(claim.to_owned()),
                    confidence,
                    valid_from: None,
                    valid_to: None,
                    cites: None,
                    note: Some(format!("“{}” ({})", quote.as_str(), within.as_str())),
                    recorded: s.end,
                    call: Some(k),
                    origin: format!("{} output message {i} part {j}", s.locator()),
                    source: "rules",
                    met: Met::default(),
                });
            }
        }
    }
}
