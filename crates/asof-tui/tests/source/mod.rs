//! Sources for the TUI's tests, opened as `asof tui SOURCE` opens them
//! (src/cli/source.rs), named as the user would name them from the
//! workspace's root: the bundled demo, a dataset, a trace.

use asof_core::dataset::{self, Format};
use asof_core::engine;
use asof_store::store::Store;
use std::path::{Path, PathBuf};

/// The bundled demo's dataset, as the binary embeds it.
pub const DEMO_YAML: &str = include_str!("../../../../datasets/payment-outage.yaml");
/// The demo's name on every screen.
pub const DEMO_NAME: &str = "payment-outage.yaml (bundled demo)";

/// The workspace's root (where `datasets/`, `assets/` and `tests/fixtures/` are).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The bundled demo as an in-memory store.
pub fn demo() -> Result<Store, String> {
    let parsed =
        dataset::read_str(DEMO_NAME, Format::Yaml, DEMO_YAML).map_err(|e| e.to_string())?;
    in_memory(&parsed)
}

fn in_memory(parsed: &dataset::Parsed) -> Result<Store, String> {
    let replay = engine::replay(&parsed.dataset.header, &parsed.dataset.events);
    Store::in_memory(&parsed.file, &parsed.dataset, &replay).map_err(|e| e.to_string())
}

/// SOURCE (a path from the workspace's root, labelled so) as a store in
/// memory: a dataset, or an OTLP trace read with the default options.
pub fn open(source: Option<&Path>) -> Result<Store, String> {
    use asof_import::import::{self, otlp};
    let Some(name) = source else {
        return demo();
    };
    let path = root().join(name);
    let label = name.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    if otlp::looks_like(&text) {
        let options = otlp::Options::default();
        let draft = otlp::read_files(
            &[(label.as_str(), path.as_path())],
            &options,
            &mut |_, _| {},
        )
        .map_err(|e| e.to_string())?;
        let (parsed, report, replay) = import::finish(&label, draft).map_err(|e| e.to_string())?;
        let json = serde_json::to_string(&report).map_err(|e| e.to_string())?;
        return Store::in_memory_with(
            &parsed.file,
            &parsed.dataset,
            &replay,
            vec![("import_report", json)],
        )
        .map_err(|e| e.to_string());
    }
    let format = Format::from_path(&path).ok_or_else(|| format!("{label}: not a dataset"))?;
    let parsed = dataset::read_str(&label, format, &text).map_err(|e| e.to_string())?;
    in_memory(&parsed)
}

/// `asof import otlp TRACE --rules RULES --db DB`, as a library call.
pub fn import_otlp(trace: &Path, rules: &Path, db: &Path) {
    use asof_import::import::{self, otlp};
    let text = std::fs::read_to_string(rules).expect("the rules");
    let name = rules.display().to_string();
    let options = otlp::Options {
        rules: otlp::rules::parse(&name, &text).expect("the rules parse"),
        ..otlp::Options::default()
    };
    let trace_name = trace.display().to_string();
    let draft = otlp::read_files(&[(trace_name.as_str(), trace)], &options, &mut |_, _| {})
        .expect("the trace reads");
    let (parsed, report, _) = import::finish(&trace_name, draft).expect("it imports");
    let json = serde_json::to_string(&report).expect("the summary");
    Store::load(db, &parsed, false, &[("import_report", json)]).expect("it loads");
}

/// SOURCE as the user named it and its bytes' SHA-256 (for the demo, of its
/// embedded dataset), as reports and lineages record it.
pub fn origin(source: Option<&Path>) -> Result<asof_report::export::Origin, String> {
    match source {
        None => Ok(asof_report::export::Origin {
            name: DEMO_NAME.to_owned(),
            sha256: asof_store::fork::sha256_hex(DEMO_YAML.as_bytes()),
        }),
        Some(p) => Ok(asof_report::export::Origin {
            name: p.display().to_string(),
            sha256: asof_store::fork::sha256_hex(
                &std::fs::read(root().join(p)).map_err(|e| e.to_string())?,
            ),
        }),
    }
}
