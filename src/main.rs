use asof::cli::{Cli, CliError, run};
use clap::Parser;

fn main() {
    asof::runtime::init();
    let cli = Cli::parse();
    let code = match run(cli) {
        Ok(()) => 0,
        // A closed pipe (`asof history | head`) is not an error worth a message.
        Err(CliError::ClosedOutput) => 0,
        Err(e) => {
            eprintln!("asof: {}", e.message().replace('\n', "\nasof: "));
            e.exit_code()
        }
    };
    asof::runtime::exit(code)
}
