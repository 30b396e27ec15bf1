//! What the benchmark binaries share.

#[path = "../../tests/integration/common/serve.rs"]
#[allow(dead_code)]
pub mod serve;

/// The number after `name` on the command line (`--events 1000000`), else `default`.
pub fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
