//! The live-ingestion benchmark (design.md §7, `asof serve`): the release
//! binary serves a fresh store; four exporters send a generated agent run as
//! protobuf requests of `--spans-per-request` spans. First `--prefill` spans
//! (100,000 by default: the archive size §18's target names), and the store
//! is let catch up; then, measured, as fast as they are taken for
//! `--seconds` seconds. Reports spans/s acknowledged, and for every measured
//! request the time from its acknowledgement to the store having applied its
//! archive line (received → store), the time until a watcher that does what
//! `asof tui STORE --follow` does (asks SQLite every `live::POLL` whether the
//! store changed, then reads its timeline again) has it on screen (received
//! → screen), the serve process's peak memory (its VmHWM, polled every
//! 20 ms), and the cores serve and the benchmark itself (exporters and
//! watcher) used while measured.
//!
//! `--rate N` paces the measured requests to N spans/s in all (an agent
//! fleet's pace, not a flood): received → store is then the store's own
//! delay, not a queue the senders built.
//!
//!     cargo bench --bench serve
//!     cargo bench --bench serve -- --seconds 10 --spans-per-request 100 --prefill 0
//!     cargo bench --bench serve -- --rate 2000
//!
//! `--restart` then stops serve cleanly (SIGTERM), starts it again on the
//! same store and archive, and sends one more request: `restart_s` is the
//! time from the start until that request is in the store (what taking up
//! the archive costs), with the restarted process's peak memory.
//!
//!     cargo bench --bench serve -- --prefill 1000000 --seconds 5 --rate 2000 --restart
//!
//! `--run-spans N` makes it a fleet at work: each of the four agents runs one
//! run after another, each run its own trace of about N spans, closed by its
//! agent span (0, the default: one run per agent for the whole benchmark —
//! four traces that never end, the importer's worst case).
//!
//!     cargo bench --bench serve -- --prefill 1000000 --seconds 5 --rate 2000 --restart --run-spans 2000
//!
//! The generated spans are stamped at the measured pace (`--rate`, or
//! 20,000 spans/s when flooding): the agents' clocks go as a fleet sending
//! at that rate would stamp them, so that what the importer reads from span
//! time (a run quiet for a minute is over) is what it would read live.
//!
//! Prints one JSON object; nothing is asserted.

mod common;

use common::arg;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use serde_json::json;
use std::io::{BufRead, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Protobuf requests of `per` spans each, from a generated run stamped as a
/// fleet exporting `span_rate` spans a second stamps its spans.
fn requests(spans: u64, per: usize, run_spans: u64, span_rate: u32) -> Vec<(Vec<u8>, usize)> {
    let config = asof::synth::GenConfig {
        events: spans,
        topics: 50,
        agents: 4,
        seed: 3,
    };
    asof::synth::otlp_runs(config, per, run_spans, Some(span_rate))
        .iter()
        .map(|line| {
            let proto: ExportTraceServiceRequest = serde_json::from_str(line).expect("OTLP/JSON");
            let spans = proto
                .resource_spans
                .iter()
                .flat_map(|rs| &rs.scope_spans)
                .map(|ss| ss.spans.len())
                .sum();
            (proto.encode_to_vec(), spans)
        })
        .collect()
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
    common::serve::read_answer(stream).map(|(status, _)| status)
}

/// Sends `range` of `all` from four exporters, each on a kept-alive
/// connection, until done (or `until`), at most `pace.1` spans/s in all from
/// `pace.0` when paced; returns when each acknowledged request was
/// acknowledged, how many were refused, and the spans acknowledged.
fn send_all(
    all: &Arc<Vec<(Vec<u8>, usize)>>,
    range: std::ops::Range<usize>,
    addr: &str,
    until: Option<Instant>,
    pace: Option<(Instant, u64)>,
) -> (Vec<Instant>, u64, u64) {
    let offered = Arc::new(AtomicU64::new(0));
    let next = Arc::new(AtomicU64::new(range.start as u64));
    let acked: Arc<Mutex<Vec<Instant>>> = Arc::new(Mutex::new(Vec::new()));
    let spans = Arc::new(AtomicU64::new(0));
    let senders: Vec<_> = (0..4)
        .map(|_| {
            let (all, next, acked, spans, addr, offered) = (
                all.clone(),
                next.clone(),
                acked.clone(),
                spans.clone(),
                addr.to_owned(),
                offered.clone(),
            );
            let end = range.end;
            std::thread::spawn(move || {
                let mut stream =
                    std::io::BufReader::new(TcpStream::connect(&addr).expect("connect"));
                let mut refused = 0u64;
                while until.is_none_or(|u| Instant::now() < u) {
                    let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                    if i >= end {
                        break;
                    }
                    let (body, n) = &all[i];
                    if let Some((from, rate)) = pace {
                        // Not before the instant this request's spans are due.
                        let due = offered.fetch_add(*n as u64, Ordering::Relaxed);
                        let at = from + Duration::from_secs_f64(due as f64 / rate as f64);
                        std::thread::sleep(at.saturating_duration_since(Instant::now()));
                    }
                    match send(&mut stream, &addr, body) {
                        Some(200) => {
                            spans.fetch_add(*n as u64, Ordering::Relaxed);
                            acked.lock().expect("acked").push(Instant::now());
                        }
                        _ => refused += 1,
                    }
                }
                refused
            })
        })
        .collect();
    let refused = senders.into_iter().map(|s| s.join().unwrap_or(0)).sum();
    let acked = acked.lock().expect("acked").clone();
    (acked, refused, spans.load(Ordering::Relaxed))
}

fn main() {
    // As the binary starts (the screen's watcher below is the TUI's).
    asof::runtime::init();
    let seconds = arg("--seconds", 20);
    let per = arg("--spans-per-request", 200) as usize;
    let prefill = arg("--prefill", 100_000);
    let rate = arg("--rate", 0);
    let run_spans = arg("--run-spans", 0);
    let restart = std::env::args().any(|a| a == "--restart");
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("serve.db");
    // The agents' clocks keep the measured pace (20,000 spans/s, the
    // target's, when flooding): the span time between two requests is what
    // it would be at a fleet sending at that rate.
    let span_rate = if rate > 0 { rate as u32 } else { 20_000 };
    // Enough requests for the run: flooded, more than any machine here
    // sends (30,000 spans/s); paced, the rate's and a tenth more (a long
    // run at a fleet's pace is then not held whole in memory first).
    let offered = match rate {
        0 => 30_000 * seconds,
        rate => rate * seconds + rate * seconds / 10 + per as u64,
    };
    let all = Arc::new(requests(prefill + offered, per, run_spans, span_rate));
    // The requests that make up the prefill.
    let prefill_requests = {
        let mut spans = 0u64;
        all.iter()
            .take_while(|(_, n)| {
                spans += *n as u64;
                spans <= prefill
            })
            .count()
    };
    let (mut child, addr) = start_serve(&db);
    let memory = common::memory::watch_peak(child.id());
    let applied_lines = || common::serve::applied_lines(&db).unwrap_or(0);
    // The prefill: sent, then applied.
    let (prefilled, _, _) = send_all(&all, 0..prefill_requests, &addr, None, None);
    let caught_up = Instant::now();
    while applied_lines() < prefilled.len() as u64 && caught_up.elapsed() < Duration::from_secs(300)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let catch_up = caught_up.elapsed();
    // What a following TUI shows: when it has read the timeline again, the
    // lines applied before it began to read (so at least those are shown).
    let watching = Arc::new(AtomicBool::new(true));
    let screen = {
        let (db, watching) = (db.clone(), watching.clone());
        std::thread::spawn(move || {
            let mut shown: Vec<(Instant, u64)> = Vec::new();
            let Ok(watch) = asof::store::Watch::open(&db) else {
                return shown;
            };
            let mut seen = watch.version().ok();
            // As the TUI's watch thread reads it: what changed since the last
            // read, the memory freed kept for the next.
            let _kept = asof::store::freed_memory_kept();
            let mut last = None;
            while watching.load(Ordering::Relaxed) {
                std::thread::sleep(asof::tui::live::POLL);
                let now = watch.version().ok();
                if now != seen {
                    seen = now;
                    let lines = common::serve::applied_lines(&db).unwrap_or(0);
                    last = asof::tui::live::read_again(&db, last.take()).ok();
                    if last.is_some() {
                        shown.push((Instant::now(), lines));
                    }
                }
            }
            shown
        })
    };
    // Measured.
    let serve_pid = child.id().to_string();
    let cpu_before = (
        common::cpu::seconds(&serve_pid),
        common::cpu::seconds("self"),
    );
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let mut sending = Some({
        let (all, addr) = (all.clone(), addr.clone());
        let pace = (rate > 0).then(|| (Instant::now(), rate));
        std::thread::spawn(move || {
            send_all(&all, prefill_requests..all.len(), &addr, Some(until), pace)
        })
    });
    let mut applied: Vec<(Instant, u64)> = Vec::new();
    let mut sent = None;
    loop {
        applied.push((Instant::now(), applied_lines()));
        if let Some(senders) = sending.take_if(|s| s.is_finished()) {
            sent = Some(senders.join().expect("senders"));
        }
        // Every acknowledged line applied, or given up on.
        if let Some((acked, _, _)) = &sent
            && (applied[applied.len() - 1].1 >= (prefilled.len() + acked.len()) as u64
                || Instant::now() > until + Duration::from_secs(30))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (acked, refused, spans) = sent.expect("the loop ends once the senders are joined");
    // Until the last acknowledgement: the senders may run out of requests.
    let elapsed = acked.iter().max().map_or(Duration::ZERO, |last| {
        last.saturating_duration_since(started)
    });
    // Cores used while measured: serve's, and this process's (the four
    // exporters and the screen's watcher), on the same machine.
    let measured = started.elapsed().as_secs_f64();
    let cores =
        |before: Option<f64>, pid: &str| Some((common::cpu::seconds(pid)? - before?) / measured);
    let cpu = json!({
        "serve_cores": cores(cpu_before.0, &serve_pid),
        "exporters_and_watcher_cores": cores(cpu_before.1, "self"),
        "machine_cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
    });
    watching.store(false, Ordering::Relaxed);
    let shown = screen.join().expect("the screen watcher");
    let restarted = match restart {
        true => Some(restart_serve(&mut child, &db, &all)),
        false => None,
    };
    let _ = child.kill();
    let _ = child.wait();
    let peak_kb = memory.join().unwrap_or(0);
    // Archive lines are written in acknowledgement order per batch; the k-th
    // acknowledged request is at most line k (one line a request).
    let mut acked = acked;
    acked.sort();
    let to_store = lags(&acked, prefilled.len(), &applied);
    let to_screen = lags(&acked, prefilled.len(), &shown);
    let windows = |lags: &[(Instant, f64)]| -> Vec<serde_json::Value> {
        let mut by: Vec<Vec<f64>> = Vec::new();
        for (at, lag) in lags {
            let w = (at.saturating_duration_since(started).as_secs() / 10) as usize;
            by.resize_with(by.len().max(w + 1), Vec::new);
            by[w].push(*lag);
        }
        (by.iter_mut().enumerate())
            .map(|(w, lags)| {
                lags.sort_by(|a, b| a.total_cmp(b));
                json!({"from_s": w * 10, "lags": summary(lags, lags.len())})
            })
            .collect()
    };
    let sorted = |lags: &[(Instant, f64)]| {
        let mut lags: Vec<f64> = lags.iter().map(|l| l.1).collect();
        lags.sort_by(|a, b| a.total_cmp(b));
        lags
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "prefill_spans": prefill,
            "rate_spans_per_s": if rate > 0 { json!(rate) } else { json!("as fast as taken") },
            "span_time_spans_per_s": span_rate,
            "prefill_caught_up_s": catch_up.as_secs_f64(),
            "seconds": elapsed.as_secs_f64(),
            "spans_per_request": per,
            "run_spans": if run_spans > 0 { json!(run_spans) } else { json!("one run per agent") },
            "requests_acknowledged": acked.len(),
            "requests_refused": refused,
            "spans_per_s": (spans as f64 / elapsed.as_secs_f64()).round(),
            "received_to_store_ms": summary(&sorted(&to_store), acked.len()),
            "received_to_screen_ms": summary(&sorted(&to_screen), acked.len()),
            "received_to_store_by_10_s": windows(&to_store),
            "received_to_screen_by_10_s": windows(&to_screen),
            "peak_rss_mb": peak_kb / 1024,
            "cpu_while_measured": cpu,
            "restart": restarted,
            "targets": {"spans_per_s": ">= 20000", "received_to_screen_p99_ms": "<= 1000", "restart_s": "<= 10 (1,000,000 spans archived)"},
        }))
        .expect("json")
    );
}

/// Starts `asof serve` on `db` at a free port; the process and its address.
/// `SERVE_LOG=FILE` keeps its status lines (what it says on stderr).
fn start_serve(db: &std::path::Path) -> (std::process::Child, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_asof"))
        .arg("serve")
        .arg("--db")
        .arg(db)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(match std::env::var_os("SERVE_LOG") {
            Some(path) => std::fs::File::create(path).map_or_else(|_| Stdio::null(), Stdio::from),
            None => Stdio::null(),
        })
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
    (child, addr)
}

/// Stops `child` cleanly, starts serve again on `db` and sends it the last
/// request of `all`: the seconds until that request is in the store, and
/// the restarted process's peak memory. `child` becomes the new process.
fn restart_serve(
    child: &mut std::process::Child,
    db: &std::path::Path,
    all: &[(Vec<u8>, usize)],
) -> serde_json::Value {
    let stop = Instant::now();
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    let stopped = stop.elapsed();
    let before = common::serve::applied_lines(db).unwrap_or(0);
    let started = Instant::now();
    let (next, addr) = start_serve(db);
    *child = next;
    let pid = child.id();
    let mut stream =
        std::io::BufReader::new(TcpStream::connect(&addr).expect("connect after the restart"));
    let answer = all
        .last()
        .and_then(|(body, _)| send(&mut stream, &addr, body));
    let mut peak_kb = 0u64;
    while common::serve::applied_lines(db).unwrap_or(0) <= before
        && started.elapsed() < Duration::from_secs(600)
    {
        peak_kb = peak_kb.max(common::memory::peak_kb(pid).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(20));
    }
    json!({
        "stop_s": stopped.as_secs_f64(),
        "restart_s": started.elapsed().as_secs_f64(),
        "answered": answer,
        "lines_archived": before,
        "peak_rss_mb": peak_kb / 1024,
    })
}

/// For each acknowledged request (the k-th is at most archive line
/// `prefilled + k + 1`), the milliseconds until the first of `seen` (instants
/// and lines applied by then, in time order) that holds its line, with when
/// it was acknowledged.
fn lags(acked: &[Instant], prefilled: usize, seen: &[(Instant, u64)]) -> Vec<(Instant, f64)> {
    let mut lags: Vec<(Instant, f64)> = Vec::new();
    let mut j = 0;
    for (k, at) in acked.iter().enumerate() {
        while j < seen.len() && seen[j].1 < (prefilled + k) as u64 + 1 {
            j += 1;
        }
        if let Some((when, _)) = seen.get(j) {
            lags.push((
                *at,
                when.saturating_duration_since(*at).as_secs_f64() * 1000.0,
            ));
        }
    }
    lags
}

/// p50, p99 and max of sorted `lags`, and how many of `of` requests they cover.
fn summary(lags: &[f64], of: usize) -> serde_json::Value {
    let pct = |p: f64| {
        lags.get(((lags.len() as f64 - 1.0) * p).round() as usize)
            .copied()
    };
    json!({"p50": pct(0.5), "p99": pct(0.99), "max": lags.last(), "n": lags.len(), "of": of})
}
