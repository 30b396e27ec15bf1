//! The version pages (design.md §9, crates/asof-store/src/store/pages.rs), which `believed(T′)` for
//! all topics reads instead of the version rows: at the edges of every
//! version's recorded interval its answers equal the rows' answer and a
//! brute-force scan of every version, for stores written by a load, a
//! rebuild and a fork; `check` finds a tampered page and `rebuild` mends it.
//! (The follow tests compare every table, the pages among them, with a fresh
//! load of the lines so far.)

use crate::common;

use asof::model::{EventBody, Version};
use asof::query::{self, Filter};
use asof::store::Store;
use asof::time::OPEN;
use common::asof;
use proptest::prelude::*;
use std::path::Path;

/// The ids of the versions held at `at` (valid at `about`, of `agent`),
/// worked out from every stored version.
fn brute_force(versions: &[Version], at: i64, about: Option<i64>, agent: Option<&str>) -> Vec<u64> {
    let mut ids: Vec<u64> = versions
        .iter()
        .filter(|v| v.recorded_at <= at && at < v.superseded_at)
        .filter(|v| about.is_none_or(|t| v.valid.from <= t && t < v.valid.to))
        .filter(|v| agent.is_none_or(|a| &*v.agent == a))
        .map(|v| v.id)
        .collect();
    ids.sort_unstable();
    ids
}

/// At the edges of every version's recorded interval (and beside them),
/// all-topics answers from the pages equal the rows' answer (beliefs, their
/// citations and order) and the brute-force held set; at every fifth edge
/// also with a valid time and an agent.
fn assert_pages(db: &Path, what: &str) {
    asof().arg("check").arg(db).assert().success();
    let store = Store::open(db).unwrap();
    let versions = store.versions().unwrap();
    let mut edges: Vec<i64> = versions
        .iter()
        .flat_map(|v| [v.recorded_at, v.superseded_at])
        .filter(|&t| t != OPEN)
        .flat_map(|t| [t - 1, t, t + 1])
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let abouts: Vec<Option<i64>> = std::iter::once(None)
        .chain(versions.iter().take(3).map(|v| Some(v.valid.from)))
        .collect();
    let agents: Vec<Option<String>> = std::iter::once(None)
        .chain(store.header().agents.first().map(|a| Some(a.id.clone())))
        .collect();
    let mut held_somewhere = false;
    for (n, &at) in edges.iter().enumerate() {
        for (i, &about) in abouts.iter().enumerate() {
            for (j, agent) in agents.iter().enumerate() {
                if (i, j) != (0, 0) && n % 5 != 0 {
                    continue;
                }
                let filter = Filter {
                    agent: agent.clone(),
                    topic: None,
                };
                let pages = query::believed(&store, at, about, &filter).unwrap();
                let rows = query::believed_by_rows(&store, at, about, &filter).unwrap();
                assert_eq!(
                    pages, rows,
                    "{what}: at {at}, about {about:?}, agent {agent:?}"
                );
                let mut ids: Vec<u64> = pages.iter().map(|b| b.version.id).collect();
                ids.sort_unstable();
                assert_eq!(
                    ids,
                    brute_force(&versions, at, about, agent.as_deref()),
                    "{what}: held at {at}, about {about:?}, agent {agent:?}"
                );
                held_somewhere |= !ids.is_empty();
            }
        }
    }
    assert!(
        versions.is_empty() || held_somewhere,
        "{what}: some version is held at some edge"
    );
}

#[test]
fn the_demo_and_its_fork_answer_from_their_pages() {
    common::demo_and_its_fork(assert_pages);
}

/// A log long enough that lifespans fill several pages each (64 versions
/// to a page), so an answer crosses page boundaries.
#[test]
fn answers_cross_page_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = common::write(dir.path(), "gen.jsonl", &common::generated(1500, 2, 2, 7));
    let db = dir.path().join("gen.db");
    common::load(&jsonl, &db);
    let pages: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT count(*) FROM pages GROUP BY lifespan ORDER BY count(*) DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(pages >= 3, "one lifespan spans {pages} pages");
    assert_pages(&db, "a long log");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn load_rebuild_and_fork_answer_from_pages_as_from_rows(
        seed in 0u64..10_000,
        events in 50u64..400,
        topics in 1u32..6,
        agents in 1u32..4,
        pick in any::<usize>(),
    ) {
        let forked = common::load_rebuild_and_fork((events, topics, agents, seed), pick, assert_pages);
        prop_assume!(forked);
    }
}

fn pages(db: &Path) -> Vec<(i64, i64, Vec<u8>)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT lifespan, bucket, data FROM pages ORDER BY lifespan, bucket")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A page whose bytes changed but still decode, one cut short, one gone, one
/// too many and a width changed: `check` finds each and `rebuild` writes the
/// pages again.
#[test]
fn check_detects_a_tampered_page() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::load_demo(dir.path());
    let original = pages(&db);
    assert!(original.len() > 1);
    let found = "the version pages (table pages) differ from a fresh computation";
    let first = "(SELECT lifespan FROM pages ORDER BY lifespan, bucket LIMIT 1)";
    let last = "(SELECT lifespan FROM pages ORDER BY lifespan DESC, bucket DESC LIMIT 1)";
    for (sql, found) in [
        // Two pages' bytes swapped: both still decode.
        (
            format!(
                "UPDATE pages SET data = (SELECT data FROM pages ORDER BY lifespan DESC, bucket DESC LIMIT 1)
                  WHERE lifespan = {first}"
            ),
            found,
        ),
        (
            format!(
                "UPDATE pages SET data = CAST(substr(data, 1, length(data) - 1) AS BLOB) WHERE lifespan = {last}"
            ),
            found,
        ),
        (format!("DELETE FROM pages WHERE lifespan = {first}"), found),
        (
            format!(
                "INSERT INTO pages SELECT lifespan, bucket + 1000000, data FROM pages WHERE lifespan = {last}"
            ),
            found,
        ),
        // Pages written at one width, checked at another.
        (
            format!("UPDATE page_widths SET shift = shift + 1 WHERE lifespan = {last}"),
            found,
        ),
        (
            "UPDATE page_widths SET shift = 99 WHERE lifespan = 1".to_owned(),
            "the page width of lifespan 1 is 99; run `asof rebuild`",
        ),
    ] {
        common::tamper(&db, &sql);
        common::check_finds_then_rebuild_repairs(&db, &[found], 1);
        assert_eq!(pages(&db), original, "rebuild writes the same pages");
    }
    // One bit of one byte.
    let (lifespan, bucket, mut data) = original[0].clone();
    let end = data.len() - 1;
    data[end] ^= 1;
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE pages SET data = ?3 WHERE lifespan = ?1 AND bucket = ?2",
            rusqlite::params![lifespan, bucket, data],
        )
        .unwrap();
    common::check_finds_then_rebuild_repairs(&db, &[found], 1);
    assert_eq!(pages(&db), original, "rebuild writes the same pages");
}

/// A page that no longer decodes, or a width out of range, is a damaged
/// store at the command line (exit 2, a sentence naming the pages and the
/// remedy), never a panic.
#[test]
fn a_page_that_does_not_decode_is_a_damaged_store() {
    for (sql, says) in [
        (
            "UPDATE pages SET data = CAST(substr(data, 1, 20) AS BLOB) WHERE lifespan = 64",
            "not a readable asof store: a version page (lifespan 64) does not decode; run `asof rebuild`",
        ),
        (
            "UPDATE page_widths SET shift = -1 WHERE lifespan = 64",
            "not a readable asof store: the page width of lifespan 64 is -1; run `asof rebuild`",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let db = common::load_demo(dir.path());
        common::tamper(&db, sql);
        asof()
            .args(["believed"])
            .arg(&db)
            .args(["--at", "2026-03-02T12:00:00Z"])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(format!(
                "asof: {}: {says}",
                db.display()
            )));
    }
}

/// A version row that does not decode is a damaged store too, named with
/// its path (exit 2), by every command that reads the row.
#[test]
fn a_version_row_that_does_not_decode_names_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::load_demo(dir.path());
    common::tamper(&db, "UPDATE versions SET rest = x'ff'");
    let says = format!(
        "asof: {}: not a readable asof store: a version's packed fields (rest) do not decode",
        db.display()
    );
    for args in [
        &[
            "believed",
            "--topic",
            "root-cause",
            "--at",
            "2026-03-02T12:00:00Z",
        ][..],
        &["history", "--topic", "root-cause"],
        &["check"],
    ] {
        asof()
            .arg(args[0])
            .arg(&db)
            .args(&args[1..])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicates::str::contains(says.clone()));
    }
}

/// A fork rewrites only the pages of the versions it replaced: the others
/// are the parent's, byte for byte, and its pages equal a fresh computation.
#[test]
fn a_fork_patches_only_the_pages_it_touches() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = common::write(
        dir.path(),
        "gen.jsonl",
        &common::generated(4000, 200, 2, 11),
    );
    let db = dir.path().join("gen.db");
    common::load(&jsonl, &db);
    let log = Store::open(&db).unwrap().log().unwrap();
    let evidence = log
        .events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::Evidence(x) => Some(x.id.clone()),
            _ => None,
        })
        .unwrap();
    let fork = dir.path().join("fork.db");
    common::fork(&db, &evidence, &fork);
    asof().arg("check").arg(&fork).assert().success();
    let (before, after) = (pages(&db), pages(&fork));
    let kept = after.iter().filter(|p| before.contains(p)).count();
    assert!(
        kept * 2 > after.len() && kept < after.len(),
        "{kept} of {} pages kept from the parent's {}",
        after.len(),
        before.len()
    );
    // check: the patched pages equal a fresh computation, whose answers
    // the tests above hold to the rows' and a brute-force scan.
}
