//! Replays every input kept in `tests/fuzz_regressions/<target>/` through the
//! fuzz targets' bodies (`asof::fuzzing`): inputs that once made asof crash or
//! hang, and the seeds fuzzing started from. Each must end in an answer or an
//! error (a panic fails this test). The fuzz targets are in `tests/fuzz/`.

use asof::dataset::Format;
use std::path::Path;

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fuzz_regressions")
        .join(target);
    let mut found: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            (path.display().to_string(), std::fs::read(&path).unwrap())
        })
        .collect();
    found.sort();
    assert!(!found.is_empty(), "{}: no inputs", dir.display());
    found
}

#[test]
fn yaml_inputs_that_crashed_once_do_not_now() {
    for (name, data) in inputs("yaml") {
        eprintln!("{name}");
        asof::fuzzing::dataset(Format::Yaml, &data);
    }
}

#[test]
fn otlp_inputs_that_crashed_once_do_not_now() {
    for (name, data) in inputs("otlp") {
        eprintln!("{name}");
        asof::fuzzing::otlp(&data);
    }
}

#[test]
fn jsonl_inputs_that_crashed_once_do_not_now() {
    for (name, data) in inputs("jsonl") {
        eprintln!("{name}");
        asof::fuzzing::dataset(Format::Jsonl, &data);
    }
}

#[test]
fn store_inputs_that_crashed_once_do_not_now() {
    for (name, data) in inputs("store") {
        eprintln!("{name}");
        asof::fuzzing::store(&data);
    }
}

#[test]
fn otlp_request_inputs_that_crashed_once_do_not_now() {
    for (name, data) in inputs("otlp_request") {
        eprintln!("{name}");
        asof::fuzzing::otlp_request(&data);
    }
}

#[test]
fn http_connection_inputs_that_crashed_once_do_not_now() {
    for (name, data) in inputs("http_connection") {
        eprintln!("{name}");
        asof::fuzzing::http_connection(&data);
    }
}
