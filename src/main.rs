#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use asof::cli::{Cli, CliError, run};
use clap::Parser;

fn main() {
    asof::store::settle_malloc();
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
    end(code)
}

/// Ends the process with `code` once standard output is flushed, without the
/// clean-up at exit: everything `run` opened (stores, temporary files, the
/// terminal) is closed by the time it returns, and what is left — mimalloc
/// handing its pages back to the system — cost a tenth of a millisecond of a
/// 3 ms `asof believed` (docs/performance.md, SPEC §12).
fn end(code: i32) -> ! {
    use std::io::Write;
    // A failed flush is a closed pipe: nothing more can be said on it.
    let _ = std::io::stdout().flush();
    #[cfg(unix)]
    {
        unsafe extern "C" {
            fn _exit(status: i32) -> !;
        }
        // SAFETY: `_exit` ends the process; no Rust code runs after it, and
        // no buffered output is left (stdout was flushed, stderr is not
        // buffered).
        unsafe { _exit(code) }
    }
    #[cfg(not(unix))]
    std::process::exit(code)
}
