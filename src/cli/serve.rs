//! `asof serve`: agents export OTLP/HTTP straight to asof (design.md §7,
//! "Live ingestion"). The receiver (crates/asof-serve) appends each request
//! to the store's archive and syncs it before answering 200; the store
//! follows the archive as `asof load --follow` follows a trace file, so it is
//! at every batch what `asof import otlp` of the archive gives.

use super::CliError;
use super::import::{TraceArgs, TraceOptions};
use crate::store::follow::Again;
use asof_serve::archive::{self, Archive};
use asof_serve::server::{self, Config};
use clap::Args;
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The store the received traces and logs go into: created, or continued
    /// from its archive (STORE.otlp.jsonl, beside it) when serve wrote it.
    #[arg(long)]
    pub db: PathBuf,
    /// Where to listen. A non-loopback address needs --token.
    #[arg(long, default_value = "127.0.0.1:4318")]
    pub listen: String,
    /// The bearer token clients must send (`Authorization: Bearer TOKEN`).
    #[arg(long)]
    pub token: Option<String>,
    /// The largest request body, after decompression, in MiB.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub max_body_mib: u16,
    /// Connections open at once; one more is answered 503 (retry) and closed.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub max_connections: u16,
    /// The archive is written in segments of about this many MiB
    /// (STORE.otlp.jsonl, then STORE.otlp.jsonl.000002, …), read as one.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub segment_mib: u32,
    #[command(flatten)]
    pub trace: TraceOptions,
}

/// How often the store looks at the archive for new lines.
const POLL: std::time::Duration = std::time::Duration::from_millis(50);

pub fn run(args: ServeArgs, out: &mut impl Write) -> Result<(), CliError> {
    let listen = address(&args.listen)?;
    if !listen.ip().is_loopback() && args.token.is_none() {
        return Err(CliError::Input(format!(
            "--listen {}: a non-loopback address needs --token, so that only clients that send it can write to the store",
            args.listen
        )));
    }
    // Rules are read (and refused) before anything listens.
    args.trace.options()?;
    let archive_path = archive::path_for(&args.db);
    if args.db.exists() && !archive_path.exists() {
        return Err(CliError::Input(format!(
            "{}: exists without its archive {}, so serve cannot continue it; name a new --db",
            args.db.display(),
            archive_path.display()
        )));
    }
    let archive = Archive::open(&archive_path, u64::from(args.segment_mib) << 20).map_err(|e| {
        CliError::Runtime(format!(
            "{}: cannot open the archive: {e}",
            archive_path.display()
        ))
    })?;
    let config = Config {
        listen,
        token: args.token.clone(),
        limit: usize::from(args.max_body_mib) << 20,
        max_connections: usize::from(args.max_connections),
        idle: std::time::Duration::from_secs(60),
        queue: 256,
        describe: format!(
            "asof serve: an OTLP/HTTP receiver (POST /v1/traces, /v1/logs; application/x-protobuf or application/json, gzip or not).\narchive: {}\nstore: {}\n",
            archive_path.display(),
            args.db.display()
        ),
        // Findings sent as logs go beside the store, where every command
        // reading it finds them (and says so).
        review: Some(super::review::beside(Some(&args.db))),
    };
    let running = server::start(config, archive).map_err(|e| {
        CliError::Input(format!(
            "--listen {}: cannot listen there ({e})",
            args.listen
        ))
    })?;
    // The banner is best effort: a closed stdout (`asof serve | head -1`)
    // must not stop a receiver that clients are already sending to.
    let _ = writeln!(
        out,
        "asof serve: OTLP/HTTP on http://{} (POST /v1/traces, /v1/logs) → {} → {}; Ctrl-C stops",
        running.addr,
        archive_path.display(),
        args.db.display()
    );
    let _ = writeln!(
        out,
        "  export OTEL_EXPORTER_OTLP_ENDPOINT=http://{}   # then: asof tui {} --follow",
        running.addr,
        args.db.display()
    );
    let _ = out.flush();
    // The store follows the archive, on a thread of its own.
    // The store's events, the archive bytes it applied and the traces
    // converted again from their start, after each batch.
    let store_state: Arc<Mutex<Option<(usize, u64, Again)>>> = Arc::new(Mutex::new(None));
    let stopping = Arc::new(AtomicBool::new(false));
    let follower = {
        let trace = TraceArgs {
            with: Vec::new(),
            read: args.trace,
        };
        let (db, archive_path) = (args.db.clone(), archive_path.clone());
        let (state, stopping) = (store_state.clone(), stopping.clone());
        std::thread::spawn(move || {
            super::follow::run(&archive_path, &db, false, POLL, &trace, true, |batch| {
                if let Ok(mut s) = state.lock() {
                    *s = (batch.line > 0).then_some((
                        batch.total,
                        batch.offset,
                        batch.converted_again,
                    ));
                }
                !stopping.load(Ordering::SeqCst)
            })
        })
    };
    let status = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let signalled = stop_on_signals()?;
    let mut ticks = 0u32;
    loop {
        if follower.is_finished() || signalled.load(Ordering::SeqCst) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        ticks += 1;
        if status && ticks.is_multiple_of(5) {
            let s = &running.stats;
            let now = Status {
                requests: s.requests.load(Ordering::Relaxed),
                items: s.items.load(Ordering::Relaxed),
                rejected: s.rejected.load(Ordering::Relaxed),
                refused: s.refused.load(Ordering::Relaxed),
                archive_bytes: s.archive_bytes.load(Ordering::Relaxed),
                store: store_state.lock().map(|s| *s).unwrap_or_default(),
            };
            // Kept to one row, or each refresh would leave the wrapped rest.
            let columns = crate::tui::terminal_columns().unwrap_or(80);
            eprint!(
                "\r\x1b[2K{}",
                crate::text::cut(&now.line(), columns.saturating_sub(1))
            );
        }
    }
    let clean = signalled.load(Ordering::SeqCst);
    if clean && status {
        eprintln!();
    }
    if clean {
        eprintln!(
            "asof serve: stopping: no new requests; the store takes in what the archive holds (a second signal stops at once, losing nothing answered 200)"
        );
    }
    // Stops taking requests; those read are answered and their lines synced.
    let stats = running.stats.clone();
    running.stop();
    if clean {
        // The store takes in every line archived: what a restart would
        // otherwise have to (a store behind its archive answers for less).
        let archived = stats.archive_bytes.load(Ordering::SeqCst);
        while !follower.is_finished() {
            let applied = store_state.lock().ok().and_then(|s| *s).map(|(_, b, _)| b);
            if archived == 0 || applied.is_some_and(|b| b >= archived) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    stopping.store(true, Ordering::SeqCst);
    match follower.join() {
        Ok(Ok(())) => {}
        Ok(Err(stop)) => {
            return Err(CliError::Input(format!(
                "the store stopped following the archive: {stop}; every request answered 200 is in {}",
                archive_path.display()
            )));
        }
        Err(_) => return Err(CliError::Runtime("the store's follower failed".to_owned())),
    }
    if !args.db.exists() {
        eprintln!(
            "asof serve: stopped before any request: no store written ({} is empty)",
            archive_path.display()
        );
        return Ok(());
    }
    // The write-ahead log folded into the file: the `.db` copied alone
    // holds everything.
    let settled = crate::store::follow::settle(&args.db)?;
    eprintln!(
        "asof serve: stopped: {} holds every request in {}{}",
        args.db.display(),
        archive_path.display(),
        if settled {
            ""
        } else {
            "; another process reading the store keeps part of it in its -wal file until it closes"
        }
    );
    Ok(())
}

/// SIGINT and SIGTERM ask serve to stop cleanly (the flag returned is set);
/// a second one ends the process at once: everything answered 200 is in the
/// synced archive, which the next start takes in.
fn stop_on_signals() -> Result<Arc<AtomicBool>, CliError> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let signalled = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM] {
        let registered = signal_hook::flag::register_conditional_shutdown(
            signal,
            128 + signal,
            signalled.clone(),
        )
        .and_then(|_| signal_hook::flag::register(signal, signalled.clone()));
        registered.map_err(|e| CliError::Runtime(format!("cannot handle signal {signal}: {e}")))?;
    }
    Ok(signalled)
}

/// What `serve`'s status line says, read at one moment.
struct Status {
    requests: u64,
    items: u64,
    rejected: u64,
    refused: u64,
    archive_bytes: u64,
    /// The store's events, the archive bytes it has applied and the traces
    /// converted again (`None`: nothing applied yet).
    store: Option<(usize, u64, Again)>,
}

impl Status {
    /// One line: how far the store is behind the archive (the delay grows
    /// with the run: design.md §7), then what was received — in that
    /// order, so a narrow terminal's cut keeps the store.
    fn line(&self) -> String {
        let store = match self.store {
            None => "store: waiting for the first request".to_owned(),
            Some((events, applied, _)) if applied >= self.archive_bytes => {
                format!("store: {events} events, up to date")
            }
            Some((events, applied, _)) => {
                let behind = self.archive_bytes - applied;
                // Never "0.0 MB behind": under a megabyte, in kB, rounded up.
                let behind = if behind < 1_000_000 {
                    format!("{} kB", behind.div_ceil(1000))
                } else {
                    format!("{:.1} MB", behind as f64 / 1e6)
                };
                format!("store: {events} events, {behind} of the archive behind")
            }
        };
        // How often spans that arrived late (an agent span after the spans
        // under it, a request overtaken by the next) made a trace be
        // converted again, from a checkpoint or from its start.
        let store = match self.store.and_then(|(_, _, again)| again.describe()) {
            Some(again) => format!("{store} ({again})"),
            None => store,
        };
        format!(
            "{store} · {} requests · {} spans and records · {} rejected · {} refused · archive {:.1} MB",
            self.requests,
            self.items,
            self.rejected,
            self.refused,
            self.archive_bytes as f64 / 1e6,
        )
    }
}

/// `--listen`: an address and port (`127.0.0.1:4318`, `[::1]:4318`,
/// `localhost:4318`).
fn address(text: &str) -> Result<SocketAddr, CliError> {
    text.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            CliError::Input(format!(
                "--listen {text}: not an address and port (e.g. 127.0.0.1:4318)"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::{Again, Status};

    fn status(archive_bytes: u64, store: Option<(usize, u64, Again)>) -> String {
        Status {
            requests: 12,
            items: 2400,
            rejected: 3,
            refused: 1,
            archive_bytes,
            store,
        }
        .line()
    }

    /// The status line says how far the store is behind the archive, and
    /// that it is up to date once it applied every byte.
    #[test]
    fn the_status_line_says_how_far_the_store_is_behind() {
        assert_eq!(
            status(5_000_000, None),
            "store: waiting for the first request · 12 requests · 2400 spans and records · 3 rejected · 1 refused · archive 5.0 MB"
        );
        assert_eq!(
            status(5_000_000, Some((900, 3_700_000, Again::default()))),
            "store: 900 events, 1.3 MB of the archive behind · 12 requests · 2400 spans and records · 3 rejected · 1 refused · archive 5.0 MB"
        );
        assert!(
            status(5_000_000, Some((900, 4_999_990, Again::default())))
                .starts_with("store: 900 events, 1 kB of the archive behind · ")
        );
        assert!(
            status(5_000_000, Some((1200, 5_000_000, Again::default())))
                .starts_with("store: 1200 events, up to date · ")
        );
        // Traces converted again are counted, from a checkpoint and from
        // their start.
        let again = |from_checkpoint, from_start| Again {
            from_checkpoint,
            from_start,
            whole: 0,
        };
        assert!(
            status(5_000_000, Some((1200, 5_000_000, again(0, 3)))).starts_with(
                "store: 1200 events, up to date (traces converted again from the start 3 times) · "
            )
        );
        assert!(
            status(5_000_000, Some((1200, 5_000_000, again(12, 1)))).starts_with(
                "store: 1200 events, up to date (traces taken up from a checkpoint 12 times, converted again from the start once) · "
            )
        );
        // Every line converted again (a span fell into a run let go) is
        // said apart from the traces converted again.
        let whole = Again {
            whole: 2,
            ..again(0, 3)
        };
        assert!(
            status(5_000_000, Some((1200, 5_000_000, whole))).starts_with(
                "store: 1200 events, up to date (traces converted again from the start 3 times; every line converted again twice) · "
            )
        );
        // Cut to a narrow terminal, the store's part stays, and no number
        // is cut into another.
        let cut = crate::text::cut(
            &status(5_000_000, Some((900, 3_700_000, Again::default()))),
            79,
        );
        assert!(
            cut.starts_with("store: 900 events, 1.3 MB of the archive behind · "),
            "{cut}"
        );
        assert!(
            cut.ends_with('…') && crate::text::width(&cut) <= 79,
            "{cut}"
        );
    }
}
