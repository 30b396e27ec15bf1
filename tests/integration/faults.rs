//! Faults: a load or a fork killed part-way leaves no store (or the previous one)
//! at the target path; readers share a store; a fork into a directory it cannot
//! write fails clearly and leaves the parent untouched; a full disk fails a load
//! cleanly. See `docs/reliability.md`.

use crate::common;

use common::{asof, bytes};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_asof"))
}

/// A generated dataset big enough that loading it takes a while.
fn big_dataset(dir: &Path, events: u32) -> PathBuf {
    let path = dir.join("big.jsonl");
    asof()
        .args([
            "gen",
            "--events",
            &events.to_string(),
            "--topics",
            "50",
            "-o",
        ])
        .arg(&path)
        .assert()
        .success();
    path
}

/// Runs `args`, kills it after `after`, and returns whether it had already ended.
fn run_and_kill(args: &[&std::ffi::OsStr], after: Duration) -> bool {
    let mut child = Command::new(bin())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while start.elapsed() < after {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let status = child.wait().unwrap();
    status.success()
}

/// Files in `dir` other than the asof temporaries a SIGKILL can leave behind
/// (`.asof-new-*.tmp`: never at the target path, never taken for a store).
fn visible(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with(".asof-new-"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_load_killed_part_way_leaves_no_store_or_the_previous_one() {
    let dir = tempfile::tempdir().unwrap();
    let data = big_dataset(dir.path(), 60_000);
    let db = dir.path().join("out.db");
    // Kill points spread over the load (parse, replay, writing, indexes, rename).
    let mut killed = 0;
    for ms in [20u64, 80, 150, 250, 400, 600, 900, 1300] {
        let done = run_and_kill(
            &[
                "load".as_ref(),
                data.as_os_str(),
                "--db".as_ref(),
                db.as_os_str(),
            ],
            Duration::from_millis(ms),
        );
        if done {
            // Finished before the kill: a complete store, then start again.
            asof().arg("check").arg(&db).assert().success();
            std::fs::remove_file(&db).unwrap();
        } else {
            killed += 1;
            assert!(!db.exists(), "killed after {ms} ms: no store at the target");
        }
        assert_eq!(visible(dir.path()), vec!["big.jsonl".to_owned()]);
    }
    assert!(killed > 0, "no kill landed during a load");

    // Replacing an existing store with --force: killed, the old one stays as it was.
    let old = common::write(dir.path(), "small.yaml", common::SMALL);
    asof()
        .arg("load")
        .arg(&old)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let before = bytes(&db);
    for ms in [30u64, 200, 500] {
        let done = run_and_kill(
            &[
                "load".as_ref(),
                data.as_os_str(),
                "--db".as_ref(),
                db.as_os_str(),
                "--force".as_ref(),
            ],
            Duration::from_millis(ms),
        );
        if done {
            break;
        }
        assert_eq!(
            bytes(&db),
            before,
            "killed after {ms} ms: the old store is untouched"
        );
    }
}

#[test]
fn a_fork_killed_part_way_leaves_no_fork() {
    let dir = tempfile::tempdir().unwrap();
    let data = big_dataset(dir.path(), 60_000);
    let parent = dir.path().join("parent.db");
    asof()
        .arg("load")
        .arg(&data)
        .arg("--db")
        .arg(&parent)
        .assert()
        .success();
    let before = bytes(&parent);
    let fork = dir.path().join("fork.db");
    // The dataset as SOURCE replays whole (slow enough to interrupt); the store
    // as SOURCE copies and patches.
    for (source, points) in [(&data, [100u64, 400, 900]), (&parent, [5, 20, 60])] {
        for ms in points {
            let done = run_and_kill(
                &[
                    "fork".as_ref(),
                    source.as_os_str(),
                    "--without".as_ref(),
                    "E100".as_ref(),
                    "--out".as_ref(),
                    fork.as_os_str(),
                ],
                Duration::from_millis(ms),
            );
            if done {
                asof().arg("check").arg(&fork).assert().success();
                std::fs::remove_file(&fork).unwrap();
            } else {
                assert!(!fork.exists(), "killed after {ms} ms: no fork file");
            }
        }
    }
    assert_eq!(bytes(&parent), before, "the parent is never written");
}

#[test]
fn two_processes_read_one_store_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = big_dataset(dir.path(), 20_000);
    let db = dir.path().join("s.db");
    asof()
        .arg("load")
        .arg(&data)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let spawn = |args: &[&str]| {
        Command::new(bin())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let path = db.to_str().unwrap();
    let children: Vec<_> = (0..6)
        .map(|i| match i % 3 {
            0 => spawn(&["check", path]),
            1 => spawn(&["believed", path, "--at", "2026-02-01", "--format", "json"]),
            _ => spawn(&[
                "fork",
                path,
                "--without",
                "E7",
                "--out",
                &format!("{path}.f{i}"),
            ]),
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_fork_into_a_directory_it_cannot_write_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let data = common::write(dir.path(), "small.yaml", common::SMALL);
    asof()
        .arg("load")
        .arg(&data)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let before = bytes(&db);
    // Read-only for the fork: a directory whose permissions (or, for root, whose
    // immutable flag) forbid creating files.
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    let target = locked.join("fork.db");
    let chattr = |flag: &str| {
        let _ = Command::new("chattr")
            .arg(flag)
            .arg(&locked)
            .stderr(Stdio::null())
            .status();
    };
    let lock = |on: bool| {
        use std::os::unix::fs::PermissionsExt;
        if !on {
            chattr("-i");
        }
        std::fs::set_permissions(
            &locked,
            std::fs::Permissions::from_mode(if on { 0o555 } else { 0o755 }),
        )
        .unwrap();
        if on {
            chattr("+i");
        }
    };
    lock(true);
    let writable = std::fs::write(locked.join("probe"), b"x").is_ok();
    // Where even that is not possible (root on a filesystem without chattr), the
    // fork targets a path under a regular file, which no one can create.
    let target = if writable {
        lock(false);
        let _ = std::fs::remove_file(locked.join("probe"));
        std::fs::write(dir.path().join("plain"), b"").unwrap();
        dir.path().join("plain").join("fork.db")
    } else {
        target
    };
    let out = asof()
        .arg("fork")
        .arg(&db)
        .args(["--without", "E1", "--out"])
        .arg(&target)
        .output()
        .unwrap();
    lock(false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("{}:", target.display())),
        "{stderr}"
    );
    assert!(
        ["ermission denied", "not permitted", "Not a directory"]
            .iter()
            .any(|m| stderr.contains(m)),
        "{stderr}"
    );
    assert!(!target.exists());
    assert_eq!(bytes(&db), before);
}

#[test]
fn a_full_disk_fails_a_load_cleanly() {
    // A 2 MiB tmpfs: the load's temporary store cannot fit.
    let dir = tempfile::tempdir().unwrap();
    let data = big_dataset(dir.path(), 20_000);
    let small = dir.path().join("small-disk");
    std::fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(&small)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        // Mounting needs privileges this machine does not give the test; the
        // closing note of the reliability issue records where it was run.
        eprintln!("a_full_disk_fails_a_load_cleanly: cannot mount a tmpfs here; not run");
        return;
    }
    let db = small.join("out.db");
    let out = asof()
        .arg("load")
        .arg(&data)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(&small).unwrap().collect();
    let _ = Command::new("umount").arg(&small).status();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("full"), "{stderr}");
    assert!(!db.exists());
    assert!(left.is_empty(), "the temporary store is removed: {left:?}");
}

/// A killed writer leaves its `.asof-new-*.tmp` behind; the next store written
/// in that directory removes it once it is a minute old and nobody holds it —
/// never one a live writer holds.
#[test]
fn temporaries_left_by_killed_writers_are_removed_by_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    let temporary = |name: &str, age: Option<std::time::SystemTime>| {
        let path = dir.path().join(name);
        let file = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(&mut &file, b"half a store").unwrap();
        if let Some(t) = age {
            file.set_modified(t).unwrap();
        }
        (path, file)
    };
    let (stale, _) = temporary(".asof-new-stale.tmp", Some(old));
    let (fresh, _) = temporary(".asof-new-fresh.tmp", None);
    let (held, held_file) = temporary(".asof-new-held.tmp", Some(old));
    held_file.lock().unwrap();
    let (other, _) = temporary("notes.tmp", Some(old));
    // A load derives in write-ahead-log mode for a while: SQLite's files
    // beside a temporary go with it, or once it is gone.
    let (stale_wal, _) = temporary(".asof-new-stale.tmp-wal", Some(old));
    let (stale_shm, _) = temporary(".asof-new-stale.tmp-shm", Some(old));
    let (orphan_wal, _) = temporary(".asof-new-gone.tmp-wal", Some(old));
    let (held_wal, _) = temporary(".asof-new-held.tmp-wal", Some(old));

    let small = common::write(dir.path(), "small.yaml", common::SMALL);
    asof()
        .arg("load")
        .arg(&small)
        .arg("--db")
        .arg(dir.path().join("s.db"))
        .assert()
        .success();
    assert!(!stale.exists(), "an old, unheld temporary is removed");
    assert!(
        fresh.exists(),
        "a temporary changed within the minute stays"
    );
    assert!(
        held.exists(),
        "a temporary a writer holds stays, however old"
    );
    assert!(other.exists(), "files that are not asof temporaries stay");
    assert!(!stale_wal.exists() && !stale_shm.exists());
    assert!(
        !orphan_wal.exists(),
        "a temporary's log outlives it only a minute"
    );
    assert!(held_wal.exists(), "a live writer's log stays");
    drop(held_file);
}

/// A store deleted while SQLite's write-ahead log beside it still held pages
/// (a killed `--follow`): a new store loaded at that path must not take the
/// old log for its own and come out damaged.
#[test]
fn a_new_store_ignores_the_write_ahead_log_a_deleted_store_left() {
    let dir = tempfile::tempdir().unwrap();
    let small = common::write(dir.path(), "small.yaml", common::SMALL);
    let generated = common::write(dir.path(), "gen.jsonl", &common::generated(300, 5, 2, 3));
    let db = dir.path().join("s.db");
    let wal = dir.path().join("s.db-wal");
    common::load(&generated, &db);
    // Pages written to the log and not copied back, as a killed writer leaves them.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
        .unwrap();
    conn.execute_batch("PRAGMA wal_autocheckpoint = 0; DELETE FROM scrub; DELETE FROM pages;")
        .unwrap();
    let left = std::fs::read(&wal).unwrap();
    assert!(
        left.len() > 4096,
        "the log holds pages ({} bytes)",
        left.len()
    );
    drop(conn);
    std::fs::remove_file(&db).unwrap();
    std::fs::write(&wal, &left).unwrap();

    common::load(&small, &db);
    asof().arg("check").arg(&db).assert().success();
    assert!(!wal.exists(), "the old log is removed with the old store");
}

/// One byte of page `page` of `db` changed: its b-tree page type, so SQLite
/// finds the page malformed.
fn flip_page_type(db: &Path, table: &str) {
    let (page, size): (i64, i64) = {
        let conn = rusqlite::Connection::open(db).unwrap();
        let page = conn
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = ?1",
                [table],
                |r| r.get(0),
            )
            .unwrap();
        let size = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        (page, size)
    };
    let mut bytes = std::fs::read(db).unwrap();
    let at = ((page - 1) * size) as usize + if page == 1 { 100 } else { 0 };
    bytes[at] = 0;
    std::fs::write(db, bytes).unwrap();
}

/// A generated incident of 3,000 events loaded into `dir/gen.db`.
fn generated_store(dir: &Path) -> PathBuf {
    let dataset = dir.join("gen.jsonl");
    std::fs::write(&dataset, common::generated(3000, 20, 3, 5)).unwrap();
    let db = dir.join("gen.db");
    common::load(&dataset, &db);
    db
}

/// The command `check` names for the way out, run as named.
fn run_the_way_out(db: &Path, says: &str) {
    let checked = common::asof().arg("check").arg(db).assert().code(2);
    let said = String::from_utf8_lossy(&checked.get_output().stderr).into_owned();
    assert!(said.contains(says), "{said}");
    let command = said.split('`').nth(1).expect("a command in backticks");
    let args: Vec<&str> = command.split(' ').skip(1).collect();
    common::asof().args(&args).assert().success();
    common::asof().arg("check").arg(db).assert().success();
}

/// A byte changed in a page of the derived versions: `check` says SQLite
/// finds the file damaged but the log whole, reading commands that meet the
/// page refuse it in one sentence, and `asof rebuild` (what check names)
/// writes the store again from its log.
#[test]
fn a_damaged_version_page_is_found_and_rebuild_recovers_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = generated_store(dir.path());
    flip_page_type(&db, "versions");
    common::asof()
        .arg("history")
        .arg(&db)
        .args(["--topic", "topic-1"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "not a readable asof store: SQLite reports the file damaged (database disk image is malformed); `asof check` on it names the one command that recovers it",
        ));
    run_the_way_out(
        &db,
        "its log is whole; write it again from the log: `asof rebuild",
    );
}

/// A trace's store whose derived pages are damaged keeps its model calls
/// when `rebuild` writes it again from its log: they are not derived from it.
#[test]
fn a_rebuilt_trace_store_keeps_its_model_calls() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sre.db");
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sre-agent.otlp.jsonl");
    common::asof()
        .args(["import", "otlp"])
        .arg(&trace)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let calls = || {
        let out = common::asof()
            .arg("calls")
            .arg(&db)
            .args(["--format", "json"])
            .assert();
        String::from_utf8_lossy(&out.success().get_output().stdout).into_owned()
    };
    let before = calls();
    assert!(before.contains("read_new"), "{before}");
    flip_page_type(&db, "versions");
    run_the_way_out(&db, "`asof rebuild");
    assert_eq!(calls(), before);
}

/// A store loaded with a review keeps its findings when `rebuild` writes it
/// again from its log: a review is a record of its own, never derived.
#[test]
fn a_rebuilt_store_keeps_its_review() {
    let dir = tempfile::tempdir().unwrap();
    let review = dir.path().join("ana.review.jsonl");
    std::fs::write(
        &review,
        concat!(
            r#"{"id":"F1","target":{"kind":"evidence","id":"E15"},"verdict":"rejected","note":"a traffic lull, not the rollback","reviewer":"ana","made_at":"2026-12-06T09:12:00Z","about":"2026-03-03T12:10:00Z"}"#,
            "\n",
        ),
    )
    .unwrap();
    let db = dir.path().join("reviewed.db");
    common::asof()
        .args(["load", "datasets/payment-outage.yaml", "--db"])
        .arg(&db)
        .arg("--review")
        .arg(&review)
        .assert()
        .success();
    let rows = || -> Vec<(i64, String, String)> {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let mut stmt = conn
            .prepare("SELECT pos, id, line FROM review ORDER BY pos")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    let before = rows();
    assert_eq!(before.len(), 1);
    flip_page_type(&db, "versions");
    run_the_way_out(&db, "`asof rebuild");
    assert_eq!(rows(), before);
    let report = common::asof()
        .arg("export")
        .arg(&db)
        .args(["--format", "md"])
        .assert()
        .success();
    let md = String::from_utf8_lossy(&report.get_output().stdout).into_owned();
    assert!(md.contains("a traffic lull, not the rollback"), "{md}");
}

/// A byte changed in a page of the log, and one inside an event row: the log
/// is damaged, `check` says so and names the load that recovers the store.
#[test]
fn a_damaged_log_is_found_and_loading_again_recovers_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = generated_store(dir.path());
    flip_page_type(&db, "events");
    common::asof()
        .arg("rebuild")
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("its log is damaged"));
    run_the_way_out(
        &db,
        "its log is damaged; load it again from its source: `asof load",
    );
    // A value changed inside a row, the page still well formed: the
    // event's checksum finds it (SQLite's integrity check cannot).
    common::tamper(
        &db,
        "UPDATE events SET valid_to = valid_from - 1 WHERE seq = (SELECT min(seq) FROM events WHERE kind = 'believe')",
    );
    common::asof()
        .arg("check")
        .arg(&db)
        .assert()
        .code(2)
        .stdout(predicates::str::contains("does not match its checksum"));
    run_the_way_out(&db, "load it again from its source");
}

/// `check` and `rebuild` refuse what is no asof store as opening does: it is
/// not damage they could mend.
#[test]
fn check_refuses_what_is_no_store_as_opening_does() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let noise = dir.path().join("noise.db");
    std::fs::write(&noise, vec![7u8; 5000]).unwrap();
    for (file, says) in [
        (&foreign, "not an asof store"),
        (&noise, "not a readable asof store: file is not a database"),
    ] {
        for command in ["check", "rebuild"] {
            common::asof()
                .arg(command)
                .arg(file)
                .assert()
                .code(2)
                .stderr(predicates::str::contains(says));
        }
    }
}
