//! Any bytes as a YAML dataset: read (and, when valid, replay and load in memory)
//! must return a result or an error, never panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    asof::fuzzing::dataset(asof::dataset::Format::Yaml, data);
});
