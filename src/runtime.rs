//! The process's tuning, in one room: the allocator and its options, the C
//! library's heap, SQLite's global configuration, and how the process ends.
//! Nothing here changes what asof answers, only how fast and in how much
//! memory; each setting's measurements are in docs/performance-log.md. This is
//! the one module of the project allowed unsafe code (the library crates
//! forbid it): every site below is a C call that sets an option.
//!
//! A fully static executable is a build setting, not code: `cargo static`
//! (an alias in `.cargo/config.toml`) builds one for Linux/glibc.

#![allow(unsafe_code)]

/// mimalloc for every allocation of Rust code: loads allocate and free
/// millions of small rows, which glibc's allocator handled markedly slower
/// (docs/performance-log.md, "allocator"). Declared here, so the binary, the
/// benchmarks and the tests all run on it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Everything the process sets before it does anything else: the C heap and
/// SQLite (before any store is opened) and the guard bulk loads hold.
pub fn init() {
    settle_malloc();
    asof_store::store::on_bulk_load(|| Box::new(FreedMemoryKept::now()));
}

/// Keeps glibc's heap from being trimmed and regrown all through a load, and
/// turns off SQLite's allocation statistics.
///
/// SQLite allocates its page cache with the C library's `malloc` (Rust code
/// uses mimalloc). With glibc's default trimming, a load returned the top of
/// the heap to the kernel and took it back tens of thousands of times; a
/// fixed trim threshold and some top padding end that. SQLite also counts
/// every allocation for statistics asof never reads, under a global mutex.
/// Call once, before anything opens a store (afterwards SQLite refuses the
/// setting, and nothing else changes).
pub fn settle_malloc() {
    // SAFETY: `sqlite3_config` with SQLITE_CONFIG_MEMSTATUS takes one int;
    // before SQLite is initialised it sets the option, after it returns
    // SQLITE_MISUSE and changes nothing.
    unsafe {
        rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // From glibc's <malloc.h>.
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_TOP_PAD: i32 = -2;
        unsafe extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        // SAFETY: `mallopt` only sets allocator parameters; both values are in
        // range, and it is called before other threads start.
        unsafe {
            mallopt(M_TRIM_THRESHOLD, 256 << 20);
            mallopt(M_TOP_PAD, 64 << 20);
        }
    }
}

/// mimalloc's `mi_option_purge_delay` (its place in `mi_option_t` in the
/// `mimalloc.h` of the v2 line this build selects; the crate names only some
/// options): how long freed memory stays committed before it is handed back,
/// in milliseconds; -1: never.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// While it lives, the memory mimalloc frees stays committed, to be reused
/// without faulting it in again (the setting is the process's; dropping it
/// puts back the one before). A load replays a slice at a time and every
/// slice frees what the one before allocated; returning those pages only to
/// fault them in again cost a load of a million events most of a second.
#[must_use = "the setting holds while the value lives"]
pub struct FreedMemoryKept {
    before: std::ffi::c_long,
}

impl FreedMemoryKept {
    pub fn now() -> Self {
        // SAFETY: reading and setting an option of the linked mimalloc; an
        // option only steers when it returns memory.
        let before = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
        FreedMemoryKept { before }
    }
}

impl Drop for FreedMemoryKept {
    fn drop(&mut self) {
        // SAFETY: as in `now`.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, self.before) };
    }
}

/// Ends the process with `code` once standard output is flushed, without the
/// clean-up at exit: everything the command opened (stores, temporary files,
/// the terminal) is closed by the time it returns, and what is left —
/// mimalloc handing its pages back to the system — was a measurable part of a
/// short command (docs/performance-log.md).
pub fn exit(code: i32) -> ! {
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
