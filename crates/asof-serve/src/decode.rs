//! A request body as one line of OTLP/JSON: protobuf decoded by the OTLP
//! messages `opentelemetry-proto` generates with prost and written back by
//! their serde mapping; JSON read by the importer's own OTLP/JSON reader,
//! then written on one line. A gzip body is inflated up to the size limit
//! and no further (a gzip bomb is cut off there, not inflated).

use asof_otlp as wire;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use std::io::Read;

/// What a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// `/v1/traces`: spans.
    Traces,
    /// `/v1/logs`: log records.
    Logs,
}

impl Signal {
    /// The OTLP/JSON key a request of this signal holds.
    pub fn key(self) -> &'static str {
        match self {
            Signal::Traces => "resourceSpans",
            Signal::Logs => "resourceLogs",
        }
    }

    /// "spans" or "log records".
    pub fn items(self) -> &'static str {
        match self {
            Signal::Traces => "spans",
            Signal::Logs => "log records",
        }
    }
}

/// How the body is encoded (its `Content-Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `application/x-protobuf`.
    Protobuf,
    /// `application/json`.
    Json,
}

/// Why a body is refused: over the size limit (413), or not a request of
/// this signal (400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Over the size limit.
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// Not a request of this signal: why.
    Undecodable(String),
}

/// A request, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The request as one line of OTLP/JSON (no newline), as the archive
    /// keeps it.
    pub line: String,
    /// Spans or log records it holds.
    pub items: usize,
    /// Those the importer cannot read (ids that are neither 16/8 bytes nor
    /// hex, times missing), each said in `rejected_why`.
    pub rejected: usize,
    /// The first of them, said in a sentence.
    pub rejected_why: Option<String>,
}

/// The body, inflated when it is gzip, refused when it is (or inflates to)
/// more than `limit` bytes.
pub fn inflate(body: &[u8], gzip: bool, limit: usize) -> Result<Vec<u8>, Refusal> {
    if !gzip {
        return if body.len() > limit {
            Err(Refusal::TooLarge { limit })
        } else {
            Ok(body.to_vec())
        };
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(body)
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Refusal::Undecodable(format!("the gzip body cannot be inflated ({e})")))?;
    if out.len() > limit {
        return Err(Refusal::TooLarge { limit });
    }
    Ok(out)
}

/// Decodes one request body of `signal` in `encoding`. The body is parsed
/// once: into a JSON tree, which gives both the archive's line and the
/// request the counts are read from.
pub fn decode(signal: Signal, encoding: Encoding, bytes: &[u8]) -> Result<Decoded, Refusal> {
    let value = match encoding {
        Encoding::Protobuf => {
            let value = match signal {
                Signal::Traces => ExportTraceServiceRequest::decode(bytes)
                    .map_err(|e| not_protobuf(signal, e))
                    .and_then(|r| to_value(&r)),
                Signal::Logs => ExportLogsServiceRequest::decode(bytes)
                    .map_err(|e| not_protobuf(signal, e))
                    .and_then(|r| to_value(&r)),
            }?;
            // A request with nothing in it is still one: written with its key.
            match value {
                serde_json::Value::Object(map) if map.is_empty() => {
                    serde_json::json!({ signal.key(): [] })
                }
                value => value,
            }
        }
        Encoding::Json => {
            let value: serde_json::Value = serde_json::from_slice(bytes)
                .map_err(|e| Refusal::Undecodable(format!("the body is not valid JSON ({e})")))?;
            if value.get(signal.key()).is_none() {
                return Err(Refusal::Undecodable(format!(
                    "the body is JSON but not an OTLP {} request: it has no `{}`",
                    match signal {
                        Signal::Traces => "traces",
                        Signal::Logs => "logs",
                    },
                    signal.key()
                )));
            }
            value
        }
    };
    let request = <wire::Request as serde::Deserialize>::deserialize(&value)
        .map_err(|e| Refusal::Undecodable(format!("the request cannot be read as OTLP ({e})")))?;
    let (items, rejected, rejected_why) = count(&request, signal);
    Ok(Decoded {
        line: value.to_string(),
        items,
        rejected,
        rejected_why,
    })
}

fn not_protobuf(signal: Signal, e: prost::DecodeError) -> Refusal {
    Refusal::Undecodable(format!(
        "the body is not a protobuf OTLP {} request ({e})",
        match signal {
            Signal::Traces => "traces",
            Signal::Logs => "logs",
        }
    ))
}

fn to_value(request: &impl serde::Serialize) -> Result<serde_json::Value, Refusal> {
    serde_json::to_value(request)
        .map_err(|e| Refusal::Undecodable(format!("the request cannot be written as JSON ({e})")))
}

/// The items of a request, and those the importer will not read, with the
/// first few named.
fn count(request: &wire::Request, signal: Signal) -> (usize, usize, Option<String>) {
    let mut items = 0usize;
    let mut named: Vec<String> = Vec::new();
    let mut rejected = 0usize;
    match signal {
        Signal::Traces => {
            for rs in request.resource_spans.iter().flatten() {
                for scope in rs.scope_spans.iter().chain(&rs.library_spans) {
                    for span in &scope.spans {
                        items += 1;
                        let ids = wire::id(&span.trace_id, 16).is_some()
                            && wire::id(&span.span_id, 8).is_some();
                        let times = wire::nanos_to_micros(&span.start).is_some()
                            && wire::nanos_to_micros(&span.end).is_some();
                        if !(ids && times) {
                            rejected += 1;
                            if named.len() < 5 {
                                named.push(format!(
                                    "span {:?}: {}",
                                    span.span_id,
                                    if ids {
                                        "its start or end time is missing"
                                    } else {
                                        "its trace or span id is not 16/8 bytes"
                                    }
                                ));
                            }
                        }
                    }
                }
            }
        }
        Signal::Logs => {
            for rl in request.resource_logs.iter().flatten() {
                for scope in &rl.scope_logs {
                    items += scope.log_records.len();
                }
            }
        }
    }
    let why = (rejected > 0).then(|| {
        format!(
            "{rejected} of {items} {} cannot be read and are not imported: {}",
            signal.items(),
            named.join("; ")
        )
    });
    (items, rejected, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};

    fn request(trace_id: Vec<u8>) -> ExportTraceServiceRequest {
        let span = Span {
            trace_id,
            span_id: vec![2; 8],
            name: "chat gpt-4.1".into(),
            start_time_unix_nano: 1_772_442_601_000_000_000,
            end_time_unix_nano: 1_772_442_602_000_000_000,
            attributes: vec![KeyValue {
                key: "gen_ai.operation.name".into(),
                value: Some(AnyValue {
                    value: Some(any_value::Value::StringValue("chat".into())),
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![ScopeSpans {
                    spans: vec![span],
                    ..Default::default()
                }],
                ..Default::default()
            }],
        }
    }

    #[test]
    fn protobuf_and_json_of_one_request_give_lines_the_importer_reads_alike() {
        let proto = request(vec![1; 16]).encode_to_vec();
        let from_proto = decode(Signal::Traces, Encoding::Protobuf, &proto).unwrap();
        assert_eq!((from_proto.items, from_proto.rejected), (1, 0));
        assert!(
            from_proto
                .line
                .contains("\"traceId\":\"01010101010101010101010101010101\"")
        );
        let from_json = decode(
            Signal::Traces,
            Encoding::Json,
            from_proto.line.replace(',', ",\n ").as_bytes(),
        )
        .unwrap();
        assert!(!from_json.line.contains('\n'), "one line");
        let read = |line: &str| {
            let r: wire::Request = serde_json::from_str(line).unwrap();
            let s = &r.resource_spans.unwrap()[0].scope_spans[0].spans[0];
            (s.trace_id.clone(), s.name.clone(), s.attributes.len())
        };
        assert_eq!(read(&from_proto.line), read(&from_json.line));
    }

    #[test]
    fn bad_bodies_are_refused_with_their_reason() {
        let proto = request(vec![1; 16]).encode_to_vec();
        let cut = decode(
            Signal::Traces,
            Encoding::Protobuf,
            &proto[..proto.len() - 3],
        );
        assert!(
            matches!(cut, Err(Refusal::Undecodable(m)) if m.contains("not a protobuf OTLP traces request"))
        );
        let other = decode(Signal::Traces, Encoding::Json, br#"{"resourceLogs": []}"#);
        assert!(matches!(other, Err(Refusal::Undecodable(m)) if m.contains("no `resourceSpans`")));
        let bad_id = decode(
            Signal::Traces,
            Encoding::Protobuf,
            &request(vec![1; 3]).encode_to_vec(),
        )
        .unwrap();
        assert_eq!(bad_id.rejected, 1);
        assert!(bad_id.rejected_why.unwrap().contains("not 16/8 bytes"));
    }

    #[test]
    fn a_gzip_bomb_is_cut_off_at_the_limit() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&vec![b'a'; 64 << 20]).unwrap();
        let bomb = gz.finish().unwrap();
        assert!(bomb.len() < 1 << 20, "small on the wire");
        assert_eq!(
            inflate(&bomb, true, 16 << 20),
            Err(Refusal::TooLarge { limit: 16 << 20 })
        );
        assert_eq!(
            inflate(b"not gzip", false, 4),
            Err(Refusal::TooLarge { limit: 4 })
        );
        assert!(matches!(
            inflate(b"not gzip", true, 1 << 20),
            Err(Refusal::Undecodable(_))
        ));
    }
}
