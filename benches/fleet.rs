//! The fleet benchmark (docs/fleet.md): `asof gen --incidents` writes a fleet
//! of stores, the release binary exports them as Parquet (fresh, then again
//! with nothing changed), and DuckDB answers every question of docs/fleet/
//! over the export, each timed alone.
//!
//!     cargo bench --bench fleet                          # 1,000 incidents of ~10,000 events
//!     cargo bench --bench fleet -- --incidents 100 --events 2000
//!
//! The stores are kept under target/fleet-bench/ and made again only when
//! their number or size changes. DuckDB runs from target/otel-venv (which
//! `.ci/run` installs); without it the questions are left out. Prints one
//! JSON object; nothing is asserted.

mod common;

use common::arg;
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn run(cmd: &mut Command) -> f64 {
    let started = Instant::now();
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    started.elapsed().as_secs_f64()
}

fn main() {
    let incidents = arg("--incidents", 1000);
    let events = arg("--events", 10_000);
    let asof = env!("CARGO_BIN_EXE_asof");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target/fleet-bench");
    let stores = dir.join(format!("stores-{incidents}x{events}"));
    let made = std::fs::read_dir(&stores).map_or(0, |d| d.count() as u64);
    let gen_s = (made != incidents).then(|| {
        let _ = std::fs::remove_dir_all(&stores);
        run(Command::new(asof)
            .args([
                "gen",
                "--incidents",
                &incidents.to_string(),
                "--events",
                &events.to_string(),
                "--out",
            ])
            .arg(&stores))
    });
    let mut list: Vec<_> = std::fs::read_dir(&stores)
        .expect("the stores")
        .map(|e| e.expect("an entry").path())
        .collect();
    list.sort();
    let bytes: u64 = list
        .iter()
        .map(|p| p.metadata().map_or(0, |m| m.len()))
        .sum();
    let out = dir.join("export");
    let _ = std::fs::remove_dir_all(&out);
    let export = |out: &Path| {
        run(Command::new(asof)
            .arg("export")
            .args(&list)
            .args(["--format", "parquet", "--out"])
            .arg(out))
    };
    let export_s = export(&out);
    let again_s = export(&out);
    let parquet_bytes: u64 = walk(&out);

    let python = root.join("target/otel-venv/bin/python");
    let questions = Command::new(&python)
        .arg(root.join("tests/fleet/run_questions.py"))
        .arg(&out)
        .arg(root.join("docs/fleet"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
        .map(|answers| {
            answers
                .as_object()
                .map(|all| {
                    all.iter()
                        .map(|(name, a)| (name.clone(), json!({"seconds": a["seconds"], "rows": a["rows"].as_array().map_or(0, Vec::len)})))
                        .collect::<serde_json::Map<_, _>>()
                })
                .unwrap_or_default()
        });
    let report = json!({
        "incidents": incidents,
        "events_per_incident": events,
        "stores_mb": bytes / 1_000_000,
        "gen_s": gen_s,
        "export_s": export_s,
        "export_unchanged_s": again_s,
        "parquet_mb": parquet_bytes / 1_000_000,
        "questions": questions,
    });
    println!("{}", serde_json::to_string_pretty(&report).expect("JSON"));
}

/// The bytes of every file under `dir`.
fn walk(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.flatten()
            .map(|e| match e.path().is_dir() {
                true => walk(&e.path()),
                false => e.metadata().map_or(0, |m| m.len()),
            })
            .sum()
    })
}
