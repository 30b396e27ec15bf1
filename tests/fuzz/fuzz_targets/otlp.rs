//! Any bytes as an OTLP/JSON trace (`asof import otlp`; see `yaml.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    asof::fuzzing::otlp(data);
});
