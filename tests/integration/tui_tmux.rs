//! Smoke test of the real binary in a real terminal (tmux): start, press keys,
//! quit, and check the terminal was restored (alternate screen and mouse off).
//! Needs tmux; `.ci/run` installs it.

use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux session on a server of its own (its socket named after it):
/// tests running at once never share a server, which exits with its last
/// session — one test's session ending while another's starts made the
/// start fail now and then.
struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.0, "kill-server"])
            .output();
    }
}

/// `tmux ARGS` on the server of the session `-t` names.
fn tmux(args: &[&str]) -> String {
    let target = args
        .iter()
        .position(|&a| a == "-t")
        .and_then(|i| args.get(i + 1))
        .expect("a tmux command names its session");
    let out = Command::new("tmux")
        .args(["-L", target])
        .args(args)
        .output()
        .expect("tmux runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Starts `command` in a new detached 100×30 tmux session.
fn start(label: &str, command: &str) -> (Session, String) {
    assert!(
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success()),
        "tmux is required for this test: apt-get install -y tmux"
    );
    let name = format!("asof-{label}-{}", std::process::id());
    let status = Command::new("tmux")
        .args([
            "-L",
            &name,
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "100",
            "-y",
            "30",
            command,
        ])
        .status()
        .expect("tmux starts");
    assert!(status.success());
    (Session(name.clone()), name)
}

fn wait_for(session: &str, needle: &str) -> String {
    wait_until(session, &format!("`{needle}` to appear"), |s| {
        s.contains(needle)
    })
}

/// Waits (up to 15 s) until `needle` is no longer on screen.
fn wait_gone(session: &str, needle: &str) -> String {
    wait_until(session, &format!("`{needle}` to go"), |s| {
        !s.contains(needle)
    })
}

fn wait_until(session: &str, what: &str, done: impl Fn(&str) -> bool) -> String {
    let started = Instant::now();
    loop {
        let screen = tmux(&["capture-pane", "-p", "-t", session]);
        if done(&screen) {
            return screen;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "waited 15 s for {what}:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_tui_starts_answers_keys_and_restores_the_terminal() {
    let bin = env!("CARGO_BIN_EXE_asof");
    let (_session, name) = start(
        "smoke",
        &format!("NO_COLOR=1 {bin}; echo asof-exited-$?; sleep 30"),
    );

    let screen = wait_for(&name, "Timeline · recorded time");
    assert!(screen.contains("event 85/85"), "{screen}");
    assert_eq!(
        tmux(&["display", "-p", "-t", &name, "#{alternate_on}"]).trim(),
        "1"
    );
    assert_eq!(
        tmux(&["display", "-p", "-t", &name, "#{mouse_any_flag}"]).trim(),
        "1",
        "mouse capture on"
    );

    tmux(&["send-keys", "-t", &name, "Home"]);
    wait_for(&name, "event 1/85");
    tmux(&["send-keys", "-t", &name, "]"]);
    wait_for(&name, "event 2/85");
    // Help scrolls (issue: popups cut off at small sizes): End shows its last lines.
    tmux(&["send-keys", "-t", &name, "?"]);
    let help = wait_for(&name, "Esc closes");
    assert!(help.contains("lines 1-"), "{help}");
    tmux(&["send-keys", "-t", &name, "End"]);
    wait_for(&name, "nothing changes");
    tmux(&["send-keys", "-t", &name, "Escape"]);
    // Two Escapes sent at once can reach the TUI as one Alt+Esc sequence: the
    // second waits until the first closed the help.
    wait_gone(&name, "Esc closes");
    // Esc with nothing open does not quit; it says what does.
    tmux(&["send-keys", "-t", &name, "Escape"]);
    wait_for(&name, "nothing to close: q quits");
    // In a prompt, q is text and Home/End move the caret; a bad time keeps the text.
    tmux(&["send-keys", "-t", &name, ":"]);
    wait_for(&name, "Jump to recorded time");
    tmux(&["send-keys", "-t", &name, "q", "Home", "x", "Enter"]);
    let prompt = wait_for(&name, "is not a time");
    assert!(prompt.contains("> xq"), "{prompt}");
    tmux(&["send-keys", "-t", &name, "Escape"]);
    wait_gone(&name, "Jump to recorded time");
    tmux(&["resize-window", "-t", &name, "-x", "50", "-y", "12"]);
    wait_for(&name, "Terminal too small");
    tmux(&["resize-window", "-t", &name, "-x", "100", "-y", "30"]);
    wait_for(&name, "Timeline · recorded time");
    tmux(&["send-keys", "-t", &name, "q"]);

    let screen = wait_for(&name, "asof-exited-0");
    assert!(
        !screen.contains("Timeline · recorded time"),
        "the alternate screen is gone:\n{screen}"
    );
    assert_eq!(
        tmux(&["display", "-p", "-t", &name, "#{alternate_on}"]).trim(),
        "0"
    );
    assert_eq!(
        tmux(&["display", "-p", "-t", &name, "#{mouse_any_flag}"]).trim(),
        "0",
        "mouse capture off"
    );
}

#[test]
fn a_panic_restores_the_terminal_too() {
    let bin = env!("CARGO_BIN_EXE_asof");
    let (_session, name) = start(
        "panic",
        &format!("ASOF_TEST_PANIC=1 {bin} 2>/dev/null; echo asof-exited-$?; sleep 30"),
    );
    let screen = wait_for(&name, "asof-exited-101");
    assert!(!screen.contains("Timeline · recorded time"), "{screen}");
    assert_eq!(
        tmux(&["display", "-p", "-t", &name, "#{alternate_on}"]).trim(),
        "0"
    );
    assert_eq!(
        tmux(&["display", "-p", "-t", &name, "#{mouse_any_flag}"]).trim(),
        "0"
    );
}

/// `asof tui --follow SOURCE` in a new session; the shell says how it exited.
fn start_follow(label: &str, source: &std::path::Path) -> (Session, String) {
    start(
        label,
        &format!(
            "NO_COLOR=1 {} tui --follow {}; echo asof-exited-$?; sleep 30",
            env!("CARGO_BIN_EXE_asof"),
            source.display()
        ),
    )
}

/// design.md §6 in a real terminal: `asof tui --follow FILE` shows a line the test
/// appends; scrubbing back pins the cursor while events keep arriving; End
/// follows again; truncating the file stops the follow with a message and
/// keeps the screen. (How fast a line shows is measured by `cargo bench
/// --bench follow`, not asserted here: machines are noisy.)
#[test]
fn tui_follow_shows_new_lines_pins_when_scrubbed_back_and_stops_on_truncation() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let evidence = |n: u32, minute: u32| {
        format!(
            "{{\"evidence\":{{\"id\":\"E{n}\",\"kind\":\"log\",\"source\":\"app\",\"observed_at\":\"2026-03-03T12:{minute:02}:00Z\",\"recorded_at\":\"2026-03-03T12:{minute:02}:00Z\",\"summary\":\"line {n} of the run\"}}}}\n"
        )
    };
    let mut text = String::from(
        "{\"asof\":1,\"incident\":{\"id\":\"live\",\"title\":\"A run still going\"},\"agents\":[{\"id\":\"triage\"}],\"topics\":[{\"id\":\"root-cause\",\"question\":\"Why?\"}]}\n",
    );
    for n in 1..=3 {
        text.push_str(&evidence(n, n * 2));
    }
    std::fs::write(&path, &text).unwrap();
    let append = |line: &str| {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(line.as_bytes()).unwrap();
    };
    let (_session, name) = start_follow("follow", &path);
    let screen = wait_for(&name, "event 3/3");
    assert!(screen.contains("● live · newest"), "{screen}");

    // A new line, half now and half later: it shows once it is whole.
    let line = evidence(4, 10);
    let (first, second) = line.split_at(40);
    append(first);
    std::thread::sleep(Duration::from_millis(400));
    assert!(tmux(&["capture-pane", "-p", "-t", &name]).contains("event 3/3"));
    let written = Instant::now();
    append(second);
    let screen = wait_for(&name, "event 4/4");
    eprintln!("line written → on screen: {:?}", written.elapsed());
    assert!(
        screen.contains("recorded ▸ 2026-03-03T12:10:00Z"),
        "{screen}"
    );

    // Scrubbing back pins the cursor; new events still arrive.
    tmux(&["send-keys", "-t", &name, "Home"]);
    wait_for(&name, "pinned, End follows");
    append(&evidence(5, 12));
    let screen = wait_for(&name, "event 1/5");
    assert!(
        screen.contains("recorded ▸ 2026-03-03T12:02:00Z"),
        "{screen}"
    );

    // End follows again.
    tmux(&["send-keys", "-t", &name, "End"]);
    let screen = wait_for(&name, "event 5/5");
    assert!(!screen.contains("pinned"), "{screen}");
    append(&evidence(6, 14));
    let screen = wait_for(&name, "event 6/6");
    assert!(
        screen.contains("recorded ▸ 2026-03-03T12:14:00Z"),
        "{screen}"
    );

    // Truncation stops the follow; what was applied stays on screen.
    std::fs::write(&path, &text[..text.len() / 2]).unwrap();
    let screen = wait_for(&name, "follow stopped");
    assert!(screen.contains("event 6/6"), "{screen}");
    assert!(screen.contains("truncated"), "{screen}");
    tmux(&["send-keys", "-t", &name, "q"]);
    wait_for(&name, "asof-exited-0");
}

/// `asof tui --follow STORE` watches a store that `asof load --follow` writes
/// in another process.
#[test]
fn tui_follow_watches_a_store_another_process_follows_into() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let store = dir.path().join("run.db");
    let evidence = |n: u32| {
        format!(
            "{{\"evidence\":{{\"id\":\"E{n}\",\"kind\":\"log\",\"source\":\"app\",\"observed_at\":\"2026-03-03T12:{n:02}:00Z\",\"recorded_at\":\"2026-03-03T12:{n:02}:00Z\"}}}}\n"
        )
    };
    let header = "{\"asof\":1,\"incident\":{\"id\":\"live\",\"title\":\"A run still going\"},\"agents\":[{\"id\":\"triage\"}],\"topics\":[{\"id\":\"root-cause\",\"question\":\"Why?\"}]}\n";
    std::fs::write(&path, format!("{header}{}{}", evidence(1), evidence(2))).unwrap();
    let bin = env!("CARGO_BIN_EXE_asof");
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _writer = Kill(
        Command::new(bin)
            .args(["load", "--follow", "--db"])
            .arg(&store)
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while !store.exists() {
        assert!(started.elapsed() < Duration::from_secs(15), "no store");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (_session, name) = start_follow("follow-store", &store);
    let screen = wait_for(&name, "● live");
    assert!(screen.contains("/2 │"), "{screen}");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(evidence(3).as_bytes()).unwrap();
    wait_for(&name, "event 3/3");
    tmux(&["send-keys", "-t", &name, "q"]);
    wait_for(&name, "asof-exited-0");
}

/// `asof tui --follow TRACE` on an OpenTelemetry trace an agent is exporting:
/// the file is empty when the TUI starts (it waits, saying so), and each
/// export batch shows as the import of the lines so far.
#[test]
fn tui_follow_reads_a_trace_as_it_is_exported() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.jsonl");
    std::fs::write(&path, b"").unwrap();
    let trace = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/sre-agent.otlp.jsonl"
    ))
    .unwrap();
    let lines: Vec<&str> = trace.lines().collect();
    let (_session, name) = start_follow("follow-trace", &path);
    wait_for(&name, "waiting for the first complete line");
    let append = |line: &str| {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(file, "{line}").unwrap();
    };
    append(lines[0]);
    let screen = wait_for(&name, "event 9/9");
    assert!(screen.contains("● live"), "{screen}");
    append(lines[1]);
    wait_for(&name, "event 16/16");
    append(lines[2]);
    let screen = wait_for(&name, "event 18/18");
    assert!(screen.contains("sre-agent"), "{screen}");
    tmux(&["send-keys", "-t", &name, "q"]);
    wait_for(&name, "asof-exited-0");
}

/// The bundled demo's review file (`payment-outage.review.jsonl` in the
/// working directory) is announced on the first frame; one under another
/// name is not read (docs/review.md).
#[test]
fn the_demos_review_file_is_announced_on_the_first_frame() {
    let bin = env!("CARGO_BIN_EXE_asof");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let finding = r#"{"id":"F1","target":{"kind":"evidence","id":"E15"},"verdict":"rejected","note":"a lull","reviewer":"ana","made_at":"2026-12-06T09:12:00Z","about":"2026-03-03T12:10:00Z"}"#;
    std::fs::write(
        dir.path().join("other.review.jsonl"),
        format!("{finding}\n"),
    )
    .expect("a review file");
    let cd = dir.path().display();
    let (_one, name) = start(
        "review-other",
        &format!("cd {cd} && NO_COLOR=1 {bin}; sleep 30"),
    );
    let screen = wait_for(&name, "Timeline · recorded time");
    assert!(!screen.contains("⚑ review"), "{screen}");
    std::fs::write(
        dir.path().join("payment-outage.review.jsonl"),
        format!("{finding}\n"),
    )
    .expect("a review file");
    let (_two, name) = start(
        "review-beside",
        &format!("cd {cd} && NO_COLOR=1 {bin}; sleep 30"),
    );
    let screen = wait_for(&name, "Timeline · recorded time");
    assert!(screen.contains("⚑ review: 1 finding by ana"), "{screen}");
}
