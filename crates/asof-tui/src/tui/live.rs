//! Live review (design.md §6): the TUI on a store that is still being written.
//!
//! ```text
//!   FILE ──follow thread (store::follow)──▶ STORE ◀── watch thread ──Msg::Live──▶ loop
//!                                           (another process may write it instead)
//! ```
//!
//! The watch thread asks SQLite every [`POLL`] whether another connection
//! committed (`PRAGMA data_version`); when one did, it reads the timeline
//! again off the loop's thread and sends it, so the loop only swaps it in
//! ([`crate::tui::app::App::refresh`]). It reads again only what the
//! follow's batches since the last read changed ([`Timeline::read_again`]),
//! not the whole scrub index and ledger: at a million events that was a
//! tenth of a second a refresh, several times a second. Once a second
//! without news it sends [`Live::Quiet`], for the header's age of the
//! newest event.

use asof_store::query::timeline::{Kept, Timeline};
use asof_store::store::Store;
use asof_store::store::follow::{Batch, Stop};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a live source is looked at.
pub const POLL: Duration = Duration::from_millis(100);

/// What a live TUI hears from its source.
pub enum Live {
    /// The store changed: its timeline, read again.
    Refreshed(Box<Timeline>),
    /// A second passed without news.
    Quiet,
    /// Following stopped; what is on screen stays. The sentence says why.
    Stopped(String),
    /// The file the store follows (`asof serve`'s archive, a followed
    /// trace) holds this many complete lines the store has not taken in.
    Behind(u64),
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Live::Refreshed(_) => f.write_str("Refreshed"),
            Live::Quiet => f.write_str("Quiet"),
            Live::Stopped(why) => write!(f, "Stopped({why})"),
            Live::Behind(lines) => write!(f, "Behind({lines})"),
        }
    }
}

/// Watches the store at `path` until `stop` is set or the channel closes,
/// sending what [`Live`] says through `send`. `seed`: the timeline the screen
/// opened with and what it keeps ([`Timeline::load_live`]), so that even the
/// first change is read again, not the whole store.
pub fn watch(
    path: PathBuf,
    stop: Arc<AtomicBool>,
    seed: Option<(Timeline, Kept)>,
    send: impl Fn(Live) -> bool + Send + 'static,
) {
    std::thread::spawn(move || {
        // Each read again copies the index and its lists (tens of megabytes
        // at a million events) and the last timeline is dropped: the memory
        // freed is kept for the next (docs/performance-log.md, session 46).
        let _kept = asof_store::store::freed_memory_kept();
        let watch = match asof_store::store::Watch::open(&path) {
            Ok(watch) => watch,
            Err(e) => {
                send(Live::Stopped(format!(
                    "{}: cannot be watched: {e}",
                    path.display()
                )));
                return;
            }
        };
        let version = |watch: &asof_store::store::Watch| watch.version();
        let mut seen = version(&watch).ok();
        // The timeline last sent and what it keeps to be read again.
        let mut last = seed;
        let mut quiet_since = Instant::now();
        let (mut behind, mut lag_read) = (0, Instant::now());
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(POLL);
            // How far the store is behind the file it follows, looked at
            // once a second and said when it changes (a receiver's store may
            // lag its archive under load).
            if lag_read.elapsed() >= Duration::from_secs(1) {
                lag_read = Instant::now();
                let now_behind = lag(&path).unwrap_or(0);
                if now_behind != behind {
                    behind = now_behind;
                    if !send(Live::Behind(behind)) {
                        return;
                    }
                }
            }
            let now = version(&watch).ok();
            let news = if now != seen {
                seen = now;
                match read_again(&path, last.take()) {
                    Ok((timeline, kept)) => {
                        last = Some((timeline.clone(), kept));
                        Live::Refreshed(Box::new(timeline))
                    }
                    Err(e) => Live::Stopped(format!("{e}; the screen shows the store as it was")),
                }
            } else if quiet_since.elapsed() >= Duration::from_secs(1) {
                Live::Quiet
            } else {
                continue;
            };
            quiet_since = Instant::now();
            let stopped = matches!(news, Live::Stopped(_));
            if !send(news) || stopped {
                return;
            }
        }
    });
}

/// The store at `path` read again: of what `last` read, only what changed
/// since (whole the first time).
pub fn read_again(
    path: &std::path::Path,
    last: Option<(Timeline, Kept)>,
) -> Result<(Timeline, Kept), asof_store::store::StoreError> {
    let store = Store::open(path)?;
    match last {
        Some((timeline, mut kept)) => {
            let timeline = timeline.read_again(store, &mut kept)?;
            Ok((timeline, kept))
        }
        None => Timeline::load_live(store),
    }
}

/// The complete lines of the file the store at `path` follows that it has
/// not taken in (`None`: it follows nothing, or the file is not there).
fn lag(path: &std::path::Path) -> Option<u64> {
    let store = Store::open(path).ok()?;
    asof_store::store::follow::behind(&store, path, false)
        .ok()?
        .map(|b| b.lines)
}

/// Runs a follow of a file into a store on a thread (`follow` is handed the
/// callback each batch calls, as [`asof_store::store::follow::follow`] takes it)
/// until `stop` is set. Returns once the store holds the file's first lines
/// (a batch past line 0),
/// or with the reason it could not. A later stop is sent through `send`.
pub fn follow_file(
    follow: impl FnOnce(&mut dyn FnMut(&Batch) -> bool) -> Result<(), Stop> + Send + 'static,
    stop: Arc<AtomicBool>,
    send: impl Fn(Live) -> bool + Send + 'static,
) -> Result<(), Stop> {
    let (ready, started) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut first = Some(ready);
        let result = follow(&mut |batch| {
            // Line 0: still waiting for the file's first line, so no store yet.
            if batch.line > 0
                && let Some(ready) = first.take()
            {
                let _ = ready.send(Ok(()));
            }
            !stop.load(Ordering::Relaxed)
        });
        match (result, first) {
            (Err(e), Some(ready)) => {
                let _ = ready.send(Err(e));
            }
            (Err(e), None) => {
                send(Live::Stopped(format!(
                    "{}; following stopped, the screen keeps what was applied",
                    e.to_string().replace('\n', "; ")
                )));
            }
            (Ok(()), _) => {}
        }
    });
    match started.recv() {
        Ok(result) => result,
        // The thread ended without a word: only by panicking.
        Err(_) => Err(Stop::File(
            "the follow thread ended unexpectedly".to_owned(),
        )),
    }
}
