//! Any bytes as a store file: opening it and querying it must answer or refuse.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    asof::fuzzing::store(data);
});
