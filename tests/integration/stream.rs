//! `asof load` streams JSON Lines (issue 6): the log is written as it is read
//! and replayed back from the store a slice at a time. The store it writes must
//! be the one the in-memory load writes, row for row, wherever the slices fall.

use crate::common;

use asof::store::Store;
use common::{asof, page_size, write};
use rusqlite::Connection;
use std::path::Path;

/// Rows of `table` in one store and not the other, both ways.
fn differing_rows(a: &Path, b: &Path, table: &str, columns: &str) -> i64 {
    let conn = Connection::open(a).unwrap();
    conn.execute("ATTACH ?1 AS other", [b.to_str().unwrap()])
        .unwrap();
    conn.query_row(
        &format!(
            "SELECT (SELECT count(*) FROM (SELECT {columns} FROM main.{table} EXCEPT SELECT {columns} FROM other.{table}))
                  + (SELECT count(*) FROM (SELECT {columns} FROM other.{table} EXCEPT SELECT {columns} FROM main.{table}))"
        ),
        [],
        |r| r.get(0),
    )
    .unwrap()
}

fn assert_same_store(a: &Path, b: &Path) {
    for (table, columns) in [
        ("events", "*"),
        ("citations", "*"),
        ("agents", "*"),
        ("topics", "*"),
        ("versions", "*"),
        ("claims", "*"),
        ("outcomes", "*"),
        ("reconfirmations", "*"),
        ("truths", "*"),
        ("meta", "key"),
        // Derived on a second connection beside the first (decisions.md).
        ("scrub", "*"),
        ("pages", "*"),
        ("page_widths", "*"),
        ("header_packed", "*"),
        // Every table and index, whichever connection built it when (the
        // streaming load builds most of the log's indexes beside the scrub
        // index, after the versions are in).
        ("sqlite_schema", "type, name, tbl_name, sql"),
    ] {
        assert_eq!(
            differing_rows(a, b, table, columns),
            0,
            "{table} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
    assert!(version_rows(a) > 0);
}

#[test]
fn streamed_loads_equal_in_memory_loads_wherever_the_slices_fall() {
    let dir = tempfile::tempdir().unwrap();
    // As generated, the file is in recorded order and replays while it is read.
    // Out of order on its last line, what was replayed so far is dropped and the
    // log is replayed from the store.
    let text = common::generated(6000, 11, 3, 3);
    let unsorted = common::out_of_order(&text);
    for (name, text) in [("sorted", &text), ("unsorted", &unsorted)] {
        let path = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&path, text).unwrap();
        let parsed = asof::dataset::read_path(&path).unwrap();
        let whole = dir.path().join(format!("{name}-whole.db"));
        Store::load(&whole, &parsed, false, &[]).unwrap();
        // Slices of one instant, of a prime number of events, and one slice.
        for slice in [1, 97, 1_000_000] {
            let streamed = dir.path().join(format!("{name}-streamed-{slice}.db"));
            let loaded =
                asof::store::stream::load_jsonl_sliced(&path, &streamed, false, slice).unwrap();
            assert_eq!(loaded.events(), parsed.dataset.events.len());
            assert_eq!(loaded.versions, version_rows(&whole));
            assert_same_store(&whole, &streamed);
            // New stores are written in 16 KiB pages (decisions.md, Store).
            assert_eq!(page_size(&whole), 16384);
            assert_eq!(page_size(&streamed), 16384);
            // A rollback store, its write-ahead log checkpointed and gone.
            let head = std::fs::read(&streamed).unwrap();
            assert_eq!((head[18], head[19]), (1, 1), "{}", streamed.display());
            let mut wal = streamed.clone().into_os_string();
            wal.push("-wal");
            assert!(!Path::new(&wal).exists());
        }
    }
    // Nothing written on the way (the new store, the pages written apart) is left.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// How many versions a store file holds.
fn version_rows(store: &Path) -> usize {
    Connection::open(store)
        .unwrap()
        .query_row("SELECT count(*) FROM versions", [], |r| r.get::<_, i64>(0))
        .unwrap() as usize
}

/// References to events later in the file (recorded earlier) are checked when
/// the file ends; a retraction naming only such an assertion gets its agent.
#[test]
fn references_forward_in_the_file_load_and_fill_the_retractions_agent() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"{"asof":1,"incident":{"id":"i","title":"t"},"agents":[{"id":"a1","name":"A"}],"topics":[{"id":"t1","question":"q?"}]}
{"retract":{"id":"R1","assertion":"B1","recorded_at":"2026-01-01T03:00:00Z","because":["E2"]}}
{"evidence":{"id":"E2","kind":"log","source":"s","locator":"l","observed_at":"2026-01-01T02:00:00Z","recorded_at":"2026-01-01T02:30:00Z","summary":"x"}}
{"believe":{"id":"B1","agent":"a1","topic":"t1","claim":"c","valid_from":"2026-01-01T00:00:00Z","recorded_at":"2026-01-01T02:00:00Z","supported_by":["E1"]}}
{"evidence":{"id":"E1","kind":"log","source":"s","locator":"l","observed_at":"2026-01-01T01:00:00Z","recorded_at":"2026-01-01T01:00:00Z","summary":"x"}}
"#;
    let path = write(dir.path(), "forward.jsonl", text);
    let db = dir.path().join("forward.db");
    asof()
        .args(["load", path.to_str().unwrap(), "--db", db.to_str().unwrap()])
        .assert()
        .success();
    let conn = Connection::open(&db).unwrap();
    let agent: String = conn
        .query_row("SELECT agent FROM events WHERE id = 'R1'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(agent, "a1");
    let closed: Vec<String> = Store::open(&db)
        .unwrap()
        .versions()
        .unwrap()
        .iter()
        .filter(|v| &*v.assertion == "B1")
        .filter_map(|v| v.closed.as_ref().map(|c| c.event.to_string()))
        .collect();
    assert_eq!(closed, ["R1"]);
    let parsed = asof::dataset::read_path(&path).unwrap();
    let whole = dir.path().join("whole.db");
    Store::load(&whole, &parsed, false, &[]).unwrap();
    assert_same_store(&whole, &db);

    // The same file with B1 recorded after R1: the retraction matches nothing
    // when replay reaches it, reported at its line, and no store is left.
    let late = text.replace(
        r#""recorded_at":"2026-01-01T02:00:00Z","supported_by""#,
        r#""recorded_at":"2026-01-01T04:00:00Z","supported_by""#,
    );
    let path = write(dir.path(), "late.jsonl", &late);
    let db = dir.path().join("late.db");
    let out = asof()
        .args(["load", path.to_str().unwrap(), "--db", db.to_str().unwrap()])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(":2: event R1: the retraction matches no belief held at its recorded time"),
        "{stderr}"
    );
    assert!(!db.exists());
}

/// `asof validate` checks JSON Lines in recorded order as they stream (and
/// replays them beside the reading); others are checked whole. Both report the
/// same counts, and a retraction that matches nothing at its line.
#[test]
fn validate_streams_files_in_recorded_order_and_reports_what_load_would() {
    let dir = tempfile::tempdir().unwrap();
    let text = common::generated(3000, 5, 2, 9);
    let unsorted = common::out_of_order(&text);
    for (name, text) in [("sorted.jsonl", &text), ("unsorted.jsonl", &unsorted)] {
        let path = write(dir.path(), name, text);
        let parsed = asof::dataset::read_path(&path).unwrap();
        let replay = asof::engine::replay(&parsed.dataset.header, &parsed.dataset.events);
        let out = asof()
            .args(["validate", path.to_str().unwrap()])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let out = String::from_utf8(out).unwrap();
        let expected = format!(
            "valid: {} events ({} evidence, {} assertions, {} retractions), 2 agents, 5 topics, {} belief versions",
            parsed.dataset.events.len(),
            parsed
                .dataset
                .events
                .iter()
                .filter(|e| e.kind() == asof::model::EventKind::Evidence)
                .count(),
            parsed
                .dataset
                .events
                .iter()
                .filter(|e| e.kind() == asof::model::EventKind::Believe)
                .count(),
            parsed
                .dataset
                .events
                .iter()
                .filter(|e| e.kind() == asof::model::EventKind::Retract)
                .count(),
            replay.versions.len()
        );
        assert!(out.contains(&expected), "{name}: {out} lacks {expected}");
    }

    let nothing_held = r#"{"asof":1,"incident":{"id":"i","title":"t"},"agents":[{"id":"a1","name":"A"}],"topics":[{"id":"t1","question":"q?"}]}
{"evidence":{"id":"E1","kind":"log","source":"s","locator":"l","observed_at":"2026-01-01T01:00:00Z","recorded_at":"2026-01-01T01:00:00Z","summary":"x"}}

{"retract":{"id":"R1","agent":"a1","topic":"t1","recorded_at":"2026-01-01T02:00:00Z","because":["E1"]}}
"#;
    let path = write(dir.path(), "nothing-held.jsonl", nothing_held);
    let out = asof()
        .args(["validate", path.to_str().unwrap()])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(
            "nothing-held.jsonl:4: event R1: the retraction matches no belief held at its recorded time"
        ),
        "{stderr}"
    );
}

/// SQLite takes the name of a store to attach as UTF-8: in a directory named
/// otherwise, a load still moves in the pages computed beside it (attached by
/// a URI), and the store is the same.
#[cfg(unix)]
#[test]
fn a_load_into_a_directory_not_named_in_utf8_writes_the_same_store() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let odd = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"not-utf8-\xff"));
    std::fs::create_dir(&odd).unwrap();
    let path = dir.path().join("sorted.jsonl");
    std::fs::write(&path, common::generated(3000, 7, 2, 5)).unwrap();
    let parsed = asof::dataset::read_path(&path).unwrap();
    let whole = dir.path().join("whole.db");
    Store::load(&whole, &parsed, false, &[]).unwrap();
    let streamed = odd.join("streamed.db");
    asof::store::stream::load_jsonl_sliced(&path, &streamed, false, 97).unwrap();
    // Compared under a name the comparison can attach.
    let copy = dir.path().join("streamed-copy.db");
    std::fs::copy(&streamed, &copy).unwrap();
    assert_same_store(&whole, &copy);
    let left: Vec<_> = std::fs::read_dir(&odd)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("streamed.db")]);
}
