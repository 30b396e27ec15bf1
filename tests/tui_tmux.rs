//! Smoke test of the real binary in a real terminal (tmux): start, press keys,
//! quit, and check the terminal was restored (alternate screen and mouse off).
//! Needs tmux; `.ci/run` installs it.

use std::process::Command;
use std::time::{Duration, Instant};

struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.0])
            .output();
    }
}

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux").args(args).output().expect("tmux runs");
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
    let started = Instant::now();
    loop {
        let screen = tmux(&["capture-pane", "-p", "-t", session]);
        if screen.contains(needle) {
            return screen;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "`{needle}` never appeared:\n{screen}"
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
