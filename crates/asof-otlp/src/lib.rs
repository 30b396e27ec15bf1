//! OTLP/JSON as it is written: `ExportTraceServiceRequest` and
//! `ExportLogsServiceRequest` objects, one per file or one per line (the
//! OpenTelemetry Collector's file exporter).
//!
//! Field names are lowerCamelCase in OTLP/JSON; the protobuf JSON mapping also
//! accepts the proto names (snake_case), so both are read. Trace and span ids
//! are hex (OTLP/JSON) or base64 (the generic protobuf mapping of `bytes`);
//! 64-bit integers are strings or numbers; enums are numbers or names.
//!
//! Shared by the importer (asof-import) and the receiver (asof-serve), which
//! needs to read a request without the importer and its SQLite.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

use serde::Deserialize;
use serde_json::Value;

/// A trace request, a logs request, or (as some writers batch them) both.
/// An object with neither is not OTLP (see `otlp::requests`).
#[derive(Debug, Deserialize)]
pub struct Request {
    /// `resourceSpans`: the spans, by the resource that made them.
    #[serde(default, rename = "resourceSpans", alias = "resource_spans")]
    pub resource_spans: Option<Vec<ResourceSpans>>,
    /// `resourceLogs`: the log records, by the resource that made them.
    #[serde(default, rename = "resourceLogs", alias = "resource_logs")]
    pub resource_logs: Option<Vec<ResourceLogs>>,
}

impl Request {
    /// Whether it holds spans or logs at all (an object with neither is not OTLP).
    pub fn is_otlp(&self) -> bool {
        self.resource_spans.is_some() || self.resource_logs.is_some()
    }
}

/// The log records of one resource.
#[derive(Debug, Deserialize)]
pub struct ResourceLogs {
    /// `resource`: what made them (its `service.name` and other attributes).
    #[serde(default)]
    pub resource: Option<Resource>,
    /// `scopeLogs`: the records, by instrumentation scope.
    #[serde(default, rename = "scopeLogs", alias = "scope_logs")]
    pub scope_logs: Vec<ScopeLogs>,
}

/// The log records of one instrumentation scope.
#[derive(Debug, Deserialize)]
pub struct ScopeLogs {
    /// `logRecords`.
    #[serde(default, rename = "logRecords", alias = "log_records")]
    pub log_records: Vec<LogRecord>,
}

/// One log record. The GenAI event form writes each message as one, its
/// name in `eventName` (OTLP 1.5) or the `event.name` attribute, its message
/// in the body.
#[derive(Debug, Deserialize)]
pub struct LogRecord {
    /// `timeUnixNano`: when the event happened (ns, a string or a number).
    #[serde(default, rename = "timeUnixNano", alias = "time_unix_nano")]
    pub time: Value,
    #[serde(
        default,
        rename = "observedTimeUnixNano",
        alias = "observed_time_unix_nano"
    )]
    /// `observedTimeUnixNano`: when the collector saw it (read when `timeUnixNano` is unset or
    /// not a time).
    pub observed_time: Value,
    /// `eventName` (OTLP 1.5); empty when the record names its event by attribute.
    #[serde(default, rename = "eventName", alias = "event_name")]
    pub event_name: String,
    /// `body`: the message, for a GenAI event.
    #[serde(default)]
    pub body: Option<AnyValue>,
    /// `attributes`.
    #[serde(default)]
    pub attributes: Vec<KeyValue>,
    /// `traceId` of the span it belongs to (hex or base64), if any.
    #[serde(default, rename = "traceId", alias = "trace_id")]
    pub trace_id: String,
    /// `spanId` of the span it belongs to, if any.
    #[serde(default, rename = "spanId", alias = "span_id")]
    pub span_id: String,
}

/// The spans of one resource.
#[derive(Debug, Deserialize)]
pub struct ResourceSpans {
    /// `resource`: what made them (its `service.name` and other attributes).
    #[serde(default)]
    pub resource: Option<Resource>,
    /// `scopeSpans`: the spans, by instrumentation scope.
    #[serde(default, rename = "scopeSpans", alias = "scope_spans")]
    pub scope_spans: Vec<ScopeSpans>,
    /// Before OTLP 1.0 the scope level was called `instrumentationLibrarySpans`.
    #[serde(
        default,
        rename = "instrumentationLibrarySpans",
        alias = "instrumentation_library_spans"
    )]
    pub library_spans: Vec<ScopeSpans>,
}

/// What made a batch of spans or records.
#[derive(Debug, Deserialize)]
pub struct Resource {
    /// `attributes` (`service.name`, …).
    #[serde(default)]
    pub attributes: Vec<KeyValue>,
}

/// The spans of one instrumentation scope.
#[derive(Debug, Deserialize)]
pub struct ScopeSpans {
    /// `spans`.
    #[serde(default)]
    pub spans: Vec<Span>,
}

/// One span.
#[derive(Debug, Deserialize)]
pub struct Span {
    /// `traceId` (hex or base64).
    #[serde(default, rename = "traceId", alias = "trace_id")]
    pub trace_id: String,
    /// `spanId` (hex or base64).
    #[serde(default, rename = "spanId", alias = "span_id")]
    pub span_id: String,
    /// `parentSpanId`; empty for a root span.
    #[serde(default, rename = "parentSpanId", alias = "parent_span_id")]
    pub parent_span_id: String,
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `kind`, a number or a name.
    #[serde(default)]
    pub kind: Value,
    /// `startTimeUnixNano` (ns, a string or a number).
    #[serde(default, rename = "startTimeUnixNano", alias = "start_time_unix_nano")]
    pub start: Value,
    /// `endTimeUnixNano`.
    #[serde(default, rename = "endTimeUnixNano", alias = "end_time_unix_nano")]
    pub end: Value,
    /// `attributes`.
    #[serde(default)]
    pub attributes: Vec<KeyValue>,
    /// `events`.
    #[serde(default)]
    pub events: Vec<SpanEvent>,
    /// `status`, when set.
    #[serde(default)]
    pub status: Option<Status>,
}

/// An event of a span (a GenAI message, in the older event form).
#[derive(Debug, Clone, Deserialize)]
pub struct SpanEvent {
    /// `timeUnixNano`.
    #[serde(default, rename = "timeUnixNano", alias = "time_unix_nano")]
    pub time: Value,
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `attributes`.
    #[serde(default)]
    pub attributes: Vec<KeyValue>,
}

/// A span's status.
#[derive(Debug, Deserialize)]
pub struct Status {
    /// `code`: a number or a name (`STATUS_CODE_ERROR`).
    #[serde(default)]
    pub code: Value,
    /// `message`.
    #[serde(default)]
    pub message: String,
}

impl Status {
    /// `STATUS_CODE_ERROR` (2), by number or name.
    pub fn is_error(&self) -> bool {
        match &self.code {
            Value::Number(n) => n.as_u64() == Some(2),
            Value::String(s) => s == "STATUS_CODE_ERROR" || s == "2" || s == "ERROR",
            _ => false,
        }
    }
}

/// An attribute: a key and its value.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyValue {
    /// `key`.
    pub key: String,
    /// `value`.
    #[serde(default)]
    pub value: AnyValue,
}

/// OTLP's `AnyValue`: exactly one of its fields is set.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AnyValue {
    /// `stringValue`.
    #[serde(default, rename = "stringValue", alias = "string_value")]
    pub string: Option<String>,
    /// `boolValue`.
    #[serde(default, rename = "boolValue", alias = "bool_value")]
    pub bool: Option<bool>,
    /// `intValue` (a string or a number).
    #[serde(default, rename = "intValue", alias = "int_value")]
    pub int: Option<Value>,
    /// `doubleValue`.
    #[serde(default, rename = "doubleValue", alias = "double_value")]
    pub double: Option<Value>,
    /// `arrayValue`.
    #[serde(default, rename = "arrayValue", alias = "array_value")]
    pub array: Option<ArrayValue>,
    /// `kvlistValue`.
    #[serde(default, rename = "kvlistValue", alias = "kvlist_value")]
    pub kvlist: Option<KvList>,
    /// `bytesValue` (base64).
    #[serde(default, rename = "bytesValue", alias = "bytes_value")]
    pub bytes: Option<String>,
}

/// OTLP's `ArrayValue`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ArrayValue {
    /// `values`.
    #[serde(default)]
    pub values: Vec<AnyValue>,
}

/// OTLP's `KeyValueList`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct KvList {
    /// `values`.
    #[serde(default)]
    pub values: Vec<KeyValue>,
}

impl AnyValue {
    /// The value as JSON: strings stay strings, int64s become numbers, arrays
    /// and key-value lists become arrays and objects.
    pub fn to_json(&self) -> Value {
        if let Some(s) = &self.string {
            return Value::String(s.clone());
        }
        if let Some(b) = self.bool {
            return Value::Bool(b);
        }
        if let Some(i) = &self.int {
            return match i {
                Value::String(s) => s
                    .parse::<i64>()
                    .map(Value::from)
                    .unwrap_or_else(|_| Value::String(s.clone())),
                other => other.clone(),
            };
        }
        if let Some(d) = &self.double {
            return match d {
                Value::String(s) => s
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
                    .unwrap_or_else(|| Value::String(s.clone())),
                other => other.clone(),
            };
        }
        if let Some(a) = &self.array {
            return Value::Array(a.values.iter().map(AnyValue::to_json).collect());
        }
        if let Some(kv) = &self.kvlist {
            return Value::Object(
                kv.values
                    .iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect(),
            );
        }
        if let Some(b) = &self.bytes {
            return Value::String(b.clone());
        }
        Value::Null
    }

    /// The value as text: a string as it is, anything else as compact JSON.
    pub fn to_text(&self) -> String {
        match &self.string {
            Some(s) => s.clone(),
            None => match self.to_json() {
                Value::String(s) => s,
                Value::Null => String::new(),
                other => other.to_string(),
            },
        }
    }

    /// A list of strings (an array value, or one string).
    pub fn to_strings(&self) -> Vec<String> {
        match self.to_json() {
            Value::Array(items) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                })
                .collect(),
            Value::String(s) if s.trim_start().starts_with('[') => {
                serde_json::from_str::<Vec<Value>>(&s)
                    .map(|items| {
                        items
                            .into_iter()
                            .map(|v| match v {
                                Value::String(s) => s,
                                other => other.to_string(),
                            })
                            .collect()
                    })
                    .unwrap_or_else(|_| vec![s])
            }
            Value::String(s) => s
                .split(',')
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect(),
            Value::Null => Vec::new(),
            other => vec![other.to_string()],
        }
    }
}

/// A trace or span id as lowercase hex: hex as written, or base64 decoded to
/// `bytes` bytes. `None` when it is neither (or empty).
pub fn id(text: &str, bytes: usize) -> Option<String> {
    let t = text.trim();
    if t.len() == bytes * 2 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Some(t.to_ascii_lowercase());
    }
    let raw = base64(t)?;
    (raw.len() == bytes && raw.iter().any(|&b| b != 0))
        .then(|| raw.iter().map(|b| format!("{b:02x}")).collect())
}

/// Standard or URL-safe base64, padded or not.
fn base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let body = text.trim_end_matches('=');
    if body.is_empty() || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.as_bytes().chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c)? << (18 - 6 * i);
        }
        let n = chunk.len() - 1;
        for i in 0..n {
            out.push((acc >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

/// A `fixed64` nanosecond timestamp (string or number) as microseconds.
pub fn nanos_to_micros(v: &Value) -> Option<i64> {
    let nanos: u64 = match v {
        Value::String(s) => s.trim().parse().ok()?,
        Value::Number(n) => n.as_u64()?,
        _ => return None,
    };
    (nanos > 0).then_some((nanos / 1000) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_as_hex_or_base64() {
        let hex = "5b8efff798038103d269b633813fc60c";
        assert_eq!(id(hex, 16).as_deref(), Some(hex));
        assert_eq!(id(&hex.to_uppercase(), 16).as_deref(), Some(hex));
        // The same 16 bytes in base64, padded and not.
        assert_eq!(id("W47/95gDgQPSabYzgT/GDA==", 16).as_deref(), Some(hex));
        assert_eq!(id("W47_95gDgQPSabYzgT_GDA", 16).as_deref(), Some(hex));
        assert_eq!(
            id("eee19b7ec3c1b174", 8).as_deref(),
            Some("eee19b7ec3c1b174")
        );
        assert_eq!(id("7uGbfsPBsXQ=", 8).as_deref(), Some("eee19b7ec3c1b174"));
        for bad in [
            "",
            "xyz",
            "AAAAAAAAAAA=",
            "W47/95gDgQPSabYzgT/GDA==",
            "not base64!!",
        ] {
            assert_eq!(id(bad, 8), None, "{bad}");
        }
    }

    #[test]
    fn timestamps_and_values() {
        assert_eq!(
            nanos_to_micros(&Value::String("1700000000123456789".into())),
            Some(1_700_000_000_123_456)
        );
        assert_eq!(
            nanos_to_micros(&serde_json::json!(1_000_000_000u64)),
            Some(1_000_000)
        );
        assert_eq!(nanos_to_micros(&Value::Null), None);
        let v: AnyValue = serde_json::from_str(r#"{"intValue":"42"}"#).unwrap();
        assert_eq!(v.to_json(), serde_json::json!(42));
        let v: AnyValue = serde_json::from_str(
            r#"{"arrayValue":{"values":[{"stringValue":"E1"},{"stringValue":"E2"}]}}"#,
        )
        .unwrap();
        assert_eq!(v.to_strings(), vec!["E1", "E2"]);
        let v: AnyValue = serde_json::from_str(r#"{"string_value":"E1, E2"}"#).unwrap();
        assert_eq!(v.to_strings(), vec!["E1", "E2"]);
    }
}
