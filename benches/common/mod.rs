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

/// A process's CPU time, for the benchmarks that run the binary (not all do).
#[allow(dead_code)]
pub mod cpu {
    /// The CPU time (user and system, in seconds) process `pid` has used so
    /// far (`self` for this process), all its threads counted; `None` once it
    /// is gone. Linux counts it in USER_HZ ticks, 100 a second on every
    /// architecture it exports them for.
    pub fn seconds(pid: &str) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The fields after the command's closing parenthesis: state is the
        // first, utime the 12th and stime the 13th.
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace().skip(11);
        let user: u64 = fields.next()?.parse().ok()?;
        let system: u64 = fields.next()?.parse().ok()?;
        Some((user + system) as f64 / 100.0)
    }
}

/// A process's memory, for the benchmarks that run the binary (not all do).
#[allow(dead_code)]
pub mod memory {
    /// The peak resident memory (VmHWM, in kB) of process `pid` now; `None`
    /// once it is gone.
    pub fn peak_kb(pid: u32) -> Option<u64> {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()?
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
    }

    /// A thread that reads process `pid`'s peak memory every 20 ms until it is
    /// gone; joined, the last peak read, in kB.
    pub fn watch_peak(pid: u32) -> std::thread::JoinHandle<u64> {
        std::thread::spawn(move || {
            let mut peak = 0;
            while let Some(kb) = peak_kb(pid) {
                peak = kb.max(peak);
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            peak
        })
    }
}
