//! The live-review benchmark (design.md §6): a generated incident is appended to a
//! JSON Lines file at `--rate` events/s for `--seconds` seconds while
//! `store::follow` follows it into a store (as `asof load --follow` does) and a
//! watcher redraws a TUI on it (as `asof tui --follow STORE` does: the
//! store's data_version polled, the timeline read again, refreshed, drawn
//! into a TestBackend). For every line: written → committed in the store, and
//! written → first frame that counts it. With `--preload N` the file holds
//! its first N events before the follow starts (a long agent run taken up
//! live), so the cost of a batch on a big store shows.
//!
//!     cargo bench --bench follow                          # 1,000 events/s for 60 s
//!     cargo bench --bench follow -- --rate 200 --seconds 10
//!     cargo bench --bench follow -- --preload 1000000 --seconds 30
//!
//! Prints one JSON object; nothing is asserted.

use asof::synth::{GenConfig, Pace, generate_with};
use asof::tui::app::App;
use asof::tui::live::{Live, POLL, watch};
mod common;

use common::arg;
use serde_json::json;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// p50, p99 and max, in ms, of line latencies: for each line, the first
/// moment in `seen` (instant, events counted) that counts it, minus when it
/// was written.
fn latencies(written: &[Instant], seen: &[(Instant, usize)]) -> serde_json::Value {
    let mut lags = Vec::with_capacity(written.len());
    let mut j = 0;
    for (i, at) in written.iter().enumerate() {
        while j < seen.len() && seen[j].1 < i + 1 {
            j += 1;
        }
        match seen.get(j) {
            Some((when, _)) => lags.push(when.saturating_duration_since(*at)),
            None => break,
        }
    }
    let missing = written.len() - lags.len();
    lags.sort();
    let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
    let p = |q: f64| ms(lags[((lags.len() as f64 - 1.0) * q).round() as usize]);
    if lags.is_empty() {
        return json!({"lines": 0, "never_seen": missing});
    }
    json!({
        "lines": lags.len(),
        "never_seen": missing,
        "p50_ms": p(0.5),
        "p99_ms": p(0.99),
        "max_ms": ms(lags[lags.len() - 1]),
        "target_p99_ms": 1000,
    })
}

fn main() {
    asof::runtime::init();
    let rate = arg("--rate", 1000).max(1);
    let seconds = arg("--seconds", 60).max(1);
    // At least a first event, so the follow and the watcher start.
    let preload = arg("--preload", 1).max(1);
    let events = preload + rate * seconds;
    let dir = tempfile::tempdir().expect("temporary directory");
    let jsonl = dir.path().join("live.jsonl");
    let db = dir.path().join("live.db");

    let config = GenConfig {
        events,
        topics: 100,
        agents: 4,
        seed: 7,
    };
    let mut bytes = Vec::new();
    generate_with(config, Some(Pace::at_rate(rate as u32)), &mut bytes).expect("generate");
    let mut lines = bytes.split_inclusive(|&b| b == b'\n');
    let header = lines.next().expect("a header line");
    let mut file = std::fs::File::create(&jsonl).expect("create the file");
    file.write_all(header).expect("write");
    for _ in 0..preload {
        file.write_all(lines.next().expect("an event"))
            .expect("write");
    }
    let lines: Vec<&[u8]> = lines.collect();

    let stop = Arc::new(AtomicBool::new(false));
    let committed = Arc::new(Mutex::new(Vec::<(Instant, usize)>::new()));
    let follower = {
        let (jsonl, db, stop, committed) =
            (jsonl.clone(), db.clone(), stop.clone(), committed.clone());
        std::thread::spawn(move || {
            asof::store::follow::follow(&jsonl, &db, true, POLL, |batch| {
                if let Ok(mut c) = committed.lock() {
                    c.push((Instant::now(), batch.total));
                }
                !stop.load(Ordering::Relaxed)
            })
        })
    };
    let started = Instant::now();
    while committed.lock().map_or(true, |c| c.is_empty()) {
        assert!(
            started.elapsed() < Duration::from_secs(60 + preload / 10_000),
            "the follow never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }

    // The screen: what `asof tui --follow STORE` runs.
    let store = asof::store::Store::open(&db).expect("open the store");
    let (timeline, kept) = asof::query::timeline::Timeline::load_live(store).expect("timeline");
    let seed = Some((timeline.clone(), kept));
    let mut app = App::new(
        timeline,
        asof::tui::theme::Theme { color: false },
        (120, 40),
    );
    app.go_live();
    let (send, news) = std::sync::mpsc::channel();
    watch(db.clone(), stop.clone(), seed, move |item| {
        send.send(item).is_ok()
    });
    let screen = std::thread::spawn(move || {
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).expect("backend");
        let mut drawn = Vec::new();
        let mut refreshes = Vec::new();
        for item in news {
            if let Live::Stopped(why) = &item {
                eprintln!("the watcher stopped: {why}");
            }
            let begun = Instant::now();
            let live = matches!(item, Live::Refreshed(_));
            app.live_news(item);
            terminal
                .draw(|f| asof::tui::ui::render(&app, f))
                .expect("draw");
            if live {
                refreshes.push(begun.elapsed());
                drawn.push((Instant::now(), app.event_position.1));
            }
        }
        (drawn, refreshes)
    });

    // The writer: line i at started + i/rate, as a running agent would.
    let mut written = Vec::with_capacity(lines.len());
    let started = Instant::now();
    for (i, line) in lines.iter().enumerate() {
        let due = started + Duration::from_micros((i as u64 + 1) * 1_000_000 / rate);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        file.write_all(line).expect("write");
        written.push(Instant::now());
    }
    let writing = started.elapsed();
    // Let the last lines arrive, then stop both threads.
    let total = lines.len() + preload as usize;
    let waited = Instant::now();
    while committed
        .lock()
        .map_or(true, |c| c.last().is_none_or(|l| l.1 < total))
        && waited.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(1));
    stop.store(true, Ordering::Relaxed);
    let followed = follower.join().expect("the follow thread");
    let (drawn, refreshes) = screen.join().expect("the screen thread");
    let committed = committed.lock().expect("lock").clone();
    // Line i (0-based, after the preloaded events) is event preload + i + 1.
    let shift = |seen: &[(Instant, usize)]| -> Vec<(Instant, usize)> {
        seen.iter()
            .map(|&(t, n)| (t, n.saturating_sub(preload as usize)))
            .collect()
    };
    let mut refresh_ms: Vec<f64> = refreshes.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    refresh_ms.sort_by(f64::total_cmp);
    let check = asof::store::Store::open(&db)
        .and_then(|s| s.check())
        .map(|r| {
            if r.differences.is_empty() {
                format!("ok: {} versions", r.versions)
            } else {
                format!("{} differences: {}", r.differences.len(), r.differences[0])
            }
        })
        .unwrap_or_else(|e| e.to_string());
    let report = json!({
        "rate_events_per_s": rate,
        "seconds": seconds,
        "preloaded_events": preload,
        "lines_written": lines.len(),
        "writing_s": writing.as_secs_f64(),
        "follow_result": format!("{followed:?}"),
        "batches": committed.len(),
        "in_the_store": latencies(&written, &shift(&committed)),
        "on_screen": latencies(&written, &shift(&drawn)),
        "screen_refreshes": refresh_ms.len(),
        "refresh_and_draw_ms_p50": refresh_ms.get(refresh_ms.len() / 2),
        "refresh_and_draw_ms_max": refresh_ms.last(),
        "check": check,
    });
    println!("{}", serde_json::to_string_pretty(&report).expect("json"));
}
