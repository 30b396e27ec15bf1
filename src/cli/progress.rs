//! A progress bar on standard error while something long runs (a big trace
//! read, many stores exported): only on a terminal, redrawn at most ten times
//! a second, gone when the work ends.

use std::io::{IsTerminal, Write};

/// What the bar counts.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    /// Bytes, shown as MB with the rate.
    Bytes,
    /// Things of this name (`stores`).
    Count(&'static str),
}

pub struct Progress {
    what: String,
    unit: Unit,
    on: bool,
    started: std::time::Instant,
    drawn: Option<std::time::Instant>,
}

impl Progress {
    pub fn new(what: &str, unit: Unit) -> Progress {
        Progress {
            what: what.to_owned(),
            unit,
            on: std::io::stderr().is_terminal(),
            started: std::time::Instant::now(),
            drawn: None,
        }
    }

    pub fn show(&mut self, done: u64, total: u64) {
        let now = std::time::Instant::now();
        // Small work ends before a bar would help.
        if !self.on
            || now.duration_since(self.started).as_millis() < 300
            || self
                .drawn
                .is_some_and(|t| now.duration_since(t).as_millis() < 100)
        {
            return;
        }
        self.drawn = Some(now);
        let share = if total == 0 {
            1.0
        } else {
            (done as f64 / total as f64).min(1.0)
        };
        let width = 24usize;
        let filled = (share * width as f64).round() as usize;
        let count = match self.unit {
            Unit::Bytes => {
                let mb = |b: u64| b as f64 / 1e6;
                let rate = mb(done) / now.duration_since(self.started).as_secs_f64().max(1e-3);
                format!("{:.0}/{:.0} MB, {rate:.0} MB/s", mb(done), mb(total))
            }
            Unit::Count(things) => format!("{done}/{total} {things}"),
        };
        eprint!(
            "\r\x1b[2K{} ▕{}{}▏ {:.0}% {count}",
            self.what,
            "█".repeat(filled),
            " ".repeat(width - filled),
            share * 100.0,
        );
    }

    /// Says `line` on standard error on a line of its own (the bar, if drawn,
    /// comes back at the next step).
    pub fn say(&mut self, line: &str) {
        self.clear();
        self.drawn = None;
        let _ = writeln!(std::io::stderr(), "{line}");
    }

    pub fn clear(&self) {
        if self.on && self.drawn.is_some() {
            eprint!("\r\x1b[2K");
        }
    }
}
