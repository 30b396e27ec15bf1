//! The live-review benchmark for a trace (design.md §7, "What a batch
//! costs"): a generated agent run (four agents, one trace each, their spans
//! interleaved) is appended to an OTLP/JSON Lines file, one request of
//! `--spans-per-request` spans a line, at `--rate` spans/s until the file
//! holds `--mib` MiB, while the release binary follows it into a store as a
//! reviewer would (`asof load TRACE --db STORE --follow`). By default the
//! trace grows to 1,000 MiB — a trace of 1 GiB, just under what a trace's
//! follow reads — at 20,000 spans/s. Reports, for every line, written → in
//! the store (p50, p99, max), the follow's peak memory (VmHWM, polled every
//! 20 ms) and CPU, and `asof check` of the store at the end.
//!
//!     cargo bench --bench follow_trace
//!     cargo bench --bench follow_trace -- --mib 100 --rate 5000
//!
//! Prints one JSON object; nothing is asserted.

mod common;

use common::arg;
use serde_json::json;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let mib = arg("--mib", 1000);
    let rate = arg("--rate", 20_000).max(1);
    let per = arg("--spans-per-request", 200).max(1) as usize;
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("run.otlp.jsonl");
    let db = dir.path().join("run.db");

    // The run's requests, enough of them for `mib` MiB (about 860 bytes a
    // span in this generator: a few more generated than written).
    let bytes = mib << 20;
    let config = asof::synth::GenConfig {
        events: bytes / 800,
        topics: 50,
        agents: 4,
        seed: 3,
    };
    let mut lines: Vec<(String, usize)> = Vec::new();
    let mut total = 0u64;
    for line in asof::synth::otlp_requests(config, per) {
        total += line.len() as u64 + 1;
        if total > bytes {
            break;
        }
        let spans = line.matches("\"spanId\"").count();
        lines.push((line, spans));
    }
    let mut file = std::fs::File::create(&trace).expect("create the trace");
    // The first line, so the follow has a trace to start on.
    writeln!(file, "{}", lines[0].0).expect("write");

    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_asof"))
        .arg("load")
        .arg(&trace)
        .arg("--db")
        .arg(&db)
        .arg("--follow")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start asof load --follow");
    let pid = child.id();
    let memory = common::memory::watch_peak(pid);
    let applied = || common::serve::applied_lines(&db).unwrap_or(0);
    let waited = Instant::now();
    while applied() < 1 && waited.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }

    // The store's progress, polled while the writer writes.
    let writing = Arc::new(AtomicBool::new(true));
    let progress = {
        let (db, writing) = (db.clone(), writing.clone());
        std::thread::spawn(move || {
            let mut seen: Vec<(Instant, u64)> = Vec::new();
            let mut last_change = Instant::now();
            loop {
                let now = common::serve::applied_lines(&db).unwrap_or(0);
                if seen.last().is_none_or(|l| l.1 != now) {
                    seen.push((Instant::now(), now));
                    last_change = Instant::now();
                }
                // Once written, until the store stops moving for 30 s.
                if !writing.load(Ordering::Relaxed)
                    && last_change.elapsed() > Duration::from_secs(30)
                {
                    return seen;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };

    // The writer: line i once its spans are due at `rate`.
    let cpu_before = cpu_ticks(pid);
    let started = Instant::now();
    let mut written = vec![started];
    let mut spans = lines[0].1 as u64;
    for (line, n) in &lines[1..] {
        let due = started + Duration::from_secs_f64(spans as f64 / rate as f64);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        writeln!(file, "{line}").expect("write");
        written.push(Instant::now());
        spans += *n as u64;
    }
    let writing_s = started.elapsed().as_secs_f64();
    writing.store(false, Ordering::Relaxed);
    let seen = progress.join().expect("the progress thread");
    let followed_s = seen.last().map_or(0.0, |l| {
        l.0.saturating_duration_since(started).as_secs_f64()
    });
    let cpu = cpu_ticks(pid).saturating_sub(cpu_before) as f64 / 100.0;
    let _ = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
    let _ = child.wait();
    let peak_kb = memory.join().unwrap_or(0);
    let check = asof::store::Store::open(&db)
        .and_then(|s| s.check())
        .map(|r| match r.differences.first() {
            None => format!("ok: {} versions", r.versions),
            Some(d) => format!("{} differences: {d}", r.differences.len()),
        })
        .unwrap_or_else(|e| e.to_string());

    // Line k (1-based) is in the store at the first poll that counts k lines.
    let mut lags: Vec<f64> = Vec::new();
    let mut j = 0;
    for (k, at) in written.iter().enumerate().skip(1) {
        while j < seen.len() && seen[j].1 < k as u64 + 1 {
            j += 1;
        }
        if let Some((when, _)) = seen.get(j) {
            lags.push(when.saturating_duration_since(*at).as_secs_f64() * 1000.0);
        }
    }
    lags.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        lags.get(((lags.len() as f64 - 1.0) * p).round() as usize)
            .copied()
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "trace_mib": total.min(bytes) as f64 / f64::from(1 << 20),
            "lines": lines.len(),
            "spans": spans,
            "rate_spans_per_s": rate,
            "writing_s": writing_s,
            "followed_s": followed_s,
            "written_to_store_ms": {"p50": pct(0.5), "p99": pct(0.99), "max": lags.last(), "n": lags.len(), "of": lines.len() - 1},
            "follow_cpu_s": cpu,
            "peak_rss_mb": peak_kb / 1024,
            "check": check,
        }))
        .expect("json")
    );
}

/// The user and system CPU time of process `pid` so far, in clock ticks
/// (1/100 s on Linux); 0 once it is gone.
fn cpu_ticks(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // The fields after the command name, which is in parentheses.
            let rest = stat.rsplit_once(')')?.1;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let utime: u64 = fields.get(11)?.parse().ok()?;
            let stime: u64 = fields.get(12)?.parse().ok()?;
            Some(utime + stime)
        })
        .unwrap_or(0)
}
