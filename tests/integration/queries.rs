//! The query functions on the demo store: `answer`, `current`, `changes`.

use crate::common;

use asof::cli::source;
use asof::query::{self, Belief, Filter};
use asof::time::parse;

fn at(t: &str) -> i64 {
    parse(t).unwrap()
}

#[test]
fn answer_follows_the_triage_agents_changes_of_mind() {
    let store = source::demo().unwrap();
    let answer = |t: &str| query::answer(&store, "triage", "root-cause", at(t)).unwrap();
    assert_eq!(answer("2026-03-02T09:19:59Z"), None);
    assert_eq!(
        answer("2026-03-02T09:20:00Z").as_deref(),
        Some("Payments DB primary overloaded")
    );
    assert_eq!(
        answer("2026-03-03T09:00:00Z"),
        None,
        "retracted, nothing else held"
    );
    assert_eq!(
        answer("2026-03-03T11:00:00Z").as_deref(),
        Some("Expired TLS certificate on the card-network gateway")
    );
    assert_eq!(
        answer("2026-03-03T12:10:00Z").as_deref(),
        Some("Bad deploy of checkout-service v4.12")
    );
    assert_eq!(answer("2026-03-04T10:00:00Z"), None);
    assert_eq!(
        answer("2026-03-16T12:00:00Z").as_deref(),
        Some("Expired TLS certificate on the card-network gateway")
    );
}

#[test]
fn answer_prefers_the_greatest_valid_from() {
    // After E28 the triage agent holds six customer-impact versions, from
    // [08:58, 09:05) (recorded last, on 03-06) to [03-05 11:20, ∞).
    let store = source::demo().unwrap();
    let held = query::believed(
        &store,
        at("2026-03-07T00:00:00Z"),
        None,
        &Filter {
            agent: Some("triage".into()),
            topic: Some("customer-impact".into()),
        },
    )
    .unwrap();
    assert_eq!(held.len(), 6);
    let impact = query::answer(
        &store,
        "triage",
        "customer-impact",
        at("2026-03-07T00:00:00Z"),
    )
    .unwrap();
    assert_eq!(
        impact.as_deref(),
        Some("Recovered: failure rate at baseline"),
        "the latest-starting version is the working answer"
    );
}

#[test]
fn current_is_believed_now_about_now() {
    let store = source::demo().unwrap();
    let now = asof::time::now();
    let current = query::current(&store, now, &Filter::default()).unwrap();
    assert_eq!(
        current,
        query::believed(&store, now, Some(now), &Filter::default()).unwrap()
    );
    let claims: Vec<&str> = current.iter().map(|b| &*b.version.claim).collect();
    assert_eq!(
        claims,
        vec![
            "Expired TLS certificate on the card-network gateway",
            "Expired TLS certificate on the card-network gateway",
            "Recovered: failure rate at baseline",
            "SEV3",
            "SEV3",
        ]
    );
}

#[test]
fn changes_is_half_open_on_the_left() {
    let store = source::demo().unwrap();
    let c = query::changes(
        &store,
        at("2026-03-03T12:10:00Z"),
        at("2026-03-03T12:15:00Z"),
        &Filter::default(),
    )
    .unwrap();
    let created: Vec<&str> = c.created.iter().map(|b| &*b.version.claim).collect();
    assert_eq!(
        created,
        vec!["~30% of checkouts failing", "~18% of checkouts failing"],
        "12:10 excluded, 12:15 included"
    );
}

/// The timeline (the TUI's data: the scrub index, rows read on demand) and the
/// SQL query must agree everywhere.
#[test]
fn the_timeline_answers_exactly_like_sql() {
    use asof::query::timeline::Timeline;
    let stores: [fn() -> asof::store::Store; 2] = [
        || source::demo().unwrap(),
        || common::generated_store(8000, 12, 3, 5),
    ];
    for open in stores {
        let store = open();
        let timeline = Timeline::load(open()).unwrap();
        let (first, last) = timeline.span().unwrap();
        let step = ((last - first) / 97).max(1);
        let agents: Vec<String> = store.header().agents.iter().map(|a| a.id.clone()).collect();
        let topics: Vec<String> = store.header().topics.iter().map(|t| t.id.clone()).collect();
        for i in 0..110i64 {
            let at = first - step + i * step;
            let about = first - 2 * step + (i * 37 % 110) * step;
            for filter in [
                Filter::default(),
                Filter {
                    agent: None,
                    topic: Some(topics[i as usize % topics.len()].clone()),
                },
                Filter {
                    agent: Some(agents[i as usize % agents.len()].clone()),
                    topic: None,
                },
            ] {
                let sql = query::believed(&store, at, Some(about), &filter).unwrap();
                let mem: Vec<Belief> = timeline
                    .believed(at, Some(about), &filter)
                    .iter()
                    .map(|b| (**b).clone())
                    .collect();
                assert_eq!(mem, sql, "believed(at {at}, about {about})");
                let sql = query::believed(&store, at, None, &filter).unwrap();
                let mem: Vec<Belief> = timeline
                    .believed(at, None, &filter)
                    .iter()
                    .map(|b| (**b).clone())
                    .collect();
                assert_eq!(mem, sql, "believed(at {at})");
            }
            let (agent, topic) = (
                &agents[i as usize % agents.len()],
                &topics[i as usize % topics.len()],
            );
            assert_eq!(
                timeline.answer(agent, topic, at),
                query::answer(&store, agent, topic, at).unwrap()
            );
        }
    }
}

/// `believed` through the timeline's checkpoints (short strides here, so a
/// small log has many) equals the SQL scan at the edges of every version's
/// recorded interval, where an off-by-one in a checkpoint would show.
#[test]
fn checkpoint_answers_equal_the_full_scan_at_every_version_edge() {
    use asof::query::timeline::Timeline;
    let open = || common::generated_store(1500, 5, 2, 21);
    let store = open();
    for stride in [3, 64] {
        let timeline = Timeline::load_computing_index(open(), stride).unwrap();
        let mut edges: Vec<i64> = store
            .versions()
            .unwrap()
            .iter()
            .flat_map(|v| [v.recorded_at, v.superseded_at])
            .filter(|&t| t != asof::time::OPEN)
            .flat_map(|t| [t - 1, t])
            .collect();
        edges.sort_unstable();
        edges.dedup();
        assert!(edges.len() > 1000, "{} edges", edges.len());
        for at in edges {
            let sql = query::believed(&store, at, None, &Filter::default()).unwrap();
            let mem: Vec<Belief> = timeline
                .believed(at, None, &Filter::default())
                .iter()
                .map(|b| (**b).clone())
                .collect();
            assert_eq!(mem, sql, "believed(at {at}), stride {stride}");
        }
    }
}

/// `believed(T′)` for all topics reads one range of the versions table per
/// lifespan, and `changes` one per lifespan for the closed side: at the edges of
/// versions' recorded intervals (where an off-by-one in a range would show) both
/// must return exactly what a scan of every version returns.
#[test]
fn lifespan_ranges_find_exactly_the_versions_a_full_scan_finds() {
    let store = common::generated_store(4000, 9, 2, 11);
    let all = store.versions().unwrap();
    let lifespans: std::collections::BTreeSet<u32> = all
        .iter()
        .filter(|v| v.superseded_at != asof::time::OPEN)
        .map(|v| 64 - (v.superseded_at - v.recorded_at).leading_zeros())
        .collect();
    assert!(lifespans.len() > 10, "lifespans {lifespans:?}");
    let ids = |beliefs: &[query::Belief]| {
        let mut ids: Vec<u64> = beliefs.iter().map(|b| b.version.id).collect();
        ids.sort_unstable();
        ids
    };
    let mut instants = Vec::new();
    for v in all.iter().step_by(all.len() / 60) {
        instants.extend([v.recorded_at - 1, v.recorded_at]);
        if v.superseded_at != asof::time::OPEN {
            instants.extend([v.superseded_at - 1, v.superseded_at]);
        }
    }
    for &at in &instants {
        let expected: Vec<u64> = all
            .iter()
            .filter(|v| v.recorded_at <= at && at < v.superseded_at)
            .map(|v| v.id)
            .collect();
        let got = query::believed(&store, at, None, &Filter::default()).unwrap();
        assert_eq!(ids(&got), expected, "believed(at {at})");
    }
    for pair in instants.windows(2) {
        let (after, until) = (pair[0].min(pair[1]), pair[0].max(pair[1]));
        let c = query::changes(&store, after, until, &Filter::default()).unwrap();
        let window = |t: i64| after < t && t <= until;
        let created: Vec<u64> = all
            .iter()
            .filter(|v| window(v.recorded_at))
            .map(|v| v.id)
            .collect();
        let closed: Vec<u64> = all
            .iter()
            .filter(|v| window(v.superseded_at))
            .map(|v| v.id)
            .collect();
        assert_eq!(ids(&c.created), created, "created in ({after}, {until}]");
        assert_eq!(ids(&c.closed), closed, "closed in ({after}, {until}]");
    }
}

/// A long answer (the rows counted into their (topic, agent) pairs, then
/// compared within each) comes in reading order: topics and agents as the
/// header lists them, then valid start, recorded time and id; and every piece
/// of one assertion carries that assertion's citations.
#[test]
fn a_long_answer_is_in_reading_order_with_each_assertions_citations() {
    let store = common::generated_store(6000, 20, 4, 3);
    let header = store.header();
    let place = |ids: Vec<&str>, id: &str| ids.iter().position(|i| *i == id).unwrap();
    let topics = || {
        header
            .topics
            .iter()
            .map(|t| t.id.as_str())
            .collect::<Vec<_>>()
    };
    let agents = || {
        header
            .agents
            .iter()
            .map(|a| a.id.as_str())
            .collect::<Vec<_>>()
    };
    let log = store.log().unwrap();
    let cites: std::collections::HashMap<&str, &Vec<String>> = log
        .events
        .iter()
        .filter_map(|e| match &e.body {
            asof::model::EventBody::Believe(a) => Some((a.id.as_str(), &a.supported_by)),
            _ => None,
        })
        .collect();
    let (first, last) = query::recorded_span(&store).unwrap().unwrap();
    let mut longest = 0;
    for i in 1..40 {
        let at = first + (last - first) * i / 40;
        let got = query::believed(&store, at, None, &Filter::default()).unwrap();
        longest = longest.max(got.len());
        let mut expected = got.clone();
        expected.sort_by_key(|b| {
            let v = &b.version;
            (
                place(topics(), &v.topic),
                place(agents(), &v.agent),
                v.valid.from,
                v.recorded_at,
                v.id,
            )
        });
        assert_eq!(got, expected, "believed(at {at}) out of reading order");
        for b in &got {
            assert_eq!(
                &*b.supported_by,
                cites[&*b.version.assertion].as_slice(),
                "version {} cites",
                b.version.id
            );
        }
    }
    assert!(
        longest > 200,
        "answers long enough to be counted into pairs: {longest}"
    );
}

/// Every time says how it was read (design.md §8): a clock time alone is read on
/// the day of the store's last event (not today), a date alone at its start,
/// an instant after the last event says so; the sentence goes to standard
/// error, so the answer on standard output — JSON included — is unchanged.
#[test]
fn a_time_without_a_date_is_read_on_the_last_events_day_and_said() {
    let out = common::asof()
        .args([
            "believed", "--at", "09:00", "--topic", "severity", "--format", "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        "asof: 09:00 → 2026-03-16T09:00:00Z (on the day of the last event, 2026-03-16)"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["as_of"], "2026-03-16T09:00:00Z");
    let out = common::asof()
        .args(["answer", "--topic", "severity", "--at", "2026-03-03"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("2026-03-03 → 2026-03-03T23:59:59.999999Z (the end of that day)")
    );
    let out = common::asof()
        .args(["evidence", "--at", "2026-04-01T00:00:00Z"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("2026-04-01T00:00:00Z is 15d 13h after the last event (03-16 10:10)")
    );
    let out = common::asof()
        .args(["believed", "--at", "2026-03-04T00:00:00Z"])
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "a whole instant inside the log: nothing to say"
    );
}

/// Columns mean what they say (design.md §8): SINCE is when the agent began
/// holding the claim — a split piece of B6 (re-inserted at 03-03 12:15) has
/// been held since B6 at 03-02 10:30 — and LAG runs from the end of the
/// observed interval (E14 saw [03-02 09:05, 03-03 10:00) and arrived at
/// 10:10: ten minutes late, not a day).
#[test]
fn since_is_the_origin_assertion_and_lag_the_end_of_what_was_observed() {
    let out = common::asof()
        .args([
            "believed",
            "--at",
            "2026-03-03T13:00:00Z",
            "--topic",
            "customer-impact",
            "--agent",
            "triage",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text
        .lines()
        .find(|l| l.contains("~30% of checkouts failing"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        row.contains("[2026-03-02T10:20:00Z, 2026-03-03T11:40:00Z)"),
        "{row}"
    );
    assert!(row.contains("2026-03-02T10:30:00Z"), "SINCE is B6's: {row}");
    assert!(
        !row.contains("2026-03-03T12:15:00Z"),
        "not the split's: {row}"
    );
    let v = common::stdout_json(common::asof().args(["evidence", "--format", "json"]));
    let e14 = v["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "E14")
        .unwrap();
    assert_eq!(e14["lag_from_end_ms"], 10 * 60 * 1000);
    assert_eq!(
        e14["lag_ms"],
        (25 * 60 + 5) * 60 * 1000,
        "from the start, as before"
    );
}
