//! A review as OpenTelemetry (docs/review.md): OTLP/JSON logs, one
//! `gen_ai.evaluation.result` record per finding, so any OpenTelemetry
//! backend shows the findings beside the trace they judge. Reading such a
//! file back gives the same findings.
//!
//! The GenAI semantic conventions name the evaluation's fields
//! (`gen_ai.evaluation.name`, `.score.label`, `.explanation`); what they do
//! not carry, asof's `asof.review.*` attributes do: the finding's id, its
//! target, the reviewer and the two instants.

use super::{Finding, Target, TargetKind, Verdict};
use crate::time::{self, Micros};
use serde_json::{Value, json};

/// The event name of an evaluation in the GenAI conventions.
pub const EVENT: &str = "gen_ai.evaluation.result";
/// `gen_ai.evaluation.name` of asof's findings.
pub const NAME: &str = "asof.review";

/// The trace and span (hex) a finding's target came from, when the source was a trace.
pub type SpanLink = (String, String);

/// `findings` as one OTLP/JSON `ExportLogsServiceRequest`; `link` gives a
/// target's trace and span.
pub fn to_logs(findings: &[Finding], link: impl Fn(&Target) -> Option<SpanLink>) -> Value {
    let records: Vec<Value> = findings
        .iter()
        .map(|f| {
            let mut attrs = vec![
                kv("gen_ai.evaluation.name", NAME),
                kv("gen_ai.evaluation.score.label", f.verdict.as_str()),
            ];
            if let Some(note) = &f.note {
                attrs.push(kv("gen_ai.evaluation.explanation", note));
            }
            attrs.push(kv("asof.review.id", &f.id));
            attrs.push(kv("asof.review.reviewer", &f.reviewer));
            attrs.push(kv("asof.review.made_at", &time::format(f.made_at)));
            attrs.push(kv("asof.review.about", &time::format(f.about)));
            attrs.push(kv("asof.review.target.kind", f.target.kind.as_str()));
            for (key, value) in [
                ("asof.review.target.id", &f.target.id),
                ("asof.review.target.topic", &f.target.topic),
                ("asof.review.target.agent", &f.target.agent),
            ] {
                if let Some(v) = value {
                    attrs.push(kv(key, v));
                }
            }
            let nanos = nanos(f.made_at);
            let mut record = json!({
                "timeUnixNano": nanos,
                "observedTimeUnixNano": nanos,
                "severityNumber": 9,
                "severityText": "INFO",
                "eventName": EVENT,
                "body": {"stringValue": f.note.clone().unwrap_or_else(|| f.verdict.as_str().to_owned())},
                "attributes": attrs,
            });
            if let Some((trace, span)) = link(&f.target) {
                record["traceId"] = json!(trace);
                record["spanId"] = json!(span);
            }
            record
        })
        .collect();
    json!({"resourceLogs": [{
        "resource": {"attributes": [kv("service.name", "asof")]},
        "scopeLogs": [{
            "scope": {"name": NAME, "version": env!("CARGO_PKG_VERSION")},
            "logRecords": records,
        }],
    }]})
}

fn kv(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

/// Nanoseconds since the epoch as OTLP/JSON writes 64-bit integers (a string).
fn nanos(micros: Micros) -> String {
    (i128::from(micros) * 1000).to_string()
}

/// Whether `text` is OTLP/JSON logs rather than a review's JSON Lines.
pub fn looks_like(text: &str) -> bool {
    let head: String = text.trim_start().chars().take(4096).collect();
    head.starts_with('{')
        && (head.contains("\"resourceLogs\"") || head.contains("\"resource_logs\""))
}

/// The findings in OTLP/JSON logs: one request, or one per line (the
/// Collector's file exporter). A record that is not an asof finding is
/// refused, named by its position: nothing is skipped unsaid.
pub fn from_logs(text: &str) -> Result<Vec<Finding>, String> {
    let requests: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(v) => vec![v],
        Err(_) => {
            let mut out = Vec::new();
            for (n, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                out.push(serde_json::from_str(line).map_err(|e| {
                    format!(
                        "line {}: {}",
                        n + 1,
                        crate::dataset::strip_location(&e.to_string())
                    )
                })?);
            }
            out
        }
    };
    let mut findings = Vec::new();
    let mut n = 0;
    for request in &requests {
        let resources = field(request, "resourceLogs", "resource_logs")
            .and_then(Value::as_array)
            .ok_or("an OTLP/JSON review holds `resourceLogs`")?;
        for resource in resources {
            let scopes = field(resource, "scopeLogs", "scope_logs")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            for scope in scopes {
                let records = field(scope, "logRecords", "log_records")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice);
                for record in records {
                    n += 1;
                    findings.push(finding(record).map_err(|e| format!("log record {n}: {e}"))?);
                }
            }
        }
    }
    Ok(findings)
}

fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    v.get(camel).or_else(|| v.get(snake))
}

/// One log record as a finding.
fn finding(record: &Value) -> Result<Finding, String> {
    let attrs = record
        .get("attributes")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let attr = |key: &str| -> Option<String> {
        attrs
            .iter()
            .find(|kv| kv.get("key").and_then(Value::as_str) == Some(key))
            .and_then(|kv| kv.get("value"))
            .and_then(|v| v.get("stringValue").or_else(|| v.get("string_value")))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let event = field(record, "eventName", "event_name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .filter(|s| !s.is_empty())
        .or_else(|| attr("event.name"));
    if event.as_deref() != Some(EVENT) {
        return Err(format!(
            "is not a `{EVENT}` event (its name is {})",
            event.map_or_else(|| "missing".to_owned(), |e| format!("`{e}`"))
        ));
    }
    let name = attr("gen_ai.evaluation.name");
    if name.as_deref() != Some(NAME) {
        return Err(format!(
            "is another evaluator's result (gen_ai.evaluation.name {}), not an asof review finding",
            name.map_or_else(|| "missing".to_owned(), |e| format!("`{e}`"))
        ));
    }
    let need = |key: &str| attr(key).ok_or_else(|| format!("has no `{key}`"));
    let kind = need("asof.review.target.kind")?;
    let kind =
        TargetKind::parse(&kind).ok_or_else(|| format!("target kind `{kind}` is unknown"))?;
    // The finding's own reader checks the rest, as for a review file's line.
    let value = json!({
        "id": need("asof.review.id")?,
        "target": Target {
            kind,
            id: attr("asof.review.target.id"),
            topic: attr("asof.review.target.topic"),
            agent: attr("asof.review.target.agent"),
        }.to_json(),
        "verdict": need("gen_ai.evaluation.score.label")?,
        "note": attr("gen_ai.evaluation.explanation"),
        "reviewer": need("asof.review.reviewer")?,
        "made_at": need("asof.review.made_at")?,
        "about": need("asof.review.about")?,
    });
    let f = Finding::from_json(&value)?;
    debug_assert!(f.verdict.fits(f.target.kind) || f.verdict == Verdict::Note);
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_round_trip_through_otlp_logs() {
        let findings = vec![
            Finding {
                id: "F1".into(),
                target: Target::evidence("E15"),
                verdict: Verdict::parse("rejected").expect("a verdict"),
                note: Some("a traffic lull".into()),
                reviewer: "ana".into(),
                made_at: time::parse("2026-12-06T09:12:03.250Z").expect("a time"),
                about: time::parse("2026-03-03T12:10:00Z").expect("a time"),
            },
            Finding {
                id: "F2".into(),
                target: Target::topic("root-cause", Some("triage")),
                verdict: Verdict::Note,
                note: Some("converged late".into()),
                reviewer: "bob".into(),
                made_at: time::parse("2026-12-06T09:13:00Z").expect("a time"),
                about: time::parse("2026-03-04T00:00:00Z").expect("a time"),
            },
        ];
        let logs = to_logs(&findings, |t| {
            (t.kind == TargetKind::Evidence).then(|| ("ab".repeat(16), "cd".repeat(8)))
        });
        let text = logs.to_string();
        assert!(looks_like(&text));
        let record = &logs["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0];
        assert_eq!(record["traceId"], "ab".repeat(16));
        assert_eq!(record["timeUnixNano"], "1796548323250000000");
        assert_eq!(from_logs(&text), Ok(findings));
    }

    #[test]
    fn another_evaluators_record_is_refused_by_position() {
        let logs = json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [{
            "eventName": EVENT,
            "attributes": [kv("gen_ai.evaluation.name", "relevance")],
        }]}]}]});
        let error = from_logs(&logs.to_string()).expect_err("refused");
        assert!(
            error.starts_with("log record 1: ") && error.contains("`relevance`"),
            "{error}"
        );
    }
}
