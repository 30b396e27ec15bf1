//! The live-ingestion benchmark (design.md §7, `asof serve`): the release
//! binary serves a fresh store while four exporters send a generated agent
//! run as protobuf requests of `--spans-per-request` spans for `--seconds`
//! seconds. Reports spans/s acknowledged, and for every request the time from
//! its acknowledgement to the store having applied its archive line
//! (received → store), and the serve process's peak memory (its VmHWM,
//! polled every 20 ms).
//!
//!     cargo bench --bench serve
//!     cargo bench --bench serve -- --seconds 10 --spans-per-request 100
//!
//! Prints one JSON object; nothing is asserted.

mod common;

use common::arg;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use serde_json::json;
use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Protobuf requests of `per` spans each, from a generated run.
fn requests(spans: u64, per: usize) -> Vec<(Vec<u8>, usize)> {
    let mut bytes = Vec::new();
    asof::synth::otlp(
        asof::synth::GenConfig {
            events: spans,
            topics: 50,
            agents: 4,
            seed: 3,
        },
        &mut bytes,
    )
    .expect("generate");
    let mut out = Vec::new();
    for line in String::from_utf8(bytes).expect("utf-8").lines() {
        let request: serde_json::Value = serde_json::from_str(line).expect("json");
        for rs in request["resourceSpans"].as_array().expect("resourceSpans") {
            for ss in rs["scopeSpans"].as_array().expect("scopeSpans") {
                for chunk in ss["spans"].as_array().expect("spans").chunks(per) {
                    let small = json!({"resourceSpans": [{"resource": rs["resource"],
                        "scopeSpans": [{"scope": ss["scope"], "spans": chunk}]}]});
                    let proto: ExportTraceServiceRequest =
                        serde_json::from_value(small).expect("OTLP/JSON");
                    out.push((proto.encode_to_vec(), chunk.len()));
                }
            }
        }
    }
    out
}

/// Sends one request on a kept-alive connection; its status.
fn send(stream: &mut std::io::BufReader<TcpStream>, addr: &str, body: &[u8]) -> Option<u16> {
    let head = format!(
        "POST /v1/traces HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-protobuf\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let s = stream.get_mut();
    s.write_all(head.as_bytes()).ok()?;
    s.write_all(body).ok()?;
    let mut status = String::new();
    stream.read_line(&mut status).ok()?;
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).ok()?;
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).ok()?;
    status.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let seconds = arg("--seconds", 20);
    let per = arg("--spans-per-request", 200) as usize;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("serve.db");
    let all = Arc::new(requests(400_000, per));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_asof"))
        .arg("serve")
        .arg("--db")
        .arg(&db)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start asof serve");
    let mut first = String::new();
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    lines.read_line(&mut first).expect("its address");
    std::thread::spawn(move || std::io::copy(&mut lines, &mut std::io::sink()));
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("an address")
        .to_owned();
    let status_file = format!("/proc/{}/status", child.id());
    let stop = Arc::new(AtomicBool::new(false));
    let next = Arc::new(AtomicU64::new(0));
    let spans = Arc::new(AtomicU64::new(0));
    // When each request was acknowledged, by its archive line (1-based).
    let acked: Arc<Mutex<Vec<(u64, Instant)>>> = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let senders: Vec<_> = (0..4)
        .map(|_| {
            let (all, stop, next, spans, acked, addr) = (
                all.clone(),
                stop.clone(),
                next.clone(),
                spans.clone(),
                acked.clone(),
                addr.clone(),
            );
            std::thread::spawn(move || {
                let mut stream =
                    std::io::BufReader::new(TcpStream::connect(&addr).expect("connect"));
                let mut refused = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                    let Some((body, n)) = all.get(i) else { break };
                    match send(&mut stream, &addr, body) {
                        Some(200) => {
                            spans.fetch_add(*n as u64, Ordering::Relaxed);
                            acked
                                .lock()
                                .expect("acked")
                                .push((i as u64, Instant::now()));
                        }
                        _ => refused += 1,
                    }
                }
                refused
            })
        })
        .collect();
    // The store's applied lines, polled.
    let mut applied: Vec<(Instant, u64)> = Vec::new();
    let mut peak_kb = 0u64;
    while started.elapsed() < Duration::from_secs(seconds) {
        if let Ok(conn) =
            rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            && let Ok(v) = conn.query_row(
                "SELECT value FROM meta WHERE key = 'follow_lines'",
                [],
                |r| r.get::<_, String>(0),
            )
        {
            applied.push((Instant::now(), v.parse().unwrap_or(0)));
        }
        if let Some(kb) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        }) {
            peak_kb = peak_kb.max(kb);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    let refused: u64 = senders.into_iter().map(|s| s.join().unwrap_or(0)).sum();
    let elapsed = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    // Archive lines are written in acknowledgement order per batch; the k-th
    // acknowledged request is at most line k (one line a request).
    let mut acked = acked.lock().expect("acked").clone();
    acked.sort_by_key(|(_, at)| *at);
    let mut lags: Vec<f64> = Vec::new();
    let mut j = 0;
    for (k, (_, at)) in acked.iter().enumerate() {
        while j < applied.len() && applied[j].1 < k as u64 + 1 {
            j += 1;
        }
        if let Some((when, _)) = applied.get(j) {
            lags.push(when.saturating_duration_since(*at).as_secs_f64() * 1000.0);
        }
    }
    lags.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| {
        lags.get(((lags.len() as f64 - 1.0) * p).round() as usize)
            .copied()
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "seconds": elapsed.as_secs_f64(),
            "spans_per_request": per,
            "requests_acknowledged": acked.len(),
            "requests_refused": refused,
            "spans_per_s": (spans.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64()).round(),
            "received_to_store_ms": {"p50": pct(0.5), "p99": pct(0.99), "max": lags.last(), "n": lags.len(), "of": acked.len()},
            "peak_rss_mb": peak_kb / 1024,
            "targets": {"spans_per_s": ">= 20000", "received_to_store_p99_ms": "<= 1000"},
        }))
        .expect("json")
    );
}
