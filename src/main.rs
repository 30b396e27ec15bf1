#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use asof::cli::{Cli, CliError, run};
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    asof::store::settle_malloc();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed pipe (`asof history | head`) is not an error worth a message.
            if let CliError::ClosedOutput = e {
                return ExitCode::SUCCESS;
            }
            eprintln!("asof: {}", e.message().replace('\n', "\nasof: "));
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
