//! `asof gen`: synthetic incidents for benchmarks and scale tests.

use super::CliError;
use crate::synth::{GenConfig, generate, otlp};
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
    /// Write to this .jsonl file instead of standard output.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
}

pub fn gen_command(args: GenArgs, stdout: &mut impl Write) -> Result<(), CliError> {
    if args.topics == 0 || args.agents == 0 {
        return Err(CliError::Input(
            "--topics and --agents must be at least 1".to_owned(),
        ));
    }
    let config = GenConfig {
        events: args.events,
        topics: args.topics,
        agents: args.agents,
        seed: args.seed,
    };
    match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| {
                CliError::Runtime(format!("{}: cannot create the file: {e}", path.display()))
            })?;
            let mut w = BufWriter::new(file);
            if args.otlp {
                otlp(config, &mut w)?;
            } else {
                generate(config, &mut w)?;
            }
            w.flush()?;
        }
        None => {
            let mut w = BufWriter::new(stdout);
            if args.otlp {
                otlp(config, &mut w)?;
            } else {
                generate(config, &mut w)?;
            }
            w.flush()?;
        }
    }
    Ok(())
}
