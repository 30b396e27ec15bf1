//! The core builds without the terminal and command-line front ends:
//! `cargo build --lib --no-default-features` (STYLE.md: "a core that builds
//! alone"). Runs cargo itself, into its own target directory so it never waits
//! on the build that runs these tests.

use std::process::Command;

#[test]
fn the_library_builds_without_the_front_ends() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let target = concat!(env!("CARGO_MANIFEST_DIR"), "/target/no-default-features");
    let out = Command::new(cargo)
        .args([
            "build",
            "--lib",
            "--no-default-features",
            "--offline",
            "--quiet",
            "--manifest-path",
            manifest,
        ])
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "the core does not build alone:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // And it really is without them: no ratatui, crossterm or clap was built.
    // The build names its target (.cargo/config.toml), so the crates are in
    // TARGET/<host tuple>/debug/deps (or TARGET/debug/deps, were it not named).
    let names = |dir: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let built: Vec<String> = std::iter::once(String::new())
        .chain(names(std::path::Path::new(target)))
        .flat_map(|tuple| names(&std::path::Path::new(target).join(tuple).join("debug/deps")))
        .collect();
    assert!(
        built.iter().any(|f| f.starts_with("libasof")),
        "the core's build is not where the test looks: {built:?}"
    );
    for front in ["libratatui", "libcrossterm", "libclap"] {
        assert!(
            !built.iter().any(|f| f.starts_with(front)),
            "{front} was built for the core"
        );
    }
}
