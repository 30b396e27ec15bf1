//! Any bytes as a JSON Lines dataset (see `yaml.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    asof::fuzzing::dataset(asof::dataset::Format::Jsonl, data);
});
