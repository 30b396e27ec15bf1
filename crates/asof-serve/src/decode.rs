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
/// once: protobuf into its messages, written as the archive's line straight
/// from them and counted from them; JSON into a JSON tree, which gives both
/// the line and the request the counts are read from.
pub fn decode(signal: Signal, encoding: Encoding, bytes: &[u8]) -> Result<Decoded, Refusal> {
    match encoding {
        Encoding::Protobuf => {
            let (line, counted) = match signal {
                Signal::Traces => {
                    let r = ExportTraceServiceRequest::decode(bytes)
                        .map_err(|e| not_protobuf(signal, e))?;
                    let spans = (r.resource_spans.iter())
                        .flat_map(|rs| &rs.scope_spans)
                        .flat_map(|scope| &scope.spans)
                        .map(|span| Item {
                            trace_id: asof_core::text::hex(&span.trace_id),
                            span_id: asof_core::text::hex(&span.span_id),
                            times: span.start_time_unix_nano > 0 && span.end_time_unix_nano > 0,
                        });
                    (to_line(&r, signal)?, tally(spans, signal))
                }
                Signal::Logs => {
                    let r = ExportLogsServiceRequest::decode(bytes)
                        .map_err(|e| not_protobuf(signal, e))?;
                    let records = (r.resource_logs.iter())
                        .flat_map(|rl| &rl.scope_logs)
                        .map(|scope| scope.log_records.len())
                        .sum();
                    (to_line(&r, signal)?, (records, 0, None))
                }
            };
            Ok(decoded(line, counted))
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
            let request =
                <wire::Request as serde::Deserialize>::deserialize(&value).map_err(|e| {
                    Refusal::Undecodable(format!("the request cannot be read as OTLP ({e})"))
                })?;
            Ok(decoded(value.to_string(), count(&request, signal)))
        }
    }
}

fn decoded(line: String, (items, rejected, rejected_why): Counted) -> Decoded {
    Decoded {
        line,
        items,
        rejected,
        rejected_why,
    }
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

/// A protobuf request as one line of OTLP/JSON, by the messages' serde
/// mapping (ids in hex, as OTLP/JSON writes them); a request with nothing
/// in it is still one, written with its key.
fn to_line(request: &impl serde::Serialize, signal: Signal) -> Result<String, Refusal> {
    let line = serde_json::to_string(request).map_err(|e| {
        Refusal::Undecodable(format!("the request cannot be written as JSON ({e})"))
    })?;
    Ok(match line.as_str() {
        "{}" => serde_json::json!({ signal.key(): [] }).to_string(),
        _ => line,
    })
}

/// A request's items, those the importer cannot read, and why, said of the
/// first few.
type Counted = (usize, usize, Option<String>);

/// What the importer checks of a span before reading it: its ids as the
/// line writes them, and whether it has a start and an end.
struct Item {
    trace_id: String,
    span_id: String,
    times: bool,
}

fn count(request: &wire::Request, signal: Signal) -> Counted {
    match signal {
        Signal::Traces => {
            let spans = (request.resource_spans.iter().flatten())
                .flat_map(|rs| rs.scope_spans.iter().chain(&rs.library_spans))
                .flat_map(|scope| &scope.spans)
                .map(|span| Item {
                    trace_id: span.trace_id.clone(),
                    span_id: span.span_id.clone(),
                    times: wire::nanos_to_micros(&span.start).is_some()
                        && wire::nanos_to_micros(&span.end).is_some(),
                });
            tally(spans, signal)
        }
        Signal::Logs => {
            let records = (request.resource_logs.iter().flatten())
                .flat_map(|rl| &rl.scope_logs)
                .map(|scope| scope.log_records.len())
                .sum();
            (records, 0, None)
        }
    }
}

/// Counts `spans`, and those the importer cannot read (ids that are not
/// 16/8 bytes, a time missing), saying the first five.
fn tally(spans: impl Iterator<Item = Item>, signal: Signal) -> Counted {
    let (mut items, mut rejected) = (0usize, 0usize);
    let mut named: Vec<String> = Vec::new();
    for span in spans {
        items += 1;
        let ids = wire::id(&span.trace_id, 16).is_some() && wire::id(&span.span_id, 8).is_some();
        if ids && span.times {
            continue;
        }
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

    /// A protobuf request's line, written straight from its messages, is
    /// the JSON its messages' serde mapping gives (the tree the line was
    /// once written from), and its counts are those read back from that
    /// tree as the importer reads it: for good spans, ids of other lengths
    /// (one that reads as base64), times missing, and nothing at all.
    #[test]
    fn a_protobuf_request_is_written_and_counted_as_its_json_reads() {
        let mut odd = request(vec![7; 11]);
        let span = &mut odd.resource_spans[0].scope_spans[0].spans[0];
        span.end_time_unix_nano = 0;
        let mut many = request(vec![1; 16]);
        let mut spans = many.resource_spans[0].scope_spans[0].spans.clone();
        for (k, id) in [vec![0; 16], vec![3; 4], vec![], vec![9; 16]]
            .into_iter()
            .enumerate()
        {
            let mut s = spans[0].clone();
            s.trace_id = id;
            s.span_id = vec![k as u8 + 1; if k == 2 { 3 } else { 8 }];
            s.start_time_unix_nano = (k as u64) * 1_000;
            spans.push(s);
        }
        many.resource_spans[0].scope_spans[0].spans = spans;
        let empty = ExportTraceServiceRequest::default();
        for r in [request(vec![1; 16]), request(vec![1; 3]), odd, many, empty] {
            let new = decode(Signal::Traces, Encoding::Protobuf, &r.encode_to_vec()).unwrap();
            let tree = match serde_json::to_value(&r).unwrap() {
                serde_json::Value::Object(map) if map.is_empty() => {
                    serde_json::json!({ "resourceSpans": [] })
                }
                tree => tree,
            };
            let line: serde_json::Value = serde_json::from_str(&new.line).unwrap();
            assert_eq!(line, tree, "the line");
            let read: wire::Request = serde::Deserialize::deserialize(&tree).unwrap();
            let (items, rejected, why) = count(&read, Signal::Traces);
            assert_eq!(
                (new.items, new.rejected, new.rejected_why),
                (items, rejected, why)
            );
        }
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
