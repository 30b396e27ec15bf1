//! `asof serve` (design.md §7, "Live ingestion"): the real binary on a
//! loopback port, spoken to over plain HTTP/1.1. Every request gets the
//! status OTLP/HTTP says; what is answered 200 is in the archive, and the
//! store is `asof import otlp` of the archive.

use crate::common;

use common::serve::{applied_lines, read_answer};
use common::{asof, stdout_json};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A serve process on a free loopback port, killed when dropped.
struct Serve {
    child: Child,
    addr: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(db: &Path, extra: &[&str]) -> Serve {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("asof"))
        .arg("serve")
        .arg("--db")
        .arg(db)
        .args(["--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::from(
            std::fs::File::create(db.with_extension("serve.log")).expect("a log file"),
        ))
        .spawn()
        .expect("start asof serve");
    let mut first = String::new();
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("its stdout"));
    lines.read_line(&mut first).expect("its first line");
    // The rest of its output is read (and dropped) as it comes.
    std::thread::spawn(move || std::io::copy(&mut lines, &mut std::io::sink()));
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_owned();
    Serve { child, addr }
}

/// One HTTP/1.1 request; the status and body of its answer.
fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("send the head");
    // A server may answer before reading all of a body it refuses.
    let _ = stream.write_all(body);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let at = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(answer.len(), |p| p + 4);
    (status, answer[at..].to_vec())
}

fn json(addr: &str, body: &str) -> (u16, Vec<u8>) {
    request(
        addr,
        "POST",
        "/v1/traces",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    )
}

fn protobuf(addr: &str, body: &[u8]) -> (u16, Vec<u8>) {
    request(
        addr,
        "POST",
        "/v1/traces",
        &[("Content-Type", "application/x-protobuf")],
        body,
    )
}

fn dataset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets")
        .join(name)
}

/// Waits (bounded) until the store's follow has applied every archive line.
fn caught_up(db: &Path, lines: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = asof().arg("check").arg(db).output().expect("check");
        let have = archived(db).lines().count();
        let applied = applied_lines(db);
        if out.status.success() && have == lines && applied == Some(lines as u64) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the store did not catch up with {lines} archive lines (have {have}, applied {applied:?}): {}",
            std::fs::read_to_string(db.with_extension("serve.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The archive of `db`, every segment in order, as one text.
fn archived(db: &Path) -> String {
    segments(db)
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("a segment"))
        .collect()
}

/// The segments of `db`'s archive.
fn segments(db: &Path) -> Vec<PathBuf> {
    asof_core::segments::existing(&asof_serve::archive::path_for(db))
}

/// `asof import otlp TRACE --db DB EXTRA…`, which must succeed.
fn import_to(trace: &Path, db: &Path, extra: &[&std::ffi::OsStr]) {
    asof()
        .args(["import", "otlp"])
        .arg(trace)
        .arg("--db")
        .arg(db)
        .args(extra)
        .assert()
        .success();
}

/// What a store says: its evidence, the history of each of `topics`, and
/// what was believed at each of `at`.
fn rows(db: &Path, topics: &[&str], at: &[&str]) -> Vec<serde_json::Value> {
    let json = |args: &[&str]| stdout_json(asof().arg(args[0]).arg(db).args(&args[1..]));
    let mut out = vec![json(&["evidence", "--format", "json"])];
    for topic in topics {
        out.push(json(&["history", "--topic", topic, "--format", "json"]));
    }
    for at in at {
        out.push(json(&["believed", "--at", at, "--format", "json"]));
    }
    out
}

/// Two instants of the SRE run: while it blamed the network, and after.
const SRE_AT: [&str; 2] = ["2026-04-14T02:16:00Z", "2026-04-14T02:30:00Z"];

/// The bundled SRE run, sent a request at a time — as protobuf and as JSON
/// alternately, as two SDK exporters would — gives the store `asof import
/// otlp` of the run's file gives, row for row.
#[test]
fn a_run_exported_over_http_is_the_store_its_import_gives() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let server = serve(&db, &[]);
    let text = std::fs::read_to_string(dataset("sre-agent.otlp.jsonl")).unwrap();
    let mut sent = 0;
    for (i, line) in text.lines().enumerate() {
        let (status, _) = if i % 2 == 0 {
            let request: ExportTraceServiceRequest = serde_json::from_str(line).expect("OTLP/JSON");
            protobuf(&server.addr, &request.encode_to_vec())
        } else {
            json(&server.addr, line)
        };
        assert_eq!(status, 200, "line {}", i + 1);
        sent += 1;
    }
    caught_up(&db, sent);
    let imported = dir.path().join("imported.db");
    import_to(&dataset("sre-agent.otlp.jsonl"), &imported, &[]);
    let what = |db: &Path| rows(db, &["customer-impact"], &SRE_AT);
    assert_eq!(what(&db), what(&imported));
    // The archive re-imports to the same.
    let again = dir.path().join("again.db");
    import_to(&asof_serve::archive::path_for(&db), &again, &[]);
    assert_eq!(what(&again), what(&imported));
}

/// Hostile requests each get their status, the server stays up, and only
/// what was answered 200 is in the archive.
#[test]
fn hostile_requests_get_their_status_and_leave_nothing_partial() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let server = serve(&db, &["--token", "s3cret"]);
    let addr = server.addr.as_str();
    let auth = ("Authorization", "Bearer s3cret");
    let good = std::fs::read_to_string(dataset("sre-agent.otlp.jsonl")).unwrap();
    let good = good.lines().next().unwrap();
    let proto = serde_json::from_str::<ExportTraceServiceRequest>(good)
        .unwrap()
        .encode_to_vec();
    let bomb = {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&vec![b' '; 64 << 20]).unwrap();
        gz.finish().unwrap()
    };
    let big = vec![b'{'; 20 << 20];
    let pb = ("Content-Type", "application/x-protobuf");
    let js = ("Content-Type", "application/json");
    // (what, path, headers, body, the status it gets)
    type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, &'a [u8], u16);
    let cases: Vec<Case> = vec![
        (
            "truncated protobuf",
            "/v1/traces",
            vec![auth, pb],
            &proto[..proto.len() / 2],
            400,
        ),
        (
            "gzip bomb",
            "/v1/traces",
            vec![auth, js, ("Content-Encoding", "gzip")],
            &bomb,
            413,
        ),
        ("20 MiB body", "/v1/traces", vec![auth, js], &big, 413),
        (
            "not OTLP",
            "/v1/traces",
            vec![auth, js],
            br#"{"hello": "world"}"#,
            400,
        ),
        ("not JSON", "/v1/logs", vec![auth, js], b"hello", 400),
        (
            "wrong type",
            "/v1/traces",
            vec![auth, ("Content-Type", "text/plain")],
            b"x",
            415,
        ),
        (
            "wrong token",
            "/v1/traces",
            vec![("Authorization", "Bearer nope"), js],
            good.as_bytes(),
            401,
        ),
        ("no token", "/v1/traces", vec![js], good.as_bytes(), 401),
        (
            "unknown path",
            "/v1/metrics",
            vec![auth, js],
            good.as_bytes(),
            404,
        ),
    ];
    for (what, path, headers, body, status) in &cases {
        let (got, answer) = request(addr, "POST", path, headers, body);
        assert_eq!(got, *status, "{what}: {}", String::from_utf8_lossy(&answer));
    }
    assert_eq!(request(addr, "GET", "/v1/traces", &[auth], b"").0, 405);
    let (status, about) = request(addr, "GET", "/", &[], b"");
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&about).contains("OTLP/HTTP receiver"));
    // Ten thousand tiny requests: each answered, the server still up.
    for _ in 0..10_000 {
        assert_eq!(
            request(addr, "POST", "/v1/traces", &[auth, js], b"{}").0,
            400
        );
    }
    // And a good one goes through, alone in the archive.
    assert_eq!(
        request(addr, "POST", "/v1/traces", &[auth, pb], &proto).0,
        200
    );
    caught_up(&db, 1);
    let archive = std::fs::read_to_string(asof_serve::archive::path_for(&db)).unwrap();
    assert_eq!(archive.lines().count(), 1);
}

/// A non-loopback address without a token is refused before anything
/// listens; so is a store that serve did not write.
#[test]
fn serve_refuses_an_open_address_without_a_token_and_a_store_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    asof()
        .args(["serve", "--db"])
        .arg(&db)
        .args(["--listen", "0.0.0.0:0"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "a non-loopback address needs --token",
        ));
    asof()
        .args(["load"])
        .arg(dataset("payment-outage.yaml"))
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    asof()
        .args(["serve", "--db"])
        .arg(&db)
        .args(["--listen", "127.0.0.1:0"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("exists without its archive"));
}

/// A generated run cut into small requests (8 spans each), as JSON lines.
fn small_requests(events: u64) -> Vec<String> {
    let config = asof::synth::GenConfig {
        events,
        topics: 10,
        agents: 3,
        seed: 5,
    };
    asof::synth::otlp_requests(config, 8)
}

/// Four exporters send while serve is killed (SIGKILL) at arbitrary
/// instants and started again, its archive in segments of 1 MiB: every
/// request answered 200 is in the archive, the store follows it, `asof check` passes, and the archive
/// re-imports to the same store. Unanswered requests are sent again, as an
/// exporter retries them.
#[test]
fn a_kill_at_any_instant_loses_nothing_acknowledged() {
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let requests = small_requests(4000);
    let pending: Arc<Mutex<Vec<usize>>> = Arc::new(Mutex::new((0..requests.len()).rev().collect()));
    let acked: Arc<Mutex<Vec<usize>>> = Arc::new(Mutex::new(Vec::new()));
    let requests = Arc::new(requests);
    let mut state = 11u64;
    let mut interrupted = 0;
    for round in 0..4 {
        let mut server = serve(&db, &["--segment-mib", "1"]);
        let addr = server.addr.clone();
        let senders: Vec<_> = (0..4)
            .map(|_| {
                let (pending, acked, requests, addr) = (
                    pending.clone(),
                    acked.clone(),
                    requests.clone(),
                    addr.clone(),
                );
                std::thread::spawn(move || {
                    loop {
                        let Some(i) = pending.lock().unwrap().pop() else {
                            return;
                        };
                        // A refused connection or a cut answer: the server is
                        // gone; the request goes back to be sent again.
                        let answered = std::panic::catch_unwind(|| json(&addr, &requests[i]).0);
                        match answered {
                            Ok(200) => acked.lock().unwrap().push(i),
                            Ok(status) => panic!("request {i}: status {status}"),
                            Err(_) => {
                                pending.lock().unwrap().push(i);
                                return;
                            }
                        }
                    }
                })
            })
            .collect();
        if round < 3 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            std::thread::sleep(Duration::from_millis(10 + (state >> 33) % 100));
            server.child.kill().expect("SIGKILL");
            server.child.wait().expect("reaped");
        }
        for s in senders {
            s.join().expect("a sender");
        }
        if !pending.lock().unwrap().is_empty() {
            interrupted += 1;
        }
        drop(server);
        if pending.lock().unwrap().is_empty() {
            break;
        }
    }
    assert!(
        pending.lock().unwrap().is_empty(),
        "every request answered in the end"
    );
    assert!(
        interrupted > 0,
        "a kill came while requests were being sent"
    );
    // Killed while it wrote segments of 1 MiB, the archive is still whole.
    assert!(segments(&db).len() >= 2, "{:?}", segments(&db));
    let archive = archived(&db);
    // Every request answered 200 is in the archive, line for line.
    let lines: std::collections::HashSet<&str> = archive.lines().collect();
    for &i in acked.lock().unwrap().iter() {
        let normal = serde_json::from_str::<serde_json::Value>(&requests[i])
            .unwrap()
            .to_string();
        assert!(
            lines.contains(normal.as_str()),
            "request {i} was answered 200 but is not in the archive"
        );
    }
    // The store follows the archive once serve runs again, and equals its import.
    let server = serve(&db, &["--segment-mib", "1"]);
    caught_up(&db, archive.lines().count());
    drop(server);
    asof().arg("check").arg(&db).assert().success();
    let imported = dir.path().join("imported.db");
    asof()
        .args(["import", "otlp"])
        .args(segments(&db))
        .arg("--db")
        .arg(&imported)
        .assert()
        .success();
    assert_eq!(rows(&db, &[], &[]), rows(&imported, &[], &[]));
}

/// A receiver runs for days: its archive goes on in segments (here of
/// 1 MiB, where the default is 256), none of them ever refused for its
/// size. Every request answered 200 is in one; a kill while the store is
/// behind loses nothing, and serve started again takes in what the store
/// lacks, across the segments; `asof check` says how far behind it was
/// until then; the segments import, as one, to the same store.
#[test]
fn the_archive_goes_on_in_segments_and_a_restart_takes_in_what_the_store_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("seg.db");
    let requests = small_requests(6000);
    let total: usize = requests.iter().map(|r| r.len() + 1).sum();
    assert!(
        total > 2 << 20,
        "the requests fill more than two segments ({total} bytes)"
    );
    let half = requests.len() / 2;
    let server = serve(&db, &["--segment-mib", "1"]);
    for (i, r) in requests[..half].iter().enumerate() {
        assert_eq!(json(&server.addr, r).0, 200, "request {i}");
    }
    caught_up(&db, half);
    assert!(segments(&db).len() >= 2, "{:?}", segments(&db));
    // The rest, then a kill before the store can have taken them in.
    for (i, r) in requests[half..].iter().enumerate() {
        assert_eq!(json(&server.addr, r).0, 200, "request {}", half + i);
    }
    drop(server);
    let parts = segments(&db);
    assert!(parts.len() >= 3, "{parts:?}");
    for part in &parts {
        let len = std::fs::metadata(part).unwrap().len();
        // A segment passes its size by one batch of lines at most.
        assert!(
            len <= (1 << 20) + 64 * 1024,
            "{}: {len} bytes",
            part.display()
        );
        assert!(std::fs::read(part).unwrap().ends_with(b"\n"));
    }
    let text = archived(&db);
    let lines: std::collections::HashSet<&str> = text.lines().collect();
    assert_eq!(text.lines().count(), requests.len());
    for (i, r) in requests.iter().enumerate() {
        let normal = serde_json::from_str::<serde_json::Value>(r)
            .unwrap()
            .to_string();
        assert!(
            lines.contains(normal.as_str()),
            "request {i} is not archived"
        );
    }
    // Whatever the kill left, `asof check` says how far behind it is.
    let applied = applied_lines(&db).expect("the store's position");
    let check = asof().arg("check").arg(&db).output().unwrap();
    assert!(check.status.success());
    let said = String::from_utf8_lossy(&check.stdout);
    let behind = requests.len() as u64 - applied;
    match behind {
        0 => assert!(!said.contains("behind"), "{said}"),
        1 => assert!(
            said.contains("behind") && said.contains(": 1 complete line ("),
            "{said}"
        ),
        n => assert!(
            said.contains(&format!(
                "behind {}: {n} complete lines (",
                parts[0].display()
            )),
            "{said}"
        ),
    }
    // Started again, serve takes in what the store lacks, across segments.
    let server = serve(&db, &["--segment-mib", "1"]);
    caught_up(&db, requests.len());
    drop(server);
    let imported = dir.path().join("imported.db");
    asof()
        .args(["import", "otlp"])
        .args(&parts)
        .arg("--db")
        .arg(&imported)
        .assert()
        .success();
    assert_eq!(rows(&db, &[], &[]), rows(&imported, &[], &[]));
    // The first segment read alone says what it lacks.
    let alone = asof()
        .args(["import", "otlp"])
        .arg(&parts[0])
        .arg("--db")
        .arg(dir.path().join("alone.db"))
        .output()
        .unwrap();
    assert!(alone.status.success());
    let said = String::from_utf8_lossy(&alone.stdout);
    assert!(
        said.contains(&format!(
            "goes on in {} (asof serve's archive, in segments), not read",
            parts[1].display()
        )),
        "{said}"
    );
    // So does a later one read without the one after it.
    let second = asof()
        .args(["import", "otlp"])
        .arg(&parts[1])
        .arg("--db")
        .arg(dir.path().join("second.db"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&second.stdout);
    for (what, other) in [("goes on in", &parts[2]), ("follows", &parts[0])] {
        assert!(
            said.contains(&format!(
                "{what} {} (asof serve's archive, in segments), not read",
                other.display()
            )),
            "{said}"
        );
    }
    // The shell lists the segments in their order.
    let mut listed = parts.clone();
    listed.sort();
    assert_eq!(listed, parts);
}

/// The store exists, empty and valid, from the moment serve answers: a
/// check, a query or a follower started before the first request attaches
/// to it (a topic asked for is said not to exist yet, not listed as none),
/// and the first belief is there once it arrives.
#[test]
fn the_store_is_there_before_the_first_request() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("early.db");
    let server = serve(&db, &[]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !db.exists() {
        assert!(
            Instant::now() < deadline,
            "no store before the first request"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    asof().arg("check").arg(&db).assert().success();
    let believed = stdout_json(
        asof()
            .arg("believed")
            .arg(&db)
            .args(["--at", SRE_AT[1], "--format", "json"]),
    );
    assert_eq!(believed["beliefs"], serde_json::json!([]), "{believed}");
    let refused = asof()
        .arg("history")
        .arg(&db)
        .args(["--topic", "customer-impact"])
        .assert()
        .code(2);
    let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        said.contains("unknown topic `customer-impact`: the store has no topics yet"),
        "{said}"
    );
    let text = std::fs::read_to_string(dataset("sre-agent.otlp.jsonl")).unwrap();
    for line in text.lines() {
        assert_eq!(json(&server.addr, line).0, 200);
    }
    caught_up(&db, text.lines().count());
    let history = stdout_json(asof().arg("history").arg(&db).args([
        "--topic",
        "customer-impact",
        "--format",
        "json",
    ]));
    assert!(
        history["versions"]
            .as_array()
            .is_some_and(|v| !v.is_empty()),
        "{history}"
    );
}

/// SIGTERM or SIGINT right after the last request is answered: serve stops
/// taking requests, brings the store up to its archive, folds the
/// write-ahead log into the file and exits 0. The `.db` copied alone then
/// equals `asof import otlp` of the run, and `asof check` says when the
/// archive holds lines the store has not taken in.
#[test]
fn a_signal_stops_serve_with_the_store_whole_on_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let run = dataset("sre-agent.otlp.jsonl");
    let imported = dir.path().join("imported.db");
    import_to(&run, &imported, &[]);
    let what = |db: &Path| rows(db, &["customer-impact"], &SRE_AT);
    let text = std::fs::read_to_string(&run).unwrap();
    for signal in ["TERM", "INT"] {
        let db = dir.path().join(format!("{signal}.db"));
        let mut server = serve(&db, &[]);
        for (i, line) in text.lines().enumerate() {
            assert_eq!(json(&server.addr, line).0, 200, "line {}", i + 1);
        }
        let sent = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(server.child.id().to_string())
            .status()
            .expect("kill");
        assert!(sent.success());
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = server.child.try_wait().expect("its status") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "serve did not stop on SIG{signal}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let log = std::fs::read_to_string(db.with_extension("serve.log")).unwrap_or_default();
        assert_eq!(status.code(), Some(0), "SIG{signal}: {log}");
        assert!(log.contains("stopped: "), "{log}");
        let mut wal = db.as_os_str().to_owned();
        wal.push("-wal");
        assert!(
            std::fs::metadata(&wal).map_or(true, |m| m.len() == 0),
            "SIG{signal}: a write-ahead log is left beside the store"
        );
        // The store file alone, as anyone would copy it to share it.
        let alone = dir.path().join(format!("copied-{signal}"));
        std::fs::create_dir(&alone).unwrap();
        let copy = alone.join("live.db");
        std::fs::copy(&db, &copy).unwrap();
        assert_eq!(what(&copy), what(&imported), "SIG{signal}");
        // Up to date, `check` says only that; a line the store has not
        // taken in is named.
        let checked = asof().arg("check").arg(&db).assert().success();
        let said = String::from_utf8_lossy(&checked.get_output().stdout).into_owned();
        assert!(!said.contains("behind"), "{said}");
        let archive = asof_serve::archive::path_for(&db);
        let mut more = std::fs::OpenOptions::new()
            .append(true)
            .open(&archive)
            .unwrap();
        writeln!(more, "{}", text.lines().next().unwrap()).unwrap();
        let checked = asof().arg("check").arg(&db).assert().success();
        let said = String::from_utf8_lossy(&checked.get_output().stdout).into_owned();
        assert!(
            said.contains(&format!("behind {}: 1 complete line (", archive.display())),
            "{said}"
        );
        drop(server);
    }
}

/// The Python interpreter of the virtual environment `.ci/run` installs the
/// OpenTelemetry SDK into, if it is there.
fn sdk_python() -> Option<PathBuf> {
    crate::common::venv_python("opentelemetry.exporter.otlp.proto.http.trace_exporter")
}

/// The real OpenTelemetry Python SDK's OTLP/HTTP exporter (protobuf) sends
/// the bundled SRE run to `asof serve`: the store equals `asof import otlp`
/// of datasets/sre-agent.otlp.jsonl, which the same SDK wrote.
#[test]
fn the_opentelemetry_sdk_exports_to_serve() {
    let Some(python) = sdk_python() else {
        eprintln!(
            "SKIPPED: the OpenTelemetry SDK is not installed in target/otel-venv (.ci/run installs it)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sdk.db");
    let rules = dataset("sre-agent.rules.yaml");
    let server = serve(&db, &["--rules", rules.to_str().unwrap()]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/export_to_serve.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(format!("http://{}", server.addr))
        .output()
        .expect("run the SDK's exporter");
    assert!(
        out.status.success(),
        "the exporter failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let archive = std::fs::read_to_string(asof_serve::archive::path_for(&db)).unwrap();
    caught_up(&db, archive.lines().count());
    let imported = dir.path().join("imported.db");
    import_to(
        &dataset("sre-agent.otlp.jsonl"),
        &imported,
        &["--rules".as_ref(), rules.as_os_str()],
    );
    let what = |db: &Path| rows(db, &["root-cause", "customer-impact"], &SRE_AT);
    assert_eq!(what(&db), what(&imported));
}

/// Connections are bounded: past `--max-connections` a new one is answered
/// 503 with Retry-After and closed, while those open go on being served; a
/// closed one makes room. Bodies may come chunked or after `Expect:
/// 100-continue`, as HTTP clients send them; a head that is not HTTP gets
/// 400.
#[test]
fn connections_are_bounded_and_bodies_come_as_clients_send_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let server = serve(&db, &["--max-connections", "4"]);
    let addr = server.addr.as_str();
    let good = std::fs::read_to_string(dataset("sre-agent.otlp.jsonl")).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let connect = || {
        let stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        std::io::BufReader::new(stream)
    };
    // Four open connections, idle.
    let mut open: Vec<_> = (0..4).map(|_| connect()).collect();
    std::thread::sleep(Duration::from_millis(300));
    // The fifth is turned away at once.
    let mut fifth = connect();
    let (status, body) = read_answer(&mut fifth).expect("an answer");
    assert_eq!(status, 503, "{}", String::from_utf8_lossy(&body));
    assert!(String::from_utf8_lossy(&body).contains("too many connections"));
    // One of the four sends a chunked body after Expect: 100-continue.
    let body = lines[0].as_bytes();
    let head = format!(
        "POST /v1/traces HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"
    );
    let s = open[0].get_mut();
    s.write_all(head.as_bytes()).unwrap();
    let mut cont = String::new();
    open[0].read_line(&mut cont).unwrap();
    assert!(cont.starts_with("HTTP/1.1 100"), "{cont}");
    let mut blank = String::new();
    open[0].read_line(&mut blank).unwrap();
    let s = open[0].get_mut();
    for chunk in body.chunks(1000) {
        s.write_all(format!("{:x};ext=1\r\n", chunk.len()).as_bytes())
            .unwrap();
        s.write_all(chunk).unwrap();
        s.write_all(b"\r\n").unwrap();
    }
    s.write_all(b"0\r\nX-Trailer: t\r\n\r\n").unwrap();
    let (status, body) = read_answer(&mut open[0]).expect("an answer");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    // The connection stays open for the next request (Content-Length).
    let body = lines[1].as_bytes();
    let head = format!(
        "POST /v1/traces HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let s = open[0].get_mut();
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    assert_eq!(read_answer(&mut open[0]).map(|a| a.0), Some(200));
    // Another sends what is not HTTP: 400, and it is closed.
    open[1].get_mut().write_all(b"HELLO\r\n\r\n").unwrap();
    assert_eq!(read_answer(&mut open[1]).map(|a| a.0), Some(400));
    // Closed connections make room (bounded wait).
    drop(open.split_off(1));
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        let (status, _) = request(addr, "GET", "/", &[], b"");
        if status == 200 || Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status, 200);
    caught_up(&db, 2);
    let archive = std::fs::read_to_string(asof_serve::archive::path_for(&db)).unwrap();
    assert_eq!(archive.lines().count(), 2, "the two requests answered 200");
}

/// Where `.ci/run` installs the OpenTelemetry JavaScript SDK with npm, if
/// it is there (and Node.js to run it).
fn sdk_node() -> Option<PathBuf> {
    let prefix = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/otel-node");
    let ok = prefix
        .join("node_modules/@opentelemetry/exporter-trace-otlp-http")
        .exists()
        && std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    ok.then_some(prefix)
}

/// The real OpenTelemetry JavaScript SDK's OTLP/HTTP JSON exporter sends an
/// agent run to one receiver and its protobuf exporter the same spans to
/// another: both stores hold what the run said (the belief, on the evidence
/// the agent read) and are equal row for row; the JSON archive re-imports
/// to the same.
#[test]
fn the_sdk_json_exporter_gives_what_its_protobuf_exporter_gives() {
    let Some(prefix) = sdk_node() else {
        eprintln!(
            "SKIPPED: the OpenTelemetry JavaScript SDK is not installed in target/otel-node (.ci/run installs it)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("json.db"), dir.path().join("protobuf.db"));
    let (json_server, proto_server) = (serve(&a, &[]), serve(&b, &[]));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/export_json_to_serve.mjs");
    let out = std::process::Command::new("node")
        .arg(script)
        .arg(format!("http://{}", json_server.addr))
        .arg(format!("http://{}", proto_server.addr))
        .env("OTEL_NODE", &prefix)
        .output()
        .expect("run the SDK's exporters");
    assert!(
        out.status.success(),
        "the exporters failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for db in [&a, &b] {
        let archive = std::fs::read_to_string(asof_serve::archive::path_for(db)).unwrap();
        assert_eq!(archive.lines().count(), 2, "five spans, three a request");
        caught_up(db, 2);
    }
    let at = ["2026-01-01T00:00:07Z", "2026-01-01T00:00:09Z"];
    let what = |db: &Path| rows(db, &["root-cause"], &at);
    let said = what(&a);
    assert_eq!(said, what(&b), "JSON and protobuf give one store");
    let history = said[1].to_string();
    for expected in ["db-pool-exhausted", "sre-bot", "T2"] {
        assert!(history.contains(expected), "{expected}: {history}");
    }
    let evidence = said[0].to_string();
    assert!(
        evidence.contains("payment-db: connection pool exhausted"),
        "{evidence}"
    );
    let again = dir.path().join("again.db");
    import_to(&asof_serve::archive::path_for(&a), &again, &[]);
    assert_eq!(what(&again), said);
}

/// Review findings sent as OpenTelemetry evaluations (`asof review --format
/// otlp`) on `/v1/logs` go to the store's review file, never into its log;
/// sent again (an exporter's retry) they are kept once.
#[test]
fn review_findings_sent_as_logs_go_beside_the_store_not_into_its_log() {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let server = serve(&db, &[]);
    let text = std::fs::read_to_string(dataset("sre-agent.otlp.jsonl")).unwrap();
    let mut sent = 0;
    for line in text.lines() {
        assert_eq!(json(&server.addr, line).0, 200);
        sent += 1;
    }
    caught_up(&db, sent);
    // A reviewer's findings, written apart and exported as OTLP logs.
    let ana = dir.path().join("ana.review.jsonl");
    for (target, verdict) in [("T3", "rejected"), ("version:B1", "wrong")] {
        asof()
            .arg("review")
            .arg(&db)
            .arg("--review")
            .arg(&ana)
            .args([
                "--add",
                target,
                "--verdict",
                verdict,
                "--note",
                "seen in review",
            ])
            .args(["--reviewer", "ana"])
            .assert()
            .success();
    }
    let logs = dir.path().join("ana.otlp.json");
    asof()
        .arg("review")
        .arg(&db)
        .arg("--review")
        .arg(&ana)
        .args(["--format", "otlp", "-o"])
        .arg(&logs)
        .assert()
        .success();
    let body = std::fs::read_to_string(&logs).unwrap();
    let logs_json = |body: &str| {
        request(
            &server.addr,
            "POST",
            "/v1/logs",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
    };
    assert_eq!(logs_json(&body).0, 200);
    // The retry, as protobuf: the same findings, kept once.
    let as_proto: ExportLogsServiceRequest = serde_json::from_str(&body).unwrap();
    let (status, _) = request(
        &server.addr,
        "POST",
        "/v1/logs",
        &[("Content-Type", "application/x-protobuf")],
        &as_proto.encode_to_vec(),
    );
    assert_eq!(status, 200);
    caught_up(&db, sent + 2);
    let beside = dir.path().join("live.review.jsonl");
    let findings = |args: &[&std::ffi::OsStr]| {
        stdout_json(
            asof()
                .arg("review")
                .arg(&db)
                .args(args)
                .args(["--format", "json"]),
        )["findings"]
            .clone()
    };
    assert_eq!(
        findings(&["--review".as_ref(), beside.as_os_str()]),
        findings(&["--review".as_ref(), ana.as_os_str()])
    );
    assert_eq!(
        std::fs::read_to_string(&beside).unwrap().lines().count(),
        2,
        "kept once"
    );
    // Not in the archive the log is read from, nor among the run's evaluations.
    let archive = std::fs::read_to_string(asof_serve::archive::path_for(&db)).unwrap();
    assert!(!archive.contains("asof.review"));
    let t3 = stdout_json(
        asof()
            .arg("evidence")
            .arg(&db)
            .args(["--id", "T3", "--format", "json"]),
    );
    assert!(!t3.to_string().contains("seen in review"), "{t3}");
    // The store's readers find the review beside it and say so.
    let out = asof().arg("evidence").arg(&db).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("live.review.jsonl — 2 findings by ana"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One id the file holds with other content: refused, nothing written.
    let changed = body.replace("seen in review", "changed later");
    assert_eq!(logs_json(&changed).0, 400);
    assert_eq!(std::fs::read_to_string(&beside).unwrap().lines().count(), 2);
}
