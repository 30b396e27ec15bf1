//! `asof load --follow` (design.md §6) against fresh loads: while a writer appends
//! to a JSON Lines file (lines out of recorded order, lines split across
//! writes), the store equals, table by table and row by row, a fresh load of
//! the file's complete lines; a killed follow keeps what it committed and
//! goes on where it stopped; a truncated, replaced or invalid file stops it.

use crate::common;

use asof::dataset::{Format, read_str};
use asof::query::timeline::{Kept, Timeline};
use asof::store::follow::{Converted, Grown, Growth, Stop, Suffix, follow_whole};
use asof::store::{Contents, Store};
use common::{asof, generated};
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Every table's rows, sorted, but the meta rows that name the file or the
/// follow position (a fresh load has its own).
fn tables(db: &Path) -> BTreeMap<String, Vec<String>> {
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open store");
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let mut out = BTreeMap::new();
    for name in names {
        // What a follow's batches changed, for its readers: a load has none.
        if name == "batches" {
            continue;
        }
        // A fresh load names its own file and time, and follows nothing.
        let filter = if name == "meta" {
            " WHERE key NOT IN ('source', 'loaded_at', 'follow_offset', 'follow_lines', 'follow_sha256')"
        } else {
            ""
        };
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM {name}{filter}"))
            .unwrap();
        let n = stmt.column_count();
        let mut rows: Vec<String> = stmt
            .query_map([], |r| {
                let cells: Vec<String> = (0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                    .collect();
                Ok(cells.join("|"))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        rows.sort();
        out.insert(name, rows);
    }
    out
}

/// The follow position a store records: bytes and lines applied.
fn position(db: &Path) -> Option<(u64, usize)> {
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
    let get = |key: &str| -> Option<String> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .ok()
    };
    Some((
        get("follow_offset")?.parse().ok()?,
        get("follow_lines")?.parse().ok()?,
    ))
}

/// Waits until the store has applied the first `bytes` bytes of its file.
fn wait_for(db: &Path, bytes: u64, follower: &mut Child) {
    let start = Instant::now();
    loop {
        if position(db).is_some_and(|(b, _)| b == bytes) {
            return;
        }
        if let Ok(Some(status)) = follower.try_wait() {
            let mut err = String::new();
            if let Some(e) = follower.stderr.as_mut() {
                std::io::Read::read_to_string(e, &mut err).ok();
            }
            panic!("the follow ended ({status}) before byte {bytes}: {err}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the store did not reach byte {bytes} (at {:?})",
            position(db)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A fresh load of the complete lines of `text`, compared with `db`.
fn assert_equals_fresh_load(db: &Path, text: &[u8], dir: &Path, n: usize) {
    let end = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let prefix = dir.join(format!("prefix-{n}.jsonl"));
    std::fs::write(&prefix, &text[..end]).unwrap();
    let fresh = dir.join(format!("fresh-{n}.db"));
    asof()
        .arg("load")
        .arg(&prefix)
        .arg("--db")
        .arg(&fresh)
        .assert()
        .success();
    let (ours, theirs) = (tables(db), tables(&fresh));
    for (name, rows) in &theirs {
        assert!(
            ours.get(name) == Some(rows),
            "table {name} differs from a fresh load of {end} bytes (moment {n}): {} rows against {}",
            ours.get(name).map_or(0, Vec::len),
            rows.len()
        );
    }
    assert_eq!(ours.len(), theirs.len(), "the same tables");
    asof().arg("check").arg(db).assert().success();
}

fn follower(file: &Path, db: &Path) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("asof"))
        .args(["load"])
        .arg(file)
        .arg("--db")
        .arg(db)
        .arg("--follow")
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start asof load --follow")
}

/// A generated log (header first) with some assertions held back a few lines,
/// so they arrive recorded before events already applied, and evidence
/// recorded before lines already applied. Only assertions no retraction
/// names move (a retraction before its assertion is not yet valid).
fn with_late_lines(text: &str, every: usize) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let named: Vec<String> = lines
        .iter()
        .filter(|l| l.starts_with(r#"{"retract""#))
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            Some(v["retract"]["assertion"].as_str()?.to_owned())
        })
        .collect();
    let mut i = 1;
    while i + 5 < lines.len() {
        if i.is_multiple_of(every) && lines[i].starts_with(r#"{"believe""#) {
            let v: serde_json::Value = serde_json::from_str(&lines[i]).unwrap();
            let id = v["believe"]["id"].as_str().unwrap_or_default();
            if !named.iter().any(|n| n == id) {
                let late = lines.remove(i);
                lines.insert(i + 4, late);
            }
        }
        i += 1;
    }
    // Evidence recorded before events already applied: a copy of an earlier
    // item under a new id, every `2 * every` lines (evidence is not replayed,
    // so its mark goes in among the earlier ones).
    let mut i = 60;
    while i < lines.len() {
        let earlier = lines[..i - 30]
            .iter()
            .rposition(|l| l.starts_with(r#"{"evidence""#));
        if let Some(j) = earlier {
            let mut v: serde_json::Value = serde_json::from_str(&lines[j]).unwrap();
            let id = format!(
                "late-{}-{i}",
                v["evidence"]["id"].as_str().unwrap_or_default()
            );
            v["evidence"]["id"] = serde_json::Value::String(id);
            lines.insert(i, v.to_string());
        }
        i += 2 * every;
    }
    lines
}

#[test]
fn while_a_writer_appends_the_store_is_a_fresh_load_of_the_lines_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.jsonl");
    let db = dir.path().join("live.db");
    let lines = with_late_lines(&generated(1500, 12, 3, 7), 37);
    let all: Vec<u8> = lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    // The header and the first 200 events before the follow starts.
    let start: usize = lines[..201].iter().map(|l| l.len() + 1).sum();
    std::fs::write(&file, &all[..start]).unwrap();
    let mut child = follower(&file, &db);
    wait_for(&db, start as u64, &mut child);
    assert_equals_fresh_load(&db, &all[..start], dir.path(), 0);

    // Chunks of varied sizes, cut anywhere (mid-line too), some compared at once.
    let mut written = start;
    let mut out = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    let mut step = 0usize;
    while written < all.len() {
        step += 1;
        let size = [1, 700, 13, 4096, 90, 20_000, 333][step % 7];
        let end = (written + size).min(all.len());
        out.write_all(&all[written..end]).unwrap();
        out.flush().unwrap();
        written = end;
        if step.is_multiple_of(3) || written == all.len() {
            let complete = all[..written]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            wait_for(&db, complete as u64, &mut child);
            assert_equals_fresh_load(&db, &all[..written], dir.path(), step);
        }
    }
    child.kill().ok();
    child.wait().ok();
    assert_equals_fresh_load(&db, &all, dir.path(), usize::MAX);
}

#[test]
fn a_killed_follow_keeps_its_batches_and_a_new_one_goes_on_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.jsonl");
    let db = dir.path().join("live.db");
    let all = generated(4000, 20, 4, 11).into_bytes();
    let cut = |n: usize| {
        all.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(n)
            .map_or(all.len(), |(i, _)| i + 1)
    };
    std::fs::write(&file, &all[..cut(100)]).unwrap();
    let mut child = follower(&file, &db);
    wait_for(&db, cut(100) as u64, &mut child);
    // Append fast, then kill without warning while batches are being applied.
    let mut out = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    let mut written = cut(100);
    for n in (200..=4000).step_by(100) {
        let end = cut(n);
        out.write_all(&all[written..end]).unwrap();
        out.flush().unwrap();
        written = end;
        std::thread::sleep(Duration::from_millis(7));
        if n == 2500 {
            child.kill().expect("SIGKILL the follow");
            child.wait().unwrap();
        }
    }
    // What it committed: a fresh load of the lines it says it applied.
    let (bytes, _) = position(&db).expect("the store records its position");
    assert!(bytes >= cut(100) as u64 && bytes <= written as u64);
    assert_equals_fresh_load(&db, &all[..bytes as usize], dir.path(), 1);
    // Started again, it reads on from there, and ends as a fresh load of the whole.
    let mut child = follower(&file, &db);
    wait_for(&db, all.len() as u64, &mut child);
    child.kill().ok();
    child.wait().ok();
    assert_equals_fresh_load(&db, &all, dir.path(), 2);
}

/// Runs `load --follow` on `first`, then does `change` to the file; the follow
/// must stop with exit 1 and a message containing `says`, keeping its store.
fn stops(first: &str, change: impl FnOnce(&Path), says: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.jsonl");
    let db = dir.path().join("live.db");
    std::fs::write(&file, first).unwrap();
    let mut child = follower(&file, &db);
    wait_for(&db, first.len() as u64, &mut child);
    let before = tables(&db);
    change(&file);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the follow did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "exit 1; stderr: {err}");
    assert!(err.contains(says), "stderr says `{says}`: {err}");
    assert!(
        err.trim_end().ends_with("events applied before it"),
        "it says the follow stopped and what the store keeps: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(tables(&db), before, "what was applied stays");
    asof().arg("check").arg(&db).assert().success();
}

#[test]
fn a_truncated_file_stops_the_follow_and_keeps_the_store() {
    let text = generated(300, 5, 2, 3);
    stops(
        &text,
        |f| {
            let len = std::fs::metadata(f).unwrap().len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(f)
                .unwrap()
                .set_len(len / 2)
                .unwrap();
        },
        "was truncated",
    );
}

#[test]
fn a_replaced_file_stops_the_follow() {
    let text = generated(300, 5, 2, 3);
    let again = text.clone();
    stops(
        &text,
        move |f| {
            let other = f.with_extension("new");
            std::fs::write(&other, again + &generated(10, 5, 2, 4)).unwrap();
            std::fs::rename(&other, f).unwrap();
        },
        "was replaced",
    );
}

#[test]
fn an_invalid_line_stops_the_follow_with_its_line() {
    let text = generated(300, 5, 2, 3);
    let lines = text.lines().count();
    stops(
        &text,
        |f| {
            let mut out = std::fs::OpenOptions::new().append(true).open(f).unwrap();
            writeln!(
                out,
                r#"{{"believe":{{"id":"late","agent":"nobody","topic":"t0","claim":"x","valid_from":"2026-01-01","recorded_at":"2027-01-01"}}}}"#
            )
            .unwrap();
        },
        &format!(
            "live.jsonl:{}: event late: agent `nobody` is not declared",
            lines + 1
        ),
    );
}

/// A store a follow of `text` wrote (stopped once it applied all of it), in
/// a new directory with the file followed.
fn a_followed_store(text: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.jsonl");
    let db = dir.path().join("live.db");
    std::fs::write(&file, text).unwrap();
    let mut child = follower(&file, &db);
    wait_for(&db, text.len() as u64, &mut child);
    child.kill().ok();
    child.wait().ok();
    (dir, file, db)
}

/// `asof load FILE --db DB --follow`, to its end (a refusal).
fn follow_again(file: &Path, db: &Path) -> assert_cmd::assert::Assert {
    asof()
        .arg("load")
        .arg(file)
        .arg("--db")
        .arg(db)
        .arg("--follow")
        .timeout(Duration::from_secs(30))
        .assert()
}

#[test]
fn a_store_cannot_follow_another_file() {
    let (dir, _, db) = a_followed_store(&generated(200, 5, 2, 3));
    let other: PathBuf = dir.path().join("other.jsonl");
    std::fs::write(&other, generated(200, 5, 2, 9)).unwrap();
    follow_again(&other, &db)
        .code(2)
        .stderr(predicates::str::contains("is not the file"));
}

/// A follow taken up again on a file shorter than what its store applied
/// says it was truncated or is another file (the store knows no more than
/// the applied bytes' hash), and keeps the store.
#[test]
fn a_follow_taken_up_on_a_truncated_file_says_so() {
    let text = generated(200, 5, 2, 3);
    let (_dir, file, db) = a_followed_store(&text);
    let before = tables(&db);
    let half = text.len() as u64 / 2;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(half)
        .unwrap();
    follow_again(&file, &db)
        .code(2)
        .stderr(predicates::str::contains(format!(
            "was truncated to {half} bytes after {} were applied, or is not the file",
            text.len()
        )));
    assert_eq!(tables(&db), before, "the store is kept");
}

// ---- OTLP traces: every batch imports the complete lines so far again ----

/// `asof load live.jsonl --db live.db --follow ARGS`, run in `dir` (names as
/// a user types them, so the import summary names the file the same way).
fn trace_follower(dir: &Path, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("asof"))
        .current_dir(dir)
        .args(["load", "live.jsonl", "--db", "live.db", "--follow"])
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start asof load --follow")
}

/// `db` against `asof import otlp ARGS` of the complete lines of `text`,
/// table by table and row by row (the import summary included).
fn assert_equals_import(db: &Path, text: &[u8], args: &[&str], n: usize) {
    let end = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("live.jsonl"), &text[..end]).unwrap();
    asof()
        .current_dir(dir.path())
        .args(["import", "otlp", "live.jsonl", "--db", "fresh.db"])
        .args(args)
        .assert()
        .success();
    let (ours, theirs) = (tables(db), tables(&dir.path().join("fresh.db")));
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "the same tables"
    );
    for (name, rows) in &theirs {
        assert!(
            ours.get(name) == Some(rows),
            "table {name} differs from an import of {end} bytes (moment {n}):\n{:?}\nagainst\n{rows:?}",
            ours.get(name)
        );
    }
    asof().arg("check").arg(db).assert().success();
}

/// An empty `live.jsonl` in `dir`, as an agent's exporter leaves it, a
/// follow of it started, and the file opened to append to.
fn following_empty(dir: &Path) -> (Child, std::fs::File) {
    let file = dir.join("live.jsonl");
    std::fs::write(&file, b"").unwrap();
    let child = trace_follower(dir, &[]);
    let out = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    (child, out)
}

/// Kills a follow and returns what it printed.
fn stop_and_read(mut child: Child) -> String {
    child.kill().ok();
    let output = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn sre_trace() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sre-agent.otlp.jsonl"))
        .unwrap()
}

#[test]
fn while_an_agent_exports_a_trace_the_store_is_an_import_of_the_lines_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let all = sre_trace();
    let ends: Vec<usize> = all
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    assert!(ends.len() >= 3, "the trace has several export batches");
    // The follow starts on an empty file, as an agent's exporter leaves it.
    let (mut child, mut out) = following_empty(dir.path());
    let mut written = 0;
    for (n, &end) in ends.iter().enumerate() {
        // Half a line first: nothing changes until the line is complete.
        let half = written + (end - written) / 2;
        out.write_all(&all[written..half]).unwrap();
        out.flush().unwrap();
        std::thread::sleep(Duration::from_millis(400));
        if n > 0 {
            assert_eq!(position(&db).map(|p| p.0), Some(written as u64));
            assert_equals_import(&db, &all[..written], &[], n * 2);
        } else {
            assert!(!db.exists(), "no store before the first complete line");
        }
        out.write_all(&all[half..end]).unwrap();
        out.flush().unwrap();
        written = end;
        wait_for(&db, end as u64, &mut child);
        assert_equals_import(&db, &all[..end], &[], n * 2 + 1);
    }
    let said = stop_and_read(child);
    assert!(
        said.starts_with("waiting for the first complete line of live.jsonl"),
        "{said}"
    );
    assert!(
        said.contains("following live.jsonl into live.db: "),
        "{said}"
    );
}

/// A batch's new spans change what earlier ones meant (a tool result's
/// recorded instant, so the evidence ids after it; an agent's root span,
/// exported last): the follow writes again only the events from the first
/// that changed, or the whole store when the agents or topics changed — and
/// at every batch the store is the import of the lines so far.
/// A generated run of three agents over four topics, `events` spans in
/// requests of `per` (each agent's runs of about `run_spans` spans; 0: one
/// run each), as a batch exporter sends them.
fn generated_requests(events: u64, seed: u64, per: usize, run_spans: u64) -> Vec<String> {
    let config = asof::synth::GenConfig {
        events,
        topics: 4,
        agents: 3,
        seed,
    };
    asof::synth::otlp_runs(config, per, run_spans, None)
}

#[test]
fn a_trace_follow_writes_again_only_what_new_spans_changed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    // Three agents, a trace each, their spans interleaved in time and each
    // agent's root span last; requests of 30 spans, as a batch exporter sends.
    let requests = generated_requests(1200, 11, 30, 0);
    assert!(requests.len() >= 30, "{}", requests.len());
    let (mut child, mut out) = following_empty(dir.path());
    let mut all = Vec::new();
    let mut live = None;
    for (n, batch) in requests.chunks(3).enumerate() {
        for request in batch {
            all.extend_from_slice(request.as_bytes());
            all.push(b'\n');
        }
        out.write_all(&all[all.len() - batch.iter().map(|r| r.len() + 1).sum::<usize>()..])
            .unwrap();
        out.flush().unwrap();
        wait_for(&db, all.len() as u64, &mut child);
        assert_equals_import(&db, &all, &[], n);
        live = Some(read_again_as_whole(&db, live.take(), n));
    }
    let said = stop_and_read(child);
    assert!(said.contains("earlier events (written again)"), "{said}");
    // A new agent's spans: the events from the first that changed written
    // again, not the whole store.
    assert!(
        said.contains("the trace's agents or topics changed: every version derived again"),
        "{said}"
    );
    assert!(!said.contains("the store written again whole"), "{said}");
}

/// A follow far behind its file (a receiver flooded, a file written faster
/// than it is converted) takes what was written in batches of at most a
/// run of bytes (64 KiB in a debug build: a request of these each), the
/// next read at once — never everything written in one batch held whole —
/// and the store is the import of the whole file at the end.
#[test]
fn a_follow_far_behind_takes_what_was_written_in_batches_of_bounded_size() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let requests = generated_requests(2400, 5, 100, 400);
    assert!(requests.len() >= 20, "{}", requests.len());
    assert!(
        requests.iter().all(|r| r.len() > 64 << 10),
        "each request over 64 KiB"
    );
    let (mut child, mut out) = following_empty(dir.path());
    let mut all = Vec::new();
    for request in &requests {
        all.extend_from_slice(request.as_bytes());
        all.push(b'\n');
    }
    // The first line makes the store; then everything else at once.
    let first = requests[0].len() + 1;
    out.write_all(&all[..first]).unwrap();
    out.flush().unwrap();
    wait_for(&db, first as u64, &mut child);
    out.write_all(&all[first..]).unwrap();
    out.flush().unwrap();
    wait_for(&db, all.len() as u64, &mut child);
    assert_equals_import(&db, &all, &[], 0);
    let said = stop_and_read(child);
    // A batch a line: each line's status said on its own.
    for line in 2..=requests.len() {
        assert!(
            said.contains(&format!("(line {line}, ")),
            "no batch ended at line {line}:\n{said}"
        );
    }
}

/// The requests of a generated fleet of three agents over four topics
/// (`events` spans, `seed`), `per` spans a request, each agent's runs of
/// about `run_spans`, with one request held back as an exporter racing
/// another sends it: `place(n)` of `n` requests says which, and where it
/// goes.
fn fleet_held_back(
    (events, seed): (u64, u64),
    (per, run_spans): (usize, u64),
    place: impl FnOnce(usize) -> (usize, usize),
) -> Vec<String> {
    let config = asof::synth::GenConfig {
        events,
        topics: 4,
        agents: 3,
        seed,
    };
    let mut requests = asof::synth::otlp_runs(config, per, run_spans, None);
    let (from, to) = place(requests.len());
    let held = requests.remove(from);
    requests.insert(to, held);
    requests
}

/// A fleet's runs, one after another per agent: the follow lets the runs
/// that are over go as it goes (a debug build freezes a trace once a line
/// passes without it). A request held back behind six others brings spans
/// into runs let go by then: every line is read back from the file and
/// converted again, and the batch's line says so apart from the traces
/// converted again — and at every batch the store is the import of the
/// lines so far.
#[test]
fn a_follow_of_a_fleet_reads_every_line_back_when_a_run_let_go_is_reached() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let requests = fleet_held_back((900, 5), (20, 60), |n| {
        assert!(n >= 30, "{n}");
        (10, 16)
    });
    let (mut child, mut out) = following_empty(dir.path());
    let mut all = Vec::new();
    let mut live = None;
    for (n, request) in requests.iter().enumerate() {
        out.write_all(format!("{request}\n").as_bytes()).unwrap();
        out.flush().unwrap();
        all.extend_from_slice(request.as_bytes());
        all.push(b'\n');
        wait_for(&db, all.len() as u64, &mut child);
        if n % 4 == 3 || n + 1 == requests.len() || (15..=18).contains(&n) {
            assert_equals_import(&db, &all, &[], n);
        }
        live = Some(read_again_as_whole(&db, live.take(), n));
    }
    let said = stop_and_read(child);
    assert!(
        said.contains("every line read back from the file and converted again (since the follow started: every line converted again once)"),
        "{said}"
    );
}

/// A long fleet followed: what the store's side holds of the log (the
/// scrub index's marks and evidence widths, each event's latest instant
/// replayed) is let go from the front as runs are over — past whole
/// stored chunks of the index — and read back from the store when a
/// request held back falls into a run let go and every line is converted
/// again; at either point, and at the end, the store is the import of the
/// lines so far.
#[test]
fn a_long_follow_lets_go_of_what_it_stored_and_reads_it_back_when_reached() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    // Held back behind ten others, late in the follow.
    let requests = fleet_held_back((60_000, 9), (1000, 300), |n| {
        assert!(n >= 50, "{n}");
        (n - 20, n - 10)
    });
    let n = requests.len();
    let (mut child, mut out) = following_empty(dir.path());
    let mut all = Vec::new();
    for (k, request) in requests.iter().enumerate() {
        out.write_all(format!("{request}\n").as_bytes()).unwrap();
        all.extend_from_slice(request.as_bytes());
        all.push(b'\n');
        if [n - 11, n - 10, n - 1].contains(&k) {
            out.flush().unwrap();
            wait_for(&db, all.len() as u64, &mut child);
            assert_equals_import(&db, &all, &[], k);
        }
    }
    let said = stop_and_read(child);
    assert!(said.contains("every line converted again once"), "{said}");
}

/// One request of trace `a5…`: a model call from `at` s whose output
/// calls `tool` with `args`.
fn call_line(n: u64, at: i64, tool: &str, args: serde_json::Value) -> String {
    let nanos = |s: i64| format!("{}", (1_776_000_000 + s) as i128 * 1_000_000_000);
    let attr = |k: &str, v: &str| serde_json::json!({"key": k, "value": {"stringValue": v}});
    let output = serde_json::json!([{"role": "assistant", "parts": [
        {"type": "tool_call", "id": format!("c{n}"), "name": tool, "arguments": args},
    ]}]);
    serde_json::json!({"resourceSpans": [{
        "resource": {"attributes": [attr("service.name", "agent")]},
        "scopeSpans": [{"scope": {"name": "t"}, "spans": [{
            "traceId": format!("{:032x}", 0xa5), "spanId": format!("{n:016x}"),
            "name": "chat m", "kind": 3,
            "startTimeUnixNano": nanos(at), "endTimeUnixNano": nanos(at + 1),
            "attributes": [
                attr("gen_ai.operation.name", "chat"),
                attr("gen_ai.output.messages", &output.to_string()),
            ],
        }]}],
    }]})
    .to_string()
}

/// Follows an empty `live.jsonl` in `dir` into `live.db` while `lines` are
/// appended one at a time, the store the import of the lines so far after
/// each; what the follow said.
fn follow_line_by_line(dir: &Path, lines: &[String]) -> String {
    let db = dir.join("live.db");
    let (mut child, mut out) = following_empty(dir);
    let mut all = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        all.extend_from_slice(line.as_bytes());
        all.push(b'\n');
        out.write_all(line.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
        out.flush().unwrap();
        wait_for(&db, all.len() as u64, &mut child);
        assert_equals_import(&db, &all, &[], n);
    }
    stop_and_read(child)
}

/// A span of [`spans_line`]: `(trace, span, from, to, agent or belief)`.
type SpanOf<'a> = (u128, u64, i64, i64, Result<&'a str, (&'a str, &'a str)>);

/// A request of spans: each an agent span naming its agent, or a model call
/// whose output records a belief `(topic, claim)`.
fn spans_line(spans: &[SpanOf]) -> String {
    let nanos = |s: i64| format!("{}", (1_776_000_000 + s) as i128 * 1_000_000_000);
    let attr = |k: &str, v: &str| serde_json::json!({"key": k, "value": {"stringValue": v}});
    let spans: Vec<serde_json::Value> = (spans.iter())
        .map(|&(trace, id, from, to, what)| {
            let (name, attributes) = match what {
                Ok(agent) => (
                    "invoke_agent",
                    vec![
                        attr("gen_ai.operation.name", "invoke_agent"),
                        attr("gen_ai.agent.name", agent),
                    ],
                ),
                Err((topic, claim)) => {
                    let args = serde_json::json!({"topic": topic, "claim": claim});
                    let output = serde_json::json!([{"role": "assistant", "parts": [
                        {"type": "tool_call", "id": format!("c{id}"), "name": "record_belief", "arguments": args},
                    ]}]);
                    (
                        "chat m",
                        vec![
                            attr("gen_ai.operation.name", "chat"),
                            attr("gen_ai.output.messages", &output.to_string()),
                        ],
                    )
                }
            };
            let mut span = serde_json::json!({
                "traceId": format!("{trace:032x}"), "spanId": format!("{id:016x}"),
                "name": name, "kind": 1,
                "startTimeUnixNano": nanos(from), "endTimeUnixNano": nanos(to),
                "attributes": attributes,
            });
            if what.is_err() {
                span["parentSpanId"] = serde_json::json!(format!("{:016x}", 1000 + trace as u64));
            }
            span
        })
        .collect();
    serde_json::json!({"resourceSpans": [{
        "resource": {"attributes": [attr("service.name", "svc")]},
        "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}],
    }]})
    .to_string()
}

/// A run's agent span, exported last, moves the run's belief to an agent
/// that states the same claim later in another run: that later assertion,
/// not written again, now reconfirms — what replaying it again did is taken
/// into the store's timeline index (at every batch the store is the import;
/// the header stays, so the batch is written from the change).
#[test]
fn a_later_assertion_replayed_again_takes_what_its_replay_now_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let lines = [
        // Run 1 of agent-a, its agent span read first.
        spans_line(&[
            (1, 1001, 0, 100, Ok("agent-a")),
            (1, 1, 4, 5, Err(("side", "x"))),
            (1, 2, 20, 21, Err(("root-cause", "disk"))),
        ]),
        // A run whose agent is not named (yet): the default agent's.
        spans_line(&[(3, 3, 30, 31, Err(("side", "y")))]),
        // Run 2: its call before run 1's, its agent span still to come.
        spans_line(&[(2, 4, 14, 15, Err(("root-cause", "disk")))]),
        spans_line(&[(2, 1002, 0, 100, Ok("agent-a"))]),
    ];
    let said = follow_line_by_line(dir.path(), &lines);
    let last = said.lines().find(|l| l.contains("(line 4,")).unwrap_or("");
    assert!(
        last.contains("changed 1 earlier event (written again)"),
        "{said}"
    );
    assert!(!last.contains("whole"), "{said}");
    let conn = Connection::open(&db).unwrap();
    let reconfirmed: i64 = conn
        .query_row(
            "SELECT count(*) FROM outcomes WHERE effect = 'reconfirmed'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(reconfirmed, 1, "run 1's later `disk` reconfirms run 2's");
}

/// Retractions that find nothing to retract are left out of the store, as
/// `import otlp` leaves them out (and says so); the batches after them go
/// on from the right place, and at every batch the store is the import.
#[test]
fn a_trace_follow_leaves_out_what_finds_nothing_to_retract_as_import_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let said = |claim: &str| serde_json::json!({"topic": "q", "claim": claim});
    let lines = [
        call_line(1, 10, "record_belief", said("a")),
        call_line(2, 20, "retract_belief", said("zzz")),
        call_line(3, 30, "record_belief", said("b")),
        call_line(4, 40, "retract_belief", said("b")),
        call_line(5, 50, "retract_belief", said("b")),
        call_line(6, 60, "record_belief", said("c")),
    ];
    follow_line_by_line(dir.path(), &lines);
    let report = asof()
        .args(["export"])
        .arg(&db)
        .args(["--format", "md"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&report.stdout);
    assert!(md.contains("finds nothing held to retract"), "{md}");
}

#[test]
fn a_trace_follow_goes_on_after_a_kill_with_the_options_given_now() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.jsonl");
    let db = dir.path().join("live.db");
    let all = sre_trace();
    let first = all.iter().position(|&b| b == b'\n').unwrap() + 1;
    std::fs::write(&file, &all[..first]).unwrap();
    let mut child = trace_follower(dir.path(), &[]);
    wait_for(&db, first as u64, &mut child);
    child.kill().ok();
    child.wait().ok();
    assert_equals_import(&db, &all[..first], &[], 0);
    // Started again with other options, it converts what it had with them,
    // then reads on.
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sre-agent.rules.yaml");
    let rules = rules.to_str().unwrap();
    let args = ["--rules", rules, "--agent", "on-call-bot"];
    let mut child = trace_follower(dir.path(), &args);
    let agents = || -> Option<String> {
        let conn =
            Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
        conn.query_row("SELECT group_concat(id) FROM agents", [], |r| r.get(0))
            .ok()
    };
    let start = Instant::now();
    while agents().as_deref() != Some("on-call-bot") {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "--agent was not applied to the lines read before: {:?}",
            agents()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_equals_import(&db, &all[..first], &args, 1);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap()
        .write_all(&all[first..])
        .unwrap();
    wait_for(&db, all.len() as u64, &mut child);
    let said = stop_and_read(child);
    assert!(
        said.contains("its agents or topics changed: every version derived again; 6 of the events it held written again, as the options given now convert them"),
        "{said}"
    );
    assert_equals_import(&db, &all, &args, 2);
}

/// The first line a follow prints (once it has taken up its store).
fn first_line(child: &mut Child) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    if let Some(out) = child.stdout.as_mut() {
        std::io::BufReader::new(out).read_line(&mut line).unwrap();
    }
    line
}

/// A follow started again with the options that wrote its store compares
/// what its lines convert to with what the store holds, and writes nothing
/// again; then it reads on.
#[test]
fn a_trace_follow_started_again_writes_nothing_its_store_holds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let config = asof::synth::GenConfig {
        events: 600,
        topics: 4,
        agents: 3,
        seed: 5,
    };
    let lines: Vec<String> = asof::synth::otlp_requests(config, 40)
        .into_iter()
        .map(|l| l + "\n")
        .collect();
    let half = lines.len() / 2;
    let (mut child, mut out) = following_empty(dir.path());
    out.write_all(lines[..half].concat().as_bytes()).unwrap();
    let mut all = lines[..half].concat().into_bytes();
    wait_for(&db, all.len() as u64, &mut child);
    child.kill().ok();
    child.wait().ok();
    let mut child = trace_follower(dir.path(), &[]);
    let first = first_line(&mut child);
    assert!(first.starts_with("following live.jsonl"), "{first}");
    assert!(!first.contains("written again"), "{first}");
    assert_equals_import(&db, &all, &[], 0);
    for (n, line) in lines[half..].iter().enumerate() {
        out.write_all(line.as_bytes()).unwrap();
        all.extend_from_slice(line.as_bytes());
        wait_for(&db, all.len() as u64, &mut child);
        assert_equals_import(&db, &all, &[], n + 1);
    }
    child.kill().ok();
    child.wait().ok();
}

/// A trace follow taken up again on another file in the followed one's
/// place (read once: fed and hashed together) says it is not the file, and
/// keeps the store; so does one whose first lines are not even a trace.
#[test]
fn a_trace_follow_taken_up_on_another_file_says_so() {
    let all = sre_trace();
    let first = all.iter().position(|&b| b == b'\n').unwrap() + 1;
    let others: [Vec<u8>; 2] = [
        // Another run's request, as long or longer.
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sre-agent-rerun.otlp.jsonl"),
        )
        .unwrap(),
        // Lines that are not OTLP at all.
        "{\"not\": \"a trace\"}\n"
            .repeat(first / 10 + 1)
            .into_bytes(),
    ];
    for other in others {
        let dir = tempfile::tempdir().unwrap();
        let (file, db) = (dir.path().join("live.jsonl"), dir.path().join("live.db"));
        std::fs::write(&file, &all[..first]).unwrap();
        let mut child = trace_follower(dir.path(), &[]);
        wait_for(&db, first as u64, &mut child);
        child.kill().ok();
        child.wait().ok();
        let before = tables(&db);
        std::fs::write(&file, &other).unwrap();
        let out = trace_follower(dir.path(), &[])
            .wait_with_output()
            .expect("the follow ends");
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains("is not the file"), "{said}");
        assert_eq!(tables(&db), before, "the store is kept");
    }
}

#[test]
fn a_truncated_trace_stops_the_follow_and_keeps_the_store() {
    stops(
        std::str::from_utf8(&sre_trace()).unwrap(),
        |f| {
            let len = std::fs::metadata(f).unwrap().len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(f)
                .unwrap()
                .set_len(len - 10)
                .unwrap();
        },
        "was truncated",
    );
}

#[test]
fn a_trace_line_that_is_not_json_is_left_out_and_said_as_import_otlp_does() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.jsonl");
    let db = dir.path().join("live.db");
    let all = sre_trace();
    std::fs::write(&file, &all).unwrap();
    let mut child = trace_follower(dir.path(), &["--skip-bad-lines"]);
    wait_for(&db, all.len() as u64, &mut child);
    let mut bad = all.clone();
    bad.extend_from_slice(b"{\"resourceSpans\": [}\n");
    let mut out = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    out.write_all(b"{\"resourceSpans\": [}\n").unwrap();
    out.flush().unwrap();
    wait_for(&db, bad.len() as u64, &mut child);
    assert_equals_import(&db, &bad, &["--skip-bad-lines"], 0);
    let said = stop_and_read(child);
    assert!(
        said.contains("1 record of the trace left out, `asof export live.db --format md` says why"),
        "{said}"
    );
}

/// Without --skip-bad-lines, a trace line that does not parse stops the
/// follow with its line, keeping what was applied before it.
#[test]
fn a_trace_line_that_is_not_json_stops_the_follow_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.jsonl");
    let db = dir.path().join("live.db");
    let all = sre_trace();
    std::fs::write(&file, &all).unwrap();
    let mut child = trace_follower(dir.path(), &[]);
    wait_for(&db, all.len() as u64, &mut child);
    let lines = all.iter().filter(|&&b| b == b'\n').count();
    let mut out = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    out.write_all(b"{\"resourceSpans\": [}\n").unwrap();
    out.flush().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    let mut said = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut said).unwrap();
    assert!(
        said.contains(&format!("live.jsonl:{}: is not valid JSON", lines + 1)),
        "{said}"
    );
    assert_equals_import(&db, &all, &[], 0);
}

#[test]
fn what_cannot_be_followed_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // A trace written as one request over many lines.
    let one: serde_json::Value =
        serde_json::from_slice(sre_trace().split(|&b| b == b'\n').next().unwrap()).unwrap();
    let pretty = dir.path().join("pretty.json");
    std::fs::write(&pretty, serde_json::to_string_pretty(&one).unwrap() + "\n").unwrap();
    let yaml = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/payment-outage.yaml");
    let jsonl = dir.path().join("log.jsonl");
    std::fs::write(&jsonl, generated(20, 2, 1, 1)).unwrap();
    let cases: [(&Path, &[&str], &str); 3] = [
        (
            &pretty,
            &[],
            "pretty.json:1: is not a whole OTLP/JSON request",
        ),
        (&yaml, &[], "not YAML"),
        (
            &jsonl,
            &["--agent", "x"],
            "log.jsonl: --agent is for reading an OTLP trace, and this is an asof dataset",
        ),
    ];
    for (file, args, says) in cases {
        asof()
            .arg("load")
            .arg(file)
            .arg("--db")
            .arg(dir.path().join("x.db"))
            .arg("--follow")
            .args(args)
            .timeout(Duration::from_secs(30))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
        assert!(!dir.path().join("x.db").exists());
    }
}

/// Batches that end between two events of one recorded instant, where the
/// instant's events close, supersede at zero width, reconfirm and retract
/// what was held, and batches recorded before what was applied: each is
/// replayed again from a kept replay before its first instant, and the store
/// stays a fresh load of the lines so far.
#[test]
fn batches_that_split_one_instant_equal_a_fresh_load() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.jsonl");
    let db = dir.path().join("live.db");
    let header = r#"{"asof":1,"incident":{"id":"split","title":"One instant, many batches"},"agents":[{"id":"a"},{"id":"b"}],"topics":[{"id":"t","question":"What?","cardinality":"one","resolution":"z"},{"id":"u","question":"Which?","cardinality":"many"}]}"#;
    let believe = |id: &str, agent: &str, topic: &str, claim: &str, at: &str| {
        format!(
            r#"{{"believe":{{"id":"{id}","agent":"{agent}","topic":"{topic}","claim":"{claim}","valid_from":"2026-05-01T00:00:00Z","recorded_at":"2026-05-01T10:{at}:00Z","supported_by":["E1"]}}}}"#
        )
    };
    let retract = |id: &str, agent: &str, topic: &str, at: &str| {
        format!(
            r#"{{"retract":{{"id":"{id}","agent":"{agent}","topic":"{topic}","because":["E1"],"recorded_at":"2026-05-01T10:{at}:00Z"}}}}"#
        )
    };
    let batches: Vec<Vec<String>> = vec![
        vec![
            header.to_owned(),
            r#"{"evidence":{"id":"E1","kind":"log","source":"app","observed_at":"2026-05-01T09:00:00Z","recorded_at":"2026-05-01T09:00:00Z"}}"#.to_owned(),
            believe("B1", "a", "t", "x", "00"),
            believe("B2", "b", "u", "p", "00"),
            // 10:05 begins: B1's version is closed at it.
            believe("B3", "a", "t", "y", "05"),
        ],
        // More at 10:05: B3's version, recorded at 10:05, goes at zero width.
        vec![believe("B4", "a", "t", "z", "05")],
        // Still 10:05: a reconfirmation, a second claim of a many-valued topic.
        vec![
            believe("B5", "a", "t", "z", "05"),
            believe("B6", "b", "u", "q", "05"),
        ],
        // 10:05 again, and a later instant in the same batch.
        vec![
            retract("R1", "b", "u", "05"),
            believe("B7", "b", "u", "r", "07"),
        ],
        // 10:07 again: a retraction of what 10:07 asserted.
        vec![retract("R2", "b", "u", "07")],
        vec![believe("B8", "a", "t", "w", "09")],
        // Late: 10:06 comes after 10:09 was applied, with a later one.
        vec![
            believe("B9", "b", "u", "s", "06"),
            believe("B10", "a", "t", "v", "10"),
        ],
        // Late again, back to the split instant itself.
        vec![retract("R3", "a", "t", "05")],
    ];
    let mut all = String::new();
    let mut child = None;
    std::fs::write(&file, "").unwrap();
    let mut out = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    for (n, batch) in batches.iter().enumerate() {
        let text: String = batch.iter().map(|line| format!("{line}\n")).collect();
        out.write_all(text.as_bytes()).unwrap();
        out.flush().unwrap();
        all.push_str(&text);
        let child = child.get_or_insert_with(|| follower(&file, &db));
        wait_for(&db, all.len() as u64, child);
        assert_equals_fresh_load(&db, all.as_bytes(), dir.path(), n);
    }
    if let Some(mut child) = child {
        child.kill().ok();
        child.wait().ok();
    }
}

// ---- a whole-file follow's writes by difference, on scripted conversions ----

/// A conversion that gives, for the n-th line fed, the n-th dataset; with
/// `grows`, as the log from its first event that differs from the last
/// dataset's (as a trace's growing import hands it over).
struct Script {
    datasets: Vec<String>,
    fed: usize,
    grows: bool,
    last: Option<asof::model::Dataset>,
}

impl Growth for Script {
    fn feed(&mut self, lines: &[u8]) -> Result<(), Stop> {
        self.fed += lines.iter().filter(|&&b| b == b'\n').count();
        Ok(())
    }
    type Ahead = ();
    fn ahead(_: &[u8]) {}
    fn feed_ahead(&mut self, lines: &[u8], (): ()) -> Result<(), Stop> {
        self.feed(lines)
    }
    fn grow(&mut self) -> Result<Grown, Stop> {
        let converted = self.convert()?;
        let new = converted.parsed.dataset.clone();
        let last = self.last.replace(new.clone());
        match last {
            Some(last) if self.grows && last.header == new.header => {
                let keep = (last.events.iter().zip(&new.events))
                    .take_while(|(a, b)| a == b)
                    .count();
                Ok(Grown::From(Suffix {
                    keep,
                    header: new.header,
                    events: new.events[keep..].to_vec(),
                    meta: Vec::new(),
                    skipped: 0,
                    calls_from: 0,
                    calls: Vec::new(),
                }))
            }
            _ => Ok(Grown::Whole(converted)),
        }
    }
    fn convert(&mut self) -> Result<Converted, Stop> {
        let parsed = read_str("script", Format::Jsonl, &self.datasets[self.fed - 1])?;
        let replay = asof::engine::replay(&parsed.dataset.header, &parsed.dataset.events);
        Ok(Converted {
            parsed,
            replay,
            meta: Vec::new(),
            skipped: 0,
            dropped: Vec::new(),
            calls: Vec::new(),
        })
    }
}

const HEADER: &str = r#"{"asof":1,"incident":{"id":"i","title":"t"},"agents":[{"id":"a","name":"A"}],"topics":[{"id":"q","question":"Q?","cardinality":"one"}]}"#;

fn believe(id: &str, claim: &str, at: &str) -> String {
    format!(
        r#"{{"believe":{{"id":"{id}","agent":"a","topic":"q","claim":"{claim}","valid_from":"2026-01-01T00:00:00Z","recorded_at":"2026-01-01T00:00:{at}Z","supported_by":["E1"]}}}}"#
    )
}

/// Each step's store is a fresh write of its dataset, row for row, when a
/// later step changes an assertion's claim (so the claims' codes, which
/// follow first appearance, change), appends, and removes the tail.
#[test]
fn each_step_of_a_whole_file_follow_equals_a_fresh_write_of_its_dataset() {
    let evidence = r#"{"evidence":{"id":"E1","kind":"trace","source":"s","locator":"l","observed_at":"2026-01-01T00:00:01Z","recorded_at":"2026-01-01T00:00:01Z","summary":"e"}}"#;
    let steps: Vec<Vec<String>> = vec![
        vec![evidence.into(), believe("B1", "x", "10")],
        vec![
            evidence.into(),
            believe("B1", "y", "10"),
            believe("B2", "x", "20"),
        ],
        vec![
            evidence.into(),
            believe("B1", "y", "10"),
            believe("B2", "x", "20"),
            believe("B3", "z", "30"),
        ],
        vec![evidence.into(), believe("B1", "z", "10")],
    ];
    let datasets: Vec<String> = steps
        .iter()
        .map(|events| format!("{HEADER}\n{}\n", events.join("\n")))
        .collect();
    let seen = follow_script(&datasets, false);
    assert_eq!(
        seen,
        [(0, false), (1, false), (0, false), (3, false)],
        "what each step wrote again"
    );
}

/// That `timeline`, read again after a batch, is what a whole read of `store`
/// gives: the scrub index, the quality ledger, the evaluations, the header.
fn assert_same_timeline(timeline: &Timeline, store: &Path, step: &str) {
    let whole = Timeline::load(Store::open(store).expect("a store")).expect("read whole");
    assert_eq!(
        timeline.scrub_index(),
        whole.scrub_index(),
        "{step}: the scrub index"
    );
    assert_eq!(timeline.ledger, whole.ledger, "{step}: the ledger");
    assert_eq!(
        timeline.evaluations, whole.evaluations,
        "{step}: the evaluations"
    );
    assert_eq!(timeline.header, whole.header, "{step}: the header");
}

/// The store at `db` read again as a live screen reads it after `last`,
/// checked against a whole read (after request `n`).
fn read_again_as_whole(db: &Path, last: Option<(Timeline, Kept)>, n: usize) -> (Timeline, Kept) {
    let (again, kept) = asof::tui::live::read_again(db, last).expect("read again");
    assert_same_timeline(&again, db, &format!("after request {n}"));
    (again, kept)
}

/// Follows `datasets`, one a line (see [`Script`]), checking after each
/// step that the store is a fresh write of its dataset, row for row; what
/// each step wrote again.
fn follow_script(datasets: &[String], grows: bool) -> Vec<(usize, bool)> {
    let dir = tempfile::tempdir().expect("a directory");
    let (file, store) = (dir.path().join("live"), dir.path().join("live.db"));
    std::fs::write(&file, "1\n").expect("written");
    let mut growth = Script {
        datasets: datasets.to_vec(),
        fed: 0,
        grows,
        last: None,
    };
    let mut seen = Vec::new();
    let mut live = None;
    follow_whole(
        &file,
        &store,
        false,
        std::time::Duration::ZERO,
        1 << 20,
        &mut growth,
        |batch| {
            if batch.lines == 0 && batch.line == seen.len() {
                return true;
            }
            let fresh = dir.path().join(format!("fresh{}.db", batch.line));
            let parsed =
                read_str("script", Format::Jsonl, &datasets[batch.line - 1]).expect("a dataset");
            let replay = asof::engine::replay(&parsed.dataset.header, &parsed.dataset.events);
            Store::create_with(
                &fresh,
                &Contents {
                    dataset: &parsed.dataset,
                    replay: &replay,
                    source: "script",
                    meta: Vec::new(),
                },
                false,
            )
            .expect("a fresh store");
            assert_eq!(tables(&store), tables(&fresh), "step {}", batch.line);
            // A live screen reads again what the batch changed: the timeline
            // a whole read gives.
            let (again, kept) =
                asof::tui::live::read_again(&store, live.take()).expect("read again");
            assert_same_timeline(&again, &store, &format!("step {}", batch.line));
            live = Some((again, kept));
            seen.push((batch.rewritten, batch.whole));
            if batch.line == datasets.len() {
                return false;
            }
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&file)
                .expect("the file");
            std::io::Write::write_all(&mut f, format!("{}\n", batch.line + 1).as_bytes())
                .expect("a line");
            true
        },
    )
    .expect("followed");
    seen
}

/// A suffix handed over by a growing conversion that drops stored events
/// (an assertion, and the evidence it alone cited no longer cited) and
/// writes the rest again later: the store is a fresh write of each step.
/// (At this size the replay is taken up from the log's start whatever the
/// earliest instant removed; that what a rewrite removes is read right from
/// the store is the unit test's, in `follow/trace.rs`.)
#[test]
fn a_suffix_that_removes_stored_events_equals_a_fresh_write() {
    let evidence = |id: &str, at: &str| {
        format!(
            r#"{{"evidence":{{"id":"{id}","kind":"trace","source":"s","locator":"l","observed_at":"2026-01-01T00:00:{at}Z","recorded_at":"2026-01-01T00:00:{at}Z","summary":"e"}}}}"#
        )
    };
    let cites = |event: String, id: &str| event.replace(r#"["E1"]"#, &format!(r#"["{id}"]"#));
    let steps: Vec<Vec<String>> = vec![
        vec![
            evidence("E1", "01"),
            evidence("E2", "02"),
            cites(believe("B1", "x", "10"), "E2"),
            believe("B2", "y", "20"),
        ],
        vec![
            evidence("E1", "01"),
            evidence("E2", "02"),
            believe("B2", "y", "20"),
        ],
        vec![
            evidence("E1", "01"),
            evidence("E2", "02"),
            believe("B2", "y", "20"),
            cites(believe("B3", "x", "30"), "E2"),
        ],
    ];
    let datasets: Vec<String> = steps
        .iter()
        .map(|events| format!("{HEADER}\n{}\n", events.join("\n")))
        .collect();
    let seen = follow_script(&datasets, true);
    assert_eq!(
        seen,
        [(0, false), (2, false), (0, false)],
        "what each step wrote again"
    );
}

/// A live screen reads again, after every batch, only what the batch
/// changed (design.md §6): for random steps that append evidence,
/// assertions with assumed fields and verifications, cut the log's tail,
/// and change an earlier assertion (so the log is written again from it),
/// what it reads is what a whole read gives (`follow_script` checks each
/// step: the scrub index, the ledger of verdicts and assumed fields, the
/// evaluations, the header).
mod read_again {
    use super::{HEADER, follow_script};
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Step {
        Append(usize),
        Cut(usize),
        Change(usize, u8),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => (1..8usize).prop_map(Step::Append),
            1 => (1..4usize).prop_map(Step::Cut),
            2 => (0..100usize, 0..3u8).prop_map(|(at, claim)| Step::Change(at, claim)),
        ]
    }

    /// The n-th event made: evidence, an assertion (assumed fields on every
    /// other one) or a verification, each recorded a second after the last.
    fn event(n: usize, claim: u8) -> String {
        let at = format!(
            "2026-01-01T{:02}:{:02}:{:02}Z",
            n / 3600,
            n / 60 % 60,
            n % 60
        );
        match n % 5 {
            0 => format!(
                r#"{{"evidence":{{"id":"E{n}","kind":"trace","source":"s","locator":"l","observed_at":"{at}","recorded_at":"{at}","summary":"e"}}}}"#
            ),
            3 => format!(
                r#"{{"verify":{{"id":"V{n}","evidence":"E0","state":"{}","by":"r","recorded_at":"{at}"}}}}"#,
                ["rejected", "direct-read", "stale"][usize::from(claim) % 3]
            ),
            k => format!(
                r#"{{"believe":{{"id":"B{n}","agent":"a","topic":"q","claim":"c{claim}","valid_from":"2026-01-01T00:00:00Z","recorded_at":"{at}","supported_by":["E0"]{}}}}}"#,
                if k % 2 == 1 {
                    r#","assumed":["agent","confidence"]"#
                } else {
                    ""
                }
            ),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
        #[test]
        fn a_timeline_read_again_after_every_batch_is_a_whole_read(
            steps in prop::collection::vec(step(), 1..10),
        ) {
            // Each event is (its number, its claim); E0 is never cut.
            let mut events: Vec<(usize, u8)> = vec![(0, 0), (1, 0)];
            let mut made = 2;
            let mut datasets = vec![events.clone()];
            for step in steps {
                match step {
                    Step::Append(k) => {
                        events.extend((made..made + k).map(|n| (n, 0)));
                        made += k;
                    }
                    Step::Cut(k) => events.truncate(events.len().saturating_sub(k).max(1)),
                    Step::Change(at, claim) => {
                        let at = at % events.len();
                        events[at].1 = claim + 1;
                    }
                }
                datasets.push(events.clone());
            }
            let datasets: Vec<String> = (datasets.iter())
                .map(|events| {
                    let lines: Vec<String> = events.iter().map(|&(n, c)| event(n, c)).collect();
                    format!("{HEADER}\n{}\n", lines.join("\n"))
                })
                .collect();
            follow_script(&datasets, true);
        }
    }
}

// ---- a whole-file follow started again, compared a run of lines at a time ----

/// A conversion that gives, for the n-th line fed, the n-th dataset and
/// model calls, as the log and the calls from the first that differs from
/// the last line's — from their start at line `again_at` (as a conversion
/// of every line again gives them) — and whose settled events and calls are
/// those no later line changes (`settled_over`: that many more, as a
/// conversion that broke its word).
struct Restarted {
    texts: Vec<String>,
    datasets: Vec<asof::model::Dataset>,
    calls: Vec<Vec<asof::model::ModelCall>>,
    fed: usize,
    last: (Vec<asof::model::Event>, Vec<asof::model::ModelCall>),
    again_at: Option<usize>,
    settled_over: usize,
}

impl Restarted {
    fn new(
        (datasets, calls): (&[String], &[Vec<asof::model::ModelCall>]),
        again_at: Option<usize>,
        settled_over: usize,
    ) -> Restarted {
        let parsed = datasets
            .iter()
            .map(|text| {
                read_str("script", Format::Jsonl, text)
                    .expect("a dataset")
                    .dataset
            })
            .collect();
        Restarted {
            texts: datasets.to_vec(),
            datasets: parsed,
            calls: calls.to_vec(),
            fed: 0,
            last: (Vec::new(), Vec::new()),
            again_at,
            settled_over,
        }
    }
}

/// How many first items `a` and `b` share.
fn shared<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).take_while(|(a, b)| a == b).count()
}

impl Growth for Restarted {
    fn feed(&mut self, lines: &[u8]) -> Result<(), Stop> {
        self.fed += lines.iter().filter(|&&b| b == b'\n').count();
        Ok(())
    }
    type Ahead = ();
    fn ahead(_: &[u8]) {}
    fn feed_ahead(&mut self, lines: &[u8], (): ()) -> Result<(), Stop> {
        self.feed(lines)
    }
    fn grow(&mut self) -> Result<Grown, Stop> {
        let new = self.datasets[self.fed - 1].clone();
        let calls = self.calls[self.fed - 1].clone();
        let (keep, calls_from) = match self.again_at == Some(self.fed) {
            true => (0, 0),
            false => (
                shared(&self.last.0, &new.events),
                shared(&self.last.1, &calls),
            ),
        };
        self.last = (new.events.clone(), calls.clone());
        Ok(Grown::From(Suffix {
            keep,
            header: new.header,
            events: new.events[keep..].to_vec(),
            meta: Vec::new(),
            skipped: 0,
            calls_from,
            calls: calls[calls_from..].to_vec(),
        }))
    }
    fn convert(&mut self) -> Result<Converted, Stop> {
        let parsed = read_str("script", Format::Jsonl, &self.texts[self.fed - 1])?;
        let replay = asof::engine::replay(&parsed.dataset.header, &parsed.dataset.events);
        let calls = self.calls[self.fed - 1].clone();
        let json = serde_json::to_string(&calls).expect("calls in JSON");
        Ok(Converted {
            parsed,
            replay,
            meta: vec![("model_calls", json)],
            skipped: 0,
            dropped: Vec::new(),
            calls,
        })
    }
    fn settled(&self) -> (usize, usize) {
        let (now, calls) = (
            &self.datasets[self.fed - 1].events,
            &self.calls[self.fed - 1],
        );
        let events = (self.datasets[self.fed - 1..].iter())
            .map(|later| shared(now, &later.events))
            .min()
            .unwrap_or(0);
        let calls_settled = (self.calls[self.fed - 1..].iter())
            .map(|later| shared(calls, later))
            .min()
            .unwrap_or(0);
        let over = |n: usize, len: usize| (n + self.settled_over).min(len);
        (over(events, now.len()), over(calls_settled, calls.len()))
    }
}

/// A follow started again on its store (serve restarted) feeds the lines
/// the store applied a run at a time (in a debug build, a few kilobytes)
/// and compares what settled with the store as it goes: started with a
/// conversion that gives the log the store holds — the same entries given
/// again by a batch too — it writes nothing; with one whose log differs
/// from an event on, found as it settles or only at the end, or given again
/// differently by a batch after it was compared, it writes from there, and
/// the store is a fresh write of what the lines convert to now.
#[test]
fn a_follow_started_again_compares_its_store_a_run_of_lines_at_a_time() {
    let evidence = r#"{"evidence":{"id":"E1","kind":"trace","source":"s","locator":"l","observed_at":"2026-01-01T00:00:01Z","recorded_at":"2026-01-01T00:00:01Z","summary":"e"}}"#;
    // Line n's dataset: the evidence and n beliefs, the `changed`-th (from
    // line `from` on) with another claim.
    let datasets = |changed: usize, from: usize| -> Vec<String> {
        (1..=8)
            .map(|n| {
                let beliefs = (1..=n).map(|b| {
                    let claim = match b == changed && n >= from {
                        true => format!("other{b}"),
                        false => format!("c{b}"),
                    };
                    believe(&format!("B{b}"), &claim, &format!("{:02}", 10 + b))
                });
                let events: Vec<String> = std::iter::once(evidence.to_owned())
                    .chain(beliefs)
                    .collect();
                format!("{HEADER}\n{}\n", events.join("\n"))
            })
            .collect()
    };
    // Line n's model calls: n, the `changed`-th (from line `from` on) of
    // another model.
    let calls = |changed: usize, from: usize| -> Vec<Vec<asof::model::ModelCall>> {
        (1..=8)
            .map(|n| {
                (1..=n)
                    .map(|k| asof::model::ModelCall {
                        n: k,
                        agent: "a".into(),
                        trace: "t".into(),
                        span: format!("s{k}"),
                        started: k as i64,
                        ended: k as i64,
                        model: Some(
                            if k == changed && n >= from {
                                "other"
                            } else {
                                "m"
                            }
                            .into(),
                        ),
                        read_new: Vec::new(),
                        said: Vec::new(),
                        tool_calls: Vec::new(),
                    })
                    .collect()
            })
            .collect()
    };
    let line_by_line = |changed, from| (datasets(changed, from), calls(changed, from));
    let stored = line_by_line(0, 0);
    // (what the lines convert to now, a batch giving every entry again,
    // settled events overstated, events written again)
    let cases = [
        (stored.clone(), None, 0, 0),
        (stored.clone(), Some(5), 0, 0),
        // B2 and call 2 differ from line 2 on: found as they settle.
        (line_by_line(2, 2), None, 0, 7),
        // B6 and call 6 differ only from line 7 on: found at the end.
        (line_by_line(6, 7), None, 0, 3),
        // B2 and call 2 differ from line 4 on, but were said settled before
        // (and taken as found); line 6 gives them again.
        (line_by_line(2, 4), Some(6), 8, 7),
        (line_by_line(2, 4), None, 0, 7),
    ];
    for (n, (now, again_at, settled_over, rewritten)) in cases.into_iter().enumerate() {
        let dir = tempfile::tempdir().expect("a directory");
        let (file, store) = (dir.path().join("live"), dir.path().join("live.db"));
        // Lines longer than a debug build's run: a run a line.
        let lines: String = (1..=8)
            .map(|n| format!("{n}{}\n", " ".repeat(5000)))
            .collect();
        std::fs::write(&file, lines).expect("written");
        let follow = |growth: &mut Restarted| {
            let mut first = None;
            follow_whole(
                &file,
                &store,
                false,
                Duration::ZERO,
                1 << 20,
                growth,
                |batch| {
                    first = Some((batch.rewritten, batch.whole));
                    false
                },
            )
            .expect("followed");
            first.expect("a batch")
        };
        follow(&mut Restarted::new((&stored.0, &stored.1), None, 0));
        let seen = follow(&mut Restarted::new(
            (&now.0, &now.1),
            again_at,
            settled_over,
        ));
        let fresh = dir.path().join("fresh.db");
        let parsed = read_str("script", Format::Jsonl, &now.0[7]).expect("a dataset");
        let replay = asof::engine::replay(&parsed.dataset.header, &parsed.dataset.events);
        Store::create_with(
            &fresh,
            &Contents {
                dataset: &parsed.dataset,
                replay: &replay,
                source: "script",
                meta: vec![("model_calls", serde_json::to_string(&now.1[7]).unwrap())],
            },
            false,
        )
        .expect("a fresh store");
        let without_position = |db: &Path| {
            let mut t = tables(db);
            t.remove("meta");
            t
        };
        assert_eq!(
            without_position(&store),
            without_position(&fresh),
            "case {n}"
        );
        assert_eq!(seen, (rewritten, false), "case {n}: written again");
    }
}
