//! `asof ask` (design.md §8) on the bundled demo: a table of questions, each
//! with the query it must be read into and something its answer must say;
//! each answer's JSON must equal that query's own JSON; and the questions it
//! must refuse, with why.

use crate::common;

use common::asof;
use serde_json::Value;

/// What a question must become.
enum Expect {
    /// This exact query, and a phrase of the text answer.
    Query(&'static str, &'static str),
    /// A query beginning so, at an instant within a minute of `at` (now-ish).
    Near(&'static str, fn() -> i64),
    /// Refused (exit 2) with this phrase.
    Refused(&'static str),
}
use Expect::*;

fn now() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

const TABLE: &[(&str, Expect)] = &[
    // what was the TOPIC (at TIME)? → answer
    (
        "what was the root cause at 2026-03-03 12:00?",
        Query(
            "asof answer --topic root-cause --at 2026-03-03T12:00:00Z",
            "conflicted: triage says Expired TLS certificate",
        ),
    ),
    (
        "what was the root cause at 2026-03-04 12:00?",
        Query(
            "asof answer --topic root-cause --at 2026-03-04T12:00:00Z",
            "answered: Expired TLS certificate on the card-network gateway",
        ),
    ),
    (
        "What was the root cause at 2026-03-03T12:00:00Z",
        Query(
            "asof answer --topic root-cause --at 2026-03-03T12:00:00Z",
            "B9         E7        Card-network status page",
        ),
    ),
    // A date alone: the end of that day, said, and the changes during it.
    (
        "what was the root cause on 2026-03-03?",
        Query(
            "asof answer --topic root-cause --at 2026-03-03T23:59:59.999999Z",
            "time read: 2026-03-03 → 2026-03-03T23:59:59.999999Z (the end of that day; the changes during it follow)",
        ),
    ),
    (
        "what was the root cause on 2026-03-03?",
        Query(
            "asof answer --topic root-cause --at 2026-03-03T23:59:59.999999Z",
            "Changes during that day:",
        ),
    ),
    // A clock time alone: on the last event's day, said.
    (
        "what was the severity at 12:00?",
        Query(
            "asof answer --topic severity --at 2026-03-16T12:00:00Z",
            "time read: 12:00 → 2026-03-16T12:00:00Z (on the day of the last event, 2026-03-16), 1h 50m after the last event (03-16 10:10)",
        ),
    ),
    (
        "what is the root-cause as of 2026-03-02 09:30?",
        Query(
            "asof answer --topic root-cause --at 2026-03-02T09:30:00Z",
            "Payments DB primary overloaded",
        ),
    ),
    (
        "what was the severity at 2026-03-03 12:00",
        Query(
            "asof answer --topic severity --at 2026-03-03T12:00:00Z",
            "severity",
        ),
    ),
    (
        "what was the customer impact at 2026-03-05 12:00?",
        Query(
            "asof answer --topic customer-impact --at 2026-03-05T12:00:00Z",
            "customer-impact",
        ),
    ),
    (
        "what was the affected_regions at 2026-03-03 12:00:30?",
        Query(
            "asof answer --topic affected-regions --at 2026-03-03T12:00:30Z",
            "affected-regions",
        ),
    ),
    (
        "  WHAT   WAS THE ROOT CAUSE AT 2026-03-03 12:00 ?  ",
        Query(
            "asof answer --topic root-cause --at 2026-03-03T12:00:00Z",
            "conflicted",
        ),
    ),
    (
        "what was the root cause now?",
        Near("asof answer --topic root-cause --at ", now),
    ),
    (
        "what was the root cause?",
        Near("asof answer --topic root-cause --at ", now),
    ),
    // Yesterday and today are the log's: the last event's day and the one before.
    (
        "what was the root cause yesterday 14:00?",
        Query(
            "asof answer --topic root-cause --at 2026-03-15T14:00:00Z",
            "(yesterday: the day before the last event's, 2026-03-15)",
        ),
    ),
    (
        "what was the root cause at today 09:00?",
        Query(
            "asof answer --topic root-cause --at 2026-03-16T09:00:00Z",
            "(today: the day of the last event, 2026-03-16)",
        ),
    ),
    // what did AGENT believe (about TOPIC) (at TIME)? → believed
    (
        "what did triage believe at 2026-03-03 12:00?",
        Query(
            "asof believed --at 2026-03-03T12:00:00Z --agent triage",
            "Expired TLS certificate",
        ),
    ),
    (
        "what did the triage agent believe about root cause at 2026-03-03 12:00?",
        Query(
            "asof believed --at 2026-03-03T12:00:00Z --agent triage --topic root-cause",
            "B18",
        ),
    ),
    (
        "What did Infrastructure agent think about the severity at 2026-03-04 09:00?",
        Query(
            "asof believed --at 2026-03-04T09:00:00Z --agent infra --topic severity",
            "infra",
        ),
    ),
    (
        "what did infra hold about root_cause on 2026-03-05?",
        Query(
            "asof believed --at 2026-03-05T23:59:59.999999Z --agent infra --topic root-cause",
            "Expired TLS certificate",
        ),
    ),
    ("what did triage believe?", Near("asof believed --at ", now)),
    (
        "what did triage believe about root cause yesterday 09:15?",
        Query(
            "asof believed --at 2026-03-15T09:15:00Z --agent triage --topic root-cause",
            "Expired TLS certificate",
        ),
    ),
    // when did AGENT change its mind about TOPIC? → history
    (
        "when did triage change its mind about the root cause?",
        Query(
            "asof history --topic root-cause --agent triage",
            "retracted by R2",
        ),
    ),
    (
        "when did infra change their mind about severity?",
        Query("asof history --topic severity --agent infra", "severity"),
    ),
    (
        "When did the Infrastructure agent change its mind about customer impact?",
        Query(
            "asof history --topic customer-impact --agent infra",
            "customer-impact",
        ),
    ),
    // why did AGENT believe CLAIM? → the assertions, rationale, evidence
    (
        "why did triage believe TLS?",
        Query(
            "the assertions of triage whose claim contains \"TLS\", with their rationale and evidence",
            "because: Gateway logs show certificate errors since the start",
        ),
    ),
    (
        "why did infra believe \"provider outage\"?",
        Query(
            "the assertions of infra whose claim contains \"provider outage\", with their rationale and evidence",
            "Card-network provider outage",
        ),
    ),
    (
        "why did triage think that DB primary overloaded",
        Query(
            "the assertions of triage whose claim contains \"DB primary overloaded\", with their rationale and evidence",
            "on E1",
        ),
    ),
    // what misled AGENT? → influence
    (
        "what misled triage?",
        Query("asof influence --agent triage", "RANK"),
    ),
    ("what misled the agents?", Query("asof influence", "E26")),
    (
        "what misled triage about the root cause?",
        Query("asof influence --agent triage --topic root-cause", "E15"),
    ),
    (
        "what misled infra",
        Query("asof influence --agent infra", "TRUTH SHIFT"),
    ),
    // refused
    (
        "hello",
        Refused("is not a question asof understands; ask one of:"),
    ),
    ("", Refused("what was the TOPIC [at TIME | now]?")),
    (
        "what did nobody believe at 2026-03-03 12:00?",
        Refused("no agent `nobody` in this store; its agents: triage, infra"),
    ),
    (
        "what was the weather at 2026-03-03 12:00?",
        Refused("no topic `weather` in this store; its topics: root-cause"),
    ),
    (
        "what was the root cause at teatime?",
        Refused("`teatime` is not a time"),
    ),
    (
        "what was the root cause yesterday?",
        Refused("say the time of day too"),
    ),
    (
        "what was the root cause at 2026-03-03T12:00:00?",
        Refused("2026-03-03T12:00:00"),
    ),
    (
        "why did triage believe unicorns?",
        Refused("triage never asserted a claim containing `unicorns`"),
    ),
];

fn run(args: &[&str]) -> std::process::Output {
    asof().args(args).output().expect("asof runs")
}

fn json(args: &[&str]) -> Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

#[test]
fn the_table_of_questions() {
    assert!(TABLE.len() >= 30);
    for (question, expect) in TABLE {
        let out = run(&["ask", question]);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        match expect {
            Refused(says) => {
                assert_eq!(
                    out.status.code(),
                    Some(2),
                    "{question:?} is refused: {stdout}{stderr}"
                );
                assert!(stderr.contains(says), "{question:?}: {stderr}");
                assert!(!stderr.contains("panicked"), "{stderr}");
            }
            Query(query, says) => {
                assert!(out.status.success(), "{question:?}: {stderr}");
                assert_eq!(
                    stdout.lines().next(),
                    Some(&*format!("→ {query}")),
                    "{question:?}"
                );
                assert!(
                    stdout.contains(says),
                    "{question:?} says {says:?}:\n{stdout}"
                );
            }
            Near(start, at) => {
                assert!(out.status.success(), "{question:?}: {stderr}");
                let v = json(&["ask", question, "--format", "json"]);
                let query = v["query"].as_str().unwrap();
                assert!(query.starts_with(start), "{question:?}: {query}");
                let asked = v["parsed"]["at"].as_i64().unwrap();
                assert!(
                    (asked - at()).abs() < 60_000_000,
                    "{question:?}: at {asked}"
                );
            }
        }
    }
}

/// Every answer is its query's own answer: the JSON of `ask` holds exactly
/// what the query it names prints with `--format json`.
#[test]
fn each_answer_is_the_json_of_the_query_it_names() {
    for (question, expect) in TABLE {
        let Query(query, _) = expect else { continue };
        let Some(command) = query.strip_prefix("asof ") else {
            continue;
        };
        let v = json(&["ask", question, "--format", "json"]);
        assert_eq!(v["question"], *question);
        assert_eq!(v["query"], *query);
        let mut result = v["result"].clone();
        if command.starts_with("answer") {
            let evidence = result
                .as_object_mut()
                .and_then(|o| o.remove("evidence"))
                .expect("an answer lists its evidence");
            assert!(
                evidence.as_array().is_some_and(|e| !e.is_empty()),
                "{question}"
            );
        }
        let mut args: Vec<&str> = command.split(' ').collect();
        args.extend(["--format", "json"]);
        assert_eq!(
            result,
            json(&args),
            "{question}: ask's answer is not `{query}`'s"
        );
    }
}

#[test]
fn the_three_root_causes_differ_and_each_names_its_evidence() {
    let answer = |q: &str| json(&["ask", q, "--format", "json"]);
    let then = answer("what was the root cause at 2026-03-03 12:00?");
    let later = answer("what was the root cause at 2026-03-04 12:00?");
    let now = answer("what was the root cause now?");
    assert_eq!(then["result"]["status"], "conflicted");
    assert_eq!(
        later["result"]["claims"][0],
        "Expired TLS certificate on the card-network gateway"
    );
    let cites = |v: &Value| -> Vec<String> {
        v["result"]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|a| a["cites"].as_array().unwrap().iter())
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(cites(&then), ["E14", "E7"]);
    assert_eq!(cites(&later), ["E14", "E21"]);
    assert!(cites(&now).contains(&"E32".to_owned()), "{:?}", cites(&now));
    assert_ne!(then["result"], later["result"]);
    assert_ne!(later["result"]["agents"], now["result"]["agents"]);
}

/// A date alone is one instant everywhere: the end of that day, printed —
/// by `answer --at` on standard error and in JSON, and by `ask`.
#[test]
fn a_date_alone_is_the_same_instant_in_answer_and_ask() {
    let answer = common::asof()
        .args(["answer", "--topic", "root-cause", "--at", "2026-03-03"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&answer.stderr).into_owned();
    assert!(
        said.contains("2026-03-03 → 2026-03-03T23:59:59.999999Z (the end of that day)"),
        "{said}"
    );
    let asked = json(&[
        "ask",
        "what was the root cause on 2026-03-03?",
        "--format",
        "json",
    ]);
    assert_eq!(asked["result"]["as_of"], "2026-03-03T23:59:59.999999Z");
    let answered = common::stdout_json(common::asof().args([
        "answer",
        "--topic",
        "root-cause",
        "--at",
        "2026-03-03",
        "--format",
        "json",
    ]));
    assert_eq!(answered["as_of"], asked["result"]["as_of"]);
    assert_eq!(
        answered["read_as"],
        "2026-03-03 → 2026-03-03T23:59:59.999999Z (the end of that day)"
    );
    // `now` says how far past the log it is; `end` is the last event.
    let now = common::stdout_json(common::asof().args([
        "answer",
        "--topic",
        "root-cause",
        "--at",
        "now",
        "--format",
        "json",
    ]));
    assert!(
        now["read_as"]
            .as_str()
            .unwrap()
            .contains("(the wall clock), ")
            && now["read_as"]
                .as_str()
                .unwrap()
                .contains(" after the last event (03-16 10:10)"),
        "{now}"
    );
    let end =
        common::stdout_json(common::asof().args(["believed", "--at", "end", "--format", "json"]));
    assert_eq!(end["as_of"], "2026-03-16T10:10:00Z");
}
