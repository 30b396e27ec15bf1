//! The library builds without the terminal and command-line front ends
//! (`cargo build -p asof --lib --no-default-features`), and the core crate
//! without SQLite (`cargo build -p asof-core`). Runs cargo itself, into its
//! own target directory so it never waits on the build that runs these tests.

use std::process::Command;

/// The crates `cargo build -p PACKAGE [extra]` built, by file name.
fn built(package: &str, extra: &[&str], dir: &str) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let target = format!("{}/target/{dir}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(cargo)
        .args(["build", "-p", package])
        .args(extra)
        .args(["--offline", "--quiet", "--manifest-path", manifest])
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{package} does not build alone:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_dir(std::path::Path::new(&target).join("debug/deps"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_library_builds_without_the_front_ends() {
    let built = built(
        "asof",
        &["--lib", "--no-default-features"],
        "no-default-features",
    );
    assert!(
        built.iter().any(|f| f.starts_with("libasof")),
        "the library's build is not where the test looks: {built:?}"
    );
    for front in ["libratatui", "libcrossterm", "libclap", "libasof_tui"] {
        assert!(
            !built.iter().any(|f| f.starts_with(front)),
            "{front} was built for the library"
        );
    }
}

#[test]
fn the_core_builds_without_sqlite_or_a_terminal() {
    let built = built("asof-core", &[], "core-alone");
    assert!(
        built.iter().any(|f| f.starts_with("libasof_core")),
        "{built:?}"
    );
    for other in [
        "librusqlite",
        "liblibsqlite3_sys",
        "libratatui",
        "libclap",
        "libasof_store",
    ] {
        assert!(
            !built.iter().any(|f| f.starts_with(other)),
            "{other} was built for the core"
        );
    }
}
