//! Any bytes as what a client sends on an `asof serve` connection: its
//! requests read one after another, each body decoded (see `yaml.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    asof::fuzzing::http_connection(data);
});
