//! Any bytes as an `asof serve` request body: its first byte picks traces or
//! logs, protobuf or JSON, gzip or not (see `yaml.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    asof::fuzzing::otlp_request(data);
});
