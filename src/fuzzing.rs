//! The bodies of the fuzz targets (`tests/fuzz/`, cargo-fuzz), kept in the
//! library so that `tests/integration/fuzz_regressions.rs` replays every input fuzzing ever
//! crashed on with the same code, on stable Rust. Each must return for any input:
//! an answer or an error, never a panic or a hang.

use crate::dataset::{self, Format};
use crate::engine;
use crate::query::{self, Filter, timeline::Timeline};
use crate::store::Store;

/// Any bytes as a dataset: read it; when it is valid, replay it, load it into an
/// in-memory store and run the first queries a reviewer would.
pub fn dataset(format: Format, data: &[u8]) {
    let parsed = match dataset::read_bytes("fuzz", format, data) {
        Ok(parsed) => parsed,
        Err(errors) => {
            let _ = errors.to_string();
            return;
        }
    };
    let replay = engine::replay(&parsed.dataset.header, &parsed.dataset.events);
    if let Err(errors) = parsed.check_replay(&replay) {
        let _ = errors.to_string();
        return;
    }
    let Ok(store) = Store::in_memory("fuzz", &parsed.dataset, &replay) else {
        return;
    };
    queries(store);
}

/// Any bytes as an OTLP/JSON trace: import it with the default options (and a
/// rules file reading every assistant text); when it reads, load it into an
/// in-memory store and query it.
pub fn otlp(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let rules = crate::import::otlp::rules::parse(
        "fuzz.rules.yaml",
        "rules:\n  - topic: root-cause\n    in: [assistant, reasoning, tool_args, final]\n    pattern: 'cause is (?P<claim>[a-z-]+)'\n",
    )
    .unwrap_or_default();
    for options in [
        crate::import::otlp::Options::default(),
        crate::import::otlp::Options {
            rules,
            ..crate::import::otlp::Options::default()
        },
    ] {
        let draft = match crate::import::otlp::read("fuzz", text, &options) {
            Ok(draft) => draft,
            Err(errors) => {
                let _ = errors.to_string();
                continue;
            }
        };
        let Ok((parsed, report, replay)) = crate::import::finish("fuzz", draft) else {
            continue;
        };
        let _ = crate::export::summary::details(&report, true);
        if let Ok(store) = Store::in_memory("fuzz", &parsed.dataset, &replay) {
            queries(store);
        }
    }
}

/// Any bytes as an OTLP/HTTP request body for `asof serve`: the first byte
/// says traces or logs, protobuf or JSON, gzip or not; the rest is the body.
/// It is inflated (1 MiB limit) and decoded; when it decodes, its line is
/// imported as the store following the archive would import it.
pub fn otlp_request(data: &[u8]) {
    use asof_serve::decode::{self, Encoding, Signal};
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let signal = if mode & 1 == 0 {
        Signal::Traces
    } else {
        Signal::Logs
    };
    let encoding = if mode & 2 == 0 {
        Encoding::Protobuf
    } else {
        Encoding::Json
    };
    let Ok(bytes) = decode::inflate(body, mode & 4 != 0, 1 << 20) else {
        return;
    };
    let Ok(decoded) = decode::decode(signal, encoding, &bytes) else {
        return;
    };
    assert!(!decoded.line.contains('\n'), "an archive line is one line");
    otlp(decoded.line.as_bytes());
}

/// Any bytes as what a client sends on one of `asof serve`'s connections:
/// requests read one after another as the connection reads them (64 KiB
/// body limit), each decoded as the receiver decodes its body.
pub fn http_connection(data: &[u8]) {
    use asof_serve::decode::{self, Encoding, Signal};
    use asof_serve::http::{Body, Next, next};
    let mut reader = std::io::Cursor::new(data);
    // Each request read takes at least its head's bytes: bounded by the input.
    while let Ok(Next::Request { request, keep }) = next(&mut reader, 64 << 10, || Ok(())) {
        if let Body::Read(body) = &request.body {
            let gzip = request.header("Content-Encoding") == Some("gzip");
            let encoding = if request.header("Content-Type") == Some("application/json") {
                Encoding::Json
            } else {
                Encoding::Protobuf
            };
            if let Ok(bytes) = decode::inflate(body, gzip, 64 << 10) {
                let _ = decode::decode(Signal::Traces, encoding, &bytes);
            }
        }
        if !keep {
            break;
        }
    }
}

/// Any bytes as a store file: open it (read-only) and query it.
pub fn store(data: &[u8]) {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let path = dir.path().join("fuzz.db");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(store) = Store::open(&path) {
        let _ = store.log();
        let _ = store.check();
        queries(store);
    }
}

fn queries(store: Store) {
    let _ = query::believed(&store, i64::MAX - 1, None, &Filter::default());
    let _ = query::evidence(&store);
    for topic in store.header().topics.iter().take(3) {
        let _ = query::history(&store, &topic.id, None);
    }
    // The TUI's reading of a store: its scrub index, then rows on demand.
    if let Ok(timeline) = Timeline::load(store) {
        let _ = timeline.believed(0, Some(0), &Filter::default());
        let end = timeline.span().map_or(0, |(_, last)| last);
        let _ = timeline.believed(end, None, &Filter::default());
        let _ = timeline.latest_marks(end);
        if timeline.evidence_count() > 0 {
            let _ = timeline.evidence_item(0);
        }
        for t in 0..timeline.header.topics.len().min(3) {
            let _ = timeline.topic_versions(t, None);
        }
    }
}
