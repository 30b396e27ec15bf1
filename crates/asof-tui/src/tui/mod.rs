//! The terminal UI (design.md §8): a synchronous loop over one channel.
//!
//! An input thread and a play-clock thread send [`Msg`]s; the loop blocks on the
//! channel, applies every pending message to the [`App`] through one keymap, and
//! draws once — never when nothing changed. The loop is generic over the ratatui
//! backend so tests drive it with `TestBackend`.

pub mod action;
pub mod app;
pub mod compare_view;
pub mod fork_worker;
pub mod keymap;
pub mod layout;
pub mod live;
pub mod plane_model;
pub mod state;
pub mod text;
pub mod theme;
pub mod ui;

use action::Action;
use app::{App, TICK_MS};
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind, MouseButton, MouseEventKind,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

/// The width of the process's terminal in columns, when it has one (a
/// status line kept on one row is cut to it; with none, the caller assumes
/// a width).
pub fn terminal_columns() -> Option<usize> {
    ratatui::crossterm::terminal::size()
        .ok()
        .map(|(columns, _)| usize::from(columns))
}

/// What arrives on the loop's channel.
#[derive(Debug)]
pub enum Msg {
    /// A key, a click, the wheel or a resize.
    Input(Event),
    /// The play clock ticked.
    Tick,
    /// A worker finished a what-if fork.
    Forked(Box<Result<fork_worker::ForkResult, asof_store::fork::whatif::WhatIfError>>),
    /// A worker finished the influence ranking.
    Influence(Vec<asof_store::fork::influence::Influence>),
    /// News from a live source (design.md §6).
    Live(live::Live),
    /// A worker finished saving the fork (`s`): where, or why not.
    Saved(Result<std::path::PathBuf, String>),
    /// A worker finished writing a report (`e`).
    Exported(Result<std::path::PathBuf, String>),
}

/// A report `e` asked for: of the fork's store (when the fork is shown) or
/// of the parent, as HTML or Markdown, to this file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The fork's store, when the report is of the fork.
    pub fork: Option<std::path::PathBuf>,
    /// HTML (else Markdown).
    pub html: bool,
    /// The file to write.
    pub to: std::path::PathBuf,
    /// The review shown beside the record, for the report's "Review
    /// findings" section (a what-if's report has none: the review judged
    /// the record).
    pub review: Option<asof_core::review::Review>,
}

/// The source the TUI shows, as the user named it, with the SHA-256 of its
/// bytes: read on a worker when a fork's lineage or a report first needs it
/// (hashing a large store must not delay the first frame).
pub type OriginOf = Arc<dyn Fn() -> Result<asof_report::export::Origin, String> + Send + Sync>;

/// Writes the report of `store` to `to` atomically (a worker's part of `e`),
/// opening with `prov`.
pub fn write_report(
    store: &asof_store::store::Store,
    html: bool,
    to: &std::path::Path,
    prov: &asof_report::export::Provenance,
) -> Result<(), String> {
    let text = if html {
        asof_report::export::html::report(store, None, prov)
    } else {
        asof_report::export::markdown::report(store, prov)
    }
    .map_err(|e| e.to_string())?;
    asof_report::export::write_shared(to, &text).map_err(|e| format!("{}: {e}", to.display()))
}

/// What a report written from the TUI says of itself: of the source shown,
/// or of the what-if fork shown — named for what it is (its store is a
/// temporary file, never named in a report) and with its divergence from
/// its parent (`fork`: the fork's store file and the record it was forked
/// from).
pub fn report_provenance(
    shown: &asof_store::store::Store,
    origin: asof_report::export::Origin,
    fork: Option<(&std::path::Path, &asof_store::store::Store)>,
) -> Result<asof_report::export::Provenance, String> {
    use asof_report::export::{Divergence, Origin, Provenance};
    let Some((file, parent)) = fork else {
        return Provenance::of(shown, origin).map_err(|e| e.to_string());
    };
    let what_if = asof_store::fork::WhatIf::of(shown).map_err(|e| e.to_string())?;
    let removed = what_if
        .as_ref()
        .map_or(String::new(), |w| w.removed.join(", "));
    let name = format!(
        "what-if of {} without {removed}, made in the TUI (not saved)",
        origin.name
    );
    let sha256 = std::fs::File::open(file)
        .and_then(asof_store::fork::sha256_of)
        .map_err(|e| e.to_string())?;
    let mut prov = Provenance::of(shown, Origin { name, sha256 }).map_err(|e| e.to_string())?;
    prov.divergence = Some(
        Divergence::between(parent, &origin.sha256, shown, &prov.origin.name)
            .map_err(|e| e.to_string())?,
    );
    Ok(prov)
}

/// Work the app asks of the world outside it, handed out by [`run_loop`].
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// A what-if fork without this evidence, on a worker.
    Fork(fork_worker::ForkRequest),
    /// This text to the terminal's clipboard (OSC 52).
    Copy(String),
    /// A report written, on a worker.
    Export(Report),
    /// The fork's store file copied to a new store, on a worker.
    SaveFork {
        /// The fork's store file.
        fork: std::path::PathBuf,
        /// The new store.
        to: std::path::PathBuf,
    },
}

/// Turns a terminal event into an action, given what is open.
pub fn translate(app: &App, event: &Event) -> Option<Action> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => {
            keymap::translate(key, app.context())
        }
        Event::Mouse(m) => match m.kind {
            MouseEventKind::Down(MouseButton::Left) => Some(Action::Click(m.column, m.row)),
            MouseEventKind::ScrollDown => Some(Action::Wheel(true, m.column, m.row)),
            MouseEventKind::ScrollUp => Some(Action::Wheel(false, m.column, m.row)),
            _ => None,
        },
        Event::Resize(w, h) => Some(Action::Resize(*w, *h)),
        _ => None,
    }
}

fn apply(app: &mut App, msg: Msg) -> bool {
    let action = match msg {
        Msg::Tick => Some(Action::Tick),
        Msg::Input(event) => translate(app, &event),
        Msg::Forked(result) => {
            app.fork_finished(*result);
            return true;
        }
        Msg::Influence(ranking) => {
            app.influence_ready(ranking);
            return true;
        }
        Msg::Live(news) => return app.live_news(news),
        Msg::Saved(result) => {
            app.fork_saved(result);
            return true;
        }
        Msg::Exported(result) => {
            app.report_written(result);
            return true;
        }
    };
    action.is_some_and(|a| app.update(a))
}

/// Runs until the user quits or the channel closes. Draws first, then after
/// every batch of messages that changed something. What the app asks of the
/// world ([`Effect`]) goes to `effect`, which must not block (it starts a
/// worker, or writes a few bytes to the terminal).
pub fn run_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    rx: &Receiver<Msg>,
    playing: &AtomicBool,
    effect: &mut dyn FnMut(Effect),
) -> Result<(), B::Error> {
    terminal.draw(|f| ui::render(app, f))?;
    while let Ok(msg) = rx.recv() {
        let mut dirty = apply(app, msg);
        while !app.quit {
            match rx.try_recv() {
                Ok(msg) => dirty |= apply(app, msg),
                Err(_) => break,
            }
        }
        if let Some(evidence) = app.take_fork_request() {
            effect(Effect::Fork(evidence));
        }
        if let Some(text) = app.take_clipboard() {
            effect(Effect::Copy(text));
        }
        if let Some((fork, to)) = app.take_save_request() {
            effect(Effect::SaveFork { fork, to });
        }
        if let Some(report) = app.take_export_request() {
            effect(Effect::Export(report));
        }
        // The clock also ticks while background work runs, for the spinner.
        playing.store(app.playing || app.whatif.busy.is_some(), Ordering::Relaxed);
        if app.quit {
            break;
        }
        if dirty {
            terminal.draw(|f| ui::render(app, f))?;
        }
    }
    Ok(())
}

fn spawn_input(tx: Sender<Msg>) {
    std::thread::spawn(move || {
        while let Ok(event) = event::read() {
            if tx.send(Msg::Input(event)).is_err() {
                break;
            }
        }
    });
}

fn spawn_clock(tx: Sender<Msg>, playing: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(TICK_MS));
            if playing.load(Ordering::Relaxed) && tx.send(Msg::Tick).is_err() {
                break;
            }
        }
    });
}

/// Leaves raw mode, the alternate screen and mouse capture. Safe to call twice.
pub fn restore_terminal() {
    let _ = execute!(io::stdout(), DisableMouseCapture, LeaveAlternateScreen);
    let _ = disable_raw_mode();
}

/// Restores the terminal when dropped: on return, on error, and during unwinding.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// Stores with more events than this do not rank influence in the background:
/// it replays every cited pair once per item (minutes at a million events);
/// `asof influence` ranks them headless.
pub const INFLUENCE_AUTO_EVENTS: usize = 200_000;

/// A live source for [`run`]: the store to watch, the flag that stops its
/// threads when the UI ends, and news from a follow thread writing it.
pub struct LiveSource {
    /// The store to watch for commits.
    pub store: std::path::PathBuf,
    /// Set when the UI ends: the source's threads stop.
    pub stop: Arc<AtomicBool>,
    /// News from the follow thread writing the store, when asof writes it.
    pub news: Option<Receiver<live::Live>>,
    /// The timeline the screen opened with and what it keeps to be read
    /// again ([`asof_store::query::timeline::Timeline::load_live`]).
    pub seed: Option<(
        asof_store::query::timeline::Timeline,
        asof_store::query::timeline::Kept,
    )>,
}

/// Opens the interactive UI on `app` in the real terminal. `log` reads the
/// parent's log for the influence column and in-memory forks; `store` is SOURCE
/// when it is a store file: forks then copy it (see
/// [`fork_worker::run_fork_of_store`]) instead of replaying its log in memory.
pub fn run(
    mut app: App,
    log: fork_worker::LoadLog,
    store: Option<std::path::PathBuf>,
    live_source: Option<LiveSource>,
    origin: OriginOf,
) -> io::Result<()> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
    enable_raw_mode()?;
    let _restore = Restore;
    execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture)?;
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    let size = terminal.size()?;
    app.update(Action::Resize(size.width, size.height));
    if std::env::var_os("ASOF_TEST_PANIC").is_some() {
        // For the smoke test: proves the terminal is restored after a panic.
        terminal.draw(|f| ui::render(&app, f))?;
        panic!("injected panic (ASOF_TEST_PANIC is set)");
    }
    let (tx, rx) = channel();
    let playing = Arc::new(AtomicBool::new(false));
    spawn_input(tx.clone());
    spawn_clock(tx.clone(), playing.clone());
    let parent = Arc::new(fork_worker::Parent::new(log));
    let stop = live_source.as_ref().map(|l| l.stop.clone());
    if let Some(source) = live_source {
        let send = tx.clone();
        live::watch(source.store, source.stop, source.seed, move |news| {
            send.send(Msg::Live(news)).is_ok()
        });
        if let Some(news) = source.news {
            let send = tx.clone();
            std::thread::spawn(move || {
                for item in news {
                    if send.send(Msg::Live(item)).is_err() {
                        break;
                    }
                }
            });
        }
    }
    if app.live.is_some() {
        app.status = Some(
            "live: influence is not ranked while the log grows; `asof influence` ranks it headless"
                .to_owned(),
        );
    } else if app.timeline.mark_count() <= INFLUENCE_AUTO_EVENTS {
        let (tx, parent) = (tx.clone(), parent.clone());
        std::thread::spawn(move || {
            if let Ok((log, replay)) = parent.get() {
                let ranking = asof_store::fork::influence::influence(log, replay);
                let _ = tx.send(Msg::Influence(ranking));
            }
        });
    } else {
        app.status = Some(format!(
            "influence is not ranked in the TUI above {INFLUENCE_AUTO_EVENTS} events; `asof influence` ranks it headless"
        ));
    }
    let label = app.timeline.label.clone();
    let dispatch = |request: fork_worker::ForkRequest| match &store {
        Some(path) => {
            let (tx, label, path) = (tx.clone(), label.clone(), path.clone());
            std::thread::spawn(move || {
                let result = fork_worker::run_fork_of_store_for(&path, &label, &request);
                let _ = tx.send(Msg::Forked(Box::new(result)));
            });
        }
        None => {
            let (tx, origin, parent) = (tx.clone(), origin.clone(), parent.clone());
            std::thread::spawn(move || {
                // The lineage names the source as the user did, with the
                // SHA-256 `asof fork` would record.
                let result = match origin() {
                    Ok(origin) => parent.get().and_then(|(log, replay)| {
                        fork_worker::run_fork_for(
                            log,
                            replay,
                            &origin.name,
                            &origin.sha256,
                            &request,
                        )
                    }),
                    Err(e) => Err(asof_store::fork::whatif::WhatIfError::Source(e)),
                };
                let _ = tx.send(Msg::Forked(Box::new(result)));
            });
        }
    };
    let mut effect = |effect: Effect| match effect {
        Effect::Fork(evidence) => dispatch(evidence),
        Effect::Copy(text) => {
            use std::io::Write;
            let mut out = io::stdout();
            let _ = out
                .write_all(app::copy::osc52(&text).as_bytes())
                .and_then(|()| out.flush());
        }
        Effect::Export(report) => {
            let (tx, parent, store, label, origin) = (
                tx.clone(),
                parent.clone(),
                store.clone(),
                label.clone(),
                origin.clone(),
            );
            std::thread::spawn(move || {
                // The parent: its store file, or the log in memory.
                let parent_store = || match &store {
                    Some(path) => asof_store::store::Store::open(path).map_err(|e| e.to_string()),
                    None => parent
                        .get()
                        .map_err(|e| e.to_string())
                        .and_then(|(log, replay)| {
                            asof_store::store::Store::in_memory(&label, log, replay)
                                .map_err(|e| e.to_string())
                        }),
                };
                let written = (|| {
                    let origin = origin()?;
                    let parent = parent_store()?;
                    match &report.fork {
                        Some(path) => {
                            let fork =
                                asof_store::store::Store::open(path).map_err(|e| e.to_string())?;
                            let prov = report_provenance(&fork, origin, Some((path, &parent)))?;
                            write_report(&fork, report.html, &report.to, &prov)
                        }
                        None => {
                            let mut prov = report_provenance(&parent, origin, None)?;
                            prov.review = report.review.clone();
                            write_report(&parent, report.html, &report.to, &prov)
                        }
                    }
                })()
                .map(|()| report.to);
                let _ = tx.send(Msg::Exported(written));
            });
        }
        Effect::SaveFork { fork, to } => {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let saved = fork_worker::save_fork(&fork, &to)
                    .map(|()| to)
                    .map_err(|e| e.to_string());
                let _ = tx.send(Msg::Saved(saved));
            });
        }
    };
    let ran = run_loop(&mut terminal, &mut app, &rx, &playing, &mut effect);
    if let Some(stop) = stop {
        stop.store(true, Ordering::Relaxed);
    }
    ran?;
    terminal.show_cursor()?;
    Ok(())
}
