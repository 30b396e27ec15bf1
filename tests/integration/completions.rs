//! `asof completions SHELL` and `asof man` (design.md §8): generated from the
//! clap definitions, so they name every command; the bash script parses, and
//! the man page renders where `man` is installed.

use crate::common;

use common::asof;
use std::process::Command;

fn printed(args: &[&str]) -> String {
    let out = asof().args(args).output().expect("asof runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn every_shell_gets_a_script_naming_the_commands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = printed(&["completions", shell]);
        for command in ["believed", "history", "export", "import", "completions"] {
            assert!(script.contains(command), "{shell} script lacks {command}");
        }
    }
    asof()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("invalid value 'tcsh'"));
}

#[test]
fn the_bash_script_parses_and_completes_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("asof.bash");
    std::fs::write(&script, printed(&["completions", "bash"])).unwrap();
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .expect("bash runs");
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    // Completing `asof bel` offers `believed`.
    let probe = format!(
        "source {}; COMP_WORDS=(asof bel); COMP_CWORD=1; COMP_LINE='asof bel'; COMP_POINT=8; _asof asof bel asof; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let offered = Command::new("bash")
        .arg("-c")
        .arg(&probe)
        .output()
        .expect("bash runs");
    let offered = String::from_utf8_lossy(&offered.stdout);
    assert_eq!(offered.trim(), "believed", "{offered}");
}

#[test]
fn the_man_page_renders_with_every_command() {
    let page = printed(&["man"]);
    assert!(
        page.contains(".TH asof 1"),
        "{}",
        &page[..page.len().min(400)]
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("asof.1");
    std::fs::write(&file, &page).unwrap();
    let Ok(rendered) = Command::new("man")
        .args(["-l", "-P", "cat"])
        .arg(&file)
        .env("MANWIDTH", "100")
        .output()
    else {
        eprintln!("man is not installed here: the page's roff was checked, not its rendering");
        return;
    };
    assert!(
        rendered.status.success(),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    let text = String::from_utf8_lossy(&rendered.stdout);
    for command in ["believed", "history", "export", "completions"] {
        assert!(
            text.contains(command),
            "the rendered page lacks {command}:\n{text}"
        );
    }
}
