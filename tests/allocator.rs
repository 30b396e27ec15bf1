#![allow(unsafe_code)] // reads mimalloc's option, as the runtime sets it

//! The allocator setting a load makes (`asof::runtime::FreedMemoryKept`), in a
//! test binary of its own: the setting is the process's, and the loads of
//! other tests would change it under this one.

/// `mi_option_purge_delay` in `mimalloc.h` (v2), whose default is 10 ms.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn purge_delay() -> std::ffi::c_long {
    // SAFETY: reads an option of the linked mimalloc.
    unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }
}

#[test]
fn a_load_keeps_freed_memory_while_it_runs_and_puts_the_setting_back() {
    // The option the setting names is the purge delay: its default.
    assert_eq!(purge_delay(), 10, "option 15 is not mimalloc's purge delay");
    {
        let _kept = asof::runtime::FreedMemoryKept::now();
        assert_eq!(purge_delay(), -1);
    }
    assert_eq!(purge_delay(), 10);
}
