//! `asof gen`: synthetic incidents for benchmarks and scale tests.

use super::CliError;
use crate::synth::{GenConfig, Pace, generate, generate_with, otlp_fleet, otlp_with};
use clap::Args;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct GenArgs {
    /// Number of events to generate.
    #[arg(long)]
    pub events: u64,
    /// Number of topics (every tenth is `cardinality: many`).
    #[arg(long, default_value_t = 100)]
    pub topics: u32,
    /// Number of agents.
    #[arg(long, default_value_t = 4)]
    pub agents: u32,
    /// Seed: the same seed gives the same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write an agent run as an OTLP/JSON trace (GenAI conventions) of about EVENTS
    /// spans instead of a dataset; import it with `asof import otlp`.
    #[arg(long)]
    pub otlp: bool,
    /// With --otlp: each model call's input repeats the agent's whole history,
    /// as content capture records a real agent loop (the trace grows with the
    /// square of its steps; for memory and speed tests of `import otlp`).
    #[arg(long, requires = "otlp")]
    pub history: bool,
    /// With --otlp: a fleet at work — each agent runs one run after another, each
    /// run its own trace of about N spans closed by its agent span (the default:
    /// one run per agent for the whole trace).
    #[arg(long, value_name = "N", requires = "otlp", conflicts_with = "history")]
    pub run_spans: Option<u64>,
    /// Write to this .jsonl file instead of standard output (with --incidents: the
    /// directory to write them into, created if missing).
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// Write a fleet of N incidents into --out DIR, as stores (`fleet-SEED-NNNN.db`):
    /// each of about EVENTS events (half to one and a half times as many), with
    /// one to four agents, 5–40 topics, some resolved, some aging, and
    /// verifications. For trying `asof export --format parquet` (docs/fleet.md).
    #[arg(
        long,
        value_name = "N",
        requires = "out",
        conflicts_with_all = ["otlp", "follow_rate"],
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub incidents: Option<u64>,
    /// With --incidents: write JSON Lines datasets (`fleet-SEED-NNNN.jsonl`) instead of stores.
    #[arg(long, requires = "incidents")]
    pub datasets: bool,
    /// Write the lines at this many events per second, recorded as they are
    /// written (the first event now), as a running agent would: a source for
    /// `asof tui --follow` and `asof load --follow` demos. Needs --out.
    #[arg(
        long,
        value_name = "N",
        requires = "out",
        conflicts_with = "otlp",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub follow_rate: Option<u32>,
}

/// Writes complete lines to the file no faster than `rate` lines a second
/// after the first (the header), as they come due.
struct Paced<W: Write> {
    inner: W,
    pending: Vec<u8>,
    /// Complete lines written or pending.
    lines: u64,
    rate: u32,
    started: Option<std::time::Instant>,
}

impl<W: Write> Paced<W> {
    fn new(inner: W, rate: u32) -> Self {
        Paced {
            inner,
            pending: Vec::new(),
            lines: 0,
            rate,
            started: None,
        }
    }

    /// When the `n`th event line (1-based) is due.
    fn due(&self, n: u64) -> Option<std::time::Instant> {
        let started = self.started?;
        Some(started + std::time::Duration::from_micros(n * 1_000_000 / u64::from(self.rate)))
    }
}

impl<W: Write> Write for Paced<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for line in buf.split_inclusive(|&b| b == b'\n') {
            self.pending.extend_from_slice(line);
            if !line.ends_with(b"\n") {
                continue;
            }
            self.lines += 1;
            if self.started.is_none() {
                // The header goes out at once and starts the clock.
                self.flush()?;
                self.started = Some(std::time::Instant::now());
                continue;
            }
            if let Some(next) = self.due(self.lines) {
                let now = std::time::Instant::now();
                if next > now {
                    std::thread::sleep(next - now);
                    self.flush()?;
                } else if self.pending.len() >= 1 << 16 {
                    // Behind the pace: write what is due in big pieces.
                    self.flush()?;
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.write_all(&self.pending)?;
        self.pending.clear();
        self.inner.flush()
    }
}

pub fn gen_command(args: GenArgs, stdout: &mut impl Write) -> Result<(), CliError> {
    if args.topics == 0 || args.agents == 0 {
        return Err(CliError::Input(
            "--topics and --agents must be at least 1".to_owned(),
        ));
    }
    if let (Some(n), Some(dir)) = (args.incidents, args.out.as_deref()) {
        return fleet(n, &args, dir, stdout);
    }
    let config = GenConfig {
        events: args.events,
        topics: args.topics,
        agents: args.agents,
        seed: args.seed,
    };
    // clap makes --follow-rate at least 1 and needs --out with it.
    if let (Some(rate), Some(path)) = (args.follow_rate, args.out.as_deref()) {
        let file = std::fs::File::create(path).map_err(|e| {
            CliError::Runtime(format!("{}: cannot create the file: {e}", path.display()))
        })?;
        let pace = Pace::at_rate(rate);
        let mut w = Paced::new(file, rate);
        generate_with(config, Some(pace), &mut w)?;
        w.flush()?;
        return Ok(());
    }
    match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| {
                CliError::Runtime(format!("{}: cannot create the file: {e}", path.display()))
            })?;
            let mut w = BufWriter::new(file);
            if let Some(n) = args.run_spans {
                otlp_fleet(config, n, &mut w)?;
            } else if args.otlp {
                otlp_with(config, args.history, &mut w)?;
            } else {
                generate(config, &mut w)?;
            }
            w.flush()?;
        }
        None => {
            let mut w = BufWriter::new(stdout);
            if let Some(n) = args.run_spans {
                otlp_fleet(config, n, &mut w)?;
            } else if args.otlp {
                otlp_with(config, args.history, &mut w)?;
            } else {
                generate(config, &mut w)?;
            }
            w.flush()?;
        }
    }
    Ok(())
}

/// `gen --incidents N --out DIR`: N incidents made on every core, each
/// written (a store atomically) as it is made.
fn fleet(
    n: u64,
    args: &GenArgs,
    dir: &std::path::Path,
    stdout: &mut impl Write,
) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        CliError::Input(format!(
            "{}: cannot create the directory: {e}",
            dir.display()
        ))
    })?;
    let jobs = std::thread::available_parallelism().map_or(2, usize::from);
    let one = |i: usize| -> Result<(), CliError> {
        let i = i as u64;
        let name = format!("fleet-{}-{i:04}", args.seed);
        let mut jsonl = Vec::new();
        crate::synth::fleet_incident(args.seed, i, args.events, &mut jsonl)?;
        let failed = |path: &std::path::Path, e: &dyn std::fmt::Display| {
            CliError::Runtime(format!("{}: cannot write: {e}", path.display()))
        };
        if args.datasets {
            let path = dir.join(format!("{name}.jsonl"));
            return std::fs::write(&path, &jsonl).map_err(|e| failed(&path, &e));
        }
        let path = dir.join(format!("{name}.db"));
        let file = format!("{name}.jsonl");
        // The generator always writes a valid log.
        let parsed = crate::dataset::read_bytes(&file, crate::dataset::Format::Jsonl, &jsonl)
            .map_err(|e| CliError::Runtime(format!("{file}: {e}")))?;
        crate::store::Store::load(&path, &parsed, true, &[]).map_err(|e| failed(&path, &e))?;
        Ok(())
    };
    // The first failure is said; incidents not yet begun are not made.
    let made = asof_core::pool::map(n as usize, jobs, one, |_, _| {});
    if let Some(Err(e)) = made.into_iter().flatten().find(Result::is_err) {
        return Err(e);
    }
    writeln!(
        stdout,
        "wrote {n} incidents to {} ({})",
        dir.display(),
        if args.datasets { "datasets" } else { "stores" }
    )?;
    Ok(())
}
