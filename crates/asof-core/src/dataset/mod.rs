//! Dataset readers (design.md §2): YAML for people, JSON Lines for machines and scale.
//!
//! Both readers produce the same raw shapes, which `validate` turns into a
//! [`Dataset`], collecting every error with its location instead of stopping
//! at the first.

pub mod jsonl;
pub mod raw;
pub mod validate;
mod yaml;

use crate::engine::Replay;
use crate::model::Dataset;
use std::fmt;
use std::path::Path;

pub use validate::replay_errors;

/// Largest YAML file read: datasets for people are small; scale uses JSONL.
pub const MAX_YAML_BYTES: u64 = 64 << 20;
/// Longest JSONL event line read.
pub const MAX_JSONL_LINE: usize = 1 << 20;
/// Longest JSONL header line read (it lists every agent and topic: 100k topics
/// take a few MiB).
pub const MAX_JSONL_HEADER: usize = 64 << 20;
/// Longest text field (claim, summary, rationale...).
pub const MAX_TEXT: usize = 64 << 10;
/// The longest evidence `content` (the whole text the agent read).
pub const MAX_CONTENT: usize = 16 << 20;

/// A place in a dataset file: 1-based line, and column where the format has one.
/// Imports count records instead of lines (`unit` names them: "edge", "row").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// The line (or the record, for an import), from 1.
    pub line: usize,
    /// The column, from 1, where the format has one.
    pub column: Option<usize>,
    /// What the importer counts instead of lines ("edge", "row").
    pub unit: Option<&'static str>,
}

impl Location {
    /// Line `line` of a dataset file.
    pub fn line(line: usize) -> Self {
        Location {
            line,
            column: None,
            unit: None,
        }
    }

    /// Line `line`, column `column`.
    pub fn at(line: usize, column: usize) -> Self {
        Location {
            line,
            column: Some(column),
            unit: None,
        }
    }

    /// Record `n` of an imported input, e.g. `record("edge", 12)`.
    pub fn record(unit: &'static str, n: usize) -> Self {
        Location {
            line: n,
            column: None,
            unit: Some(unit),
        }
    }
}

/// One problem in a dataset, with where it is and which event it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetError {
    /// The file, as the user named it.
    pub file: String,
    /// Where in it, when known.
    pub location: Option<Location>,
    /// The event's id, when the problem is one event's.
    pub event: Option<String>,
    /// What is wrong, in one sentence.
    pub message: String,
}

impl fmt::Display for DatasetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        match self.location {
            Some(Location {
                line,
                unit: Some(unit),
                ..
            }) => write!(f, " {unit} {line}")?,
            Some(Location {
                line,
                column: Some(col),
                ..
            }) => write!(f, ":{line}:{col}")?,
            Some(Location { line, .. }) => write!(f, ":{line}")?,
            None => {}
        }
        write!(f, ": ")?;
        if let Some(id) = &self.event {
            write!(f, "event {id}: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for DatasetError {}

/// All the errors found in one dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetErrors(pub Vec<DatasetError>);

impl fmt::Display for DatasetErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DatasetErrors {}

/// A dataset that passed the static rules, with each event's location (by index).
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The file, as the user named it.
    pub file: String,
    /// The validated dataset.
    pub dataset: Dataset,
    /// Each event's place in the file, by index.
    pub locations: Vec<Option<Location>>,
}

impl Parsed {
    /// Rules that only replay can check (a retraction matching nothing).
    pub fn check_replay(&self, replay: &Replay) -> Result<(), DatasetErrors> {
        let errors = replay_errors(self, replay);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(DatasetErrors(errors))
        }
    }
}

/// A dataset file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One YAML document.
    Yaml,
    /// JSON Lines: a header line, then one event per line.
    Jsonl,
}

impl Format {
    /// The format a file's extension names (`.yaml`, `.yml`, `.jsonl`), if any.
    pub fn from_path(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "yaml" | "yml" => Some(Format::Yaml),
            "jsonl" => Some(Format::Jsonl),
            _ => None,
        }
    }
}

fn whole_file_error(file: &str, message: impl Into<String>) -> DatasetErrors {
    DatasetErrors(vec![DatasetError {
        file: file.to_owned(),
        location: None,
        event: None,
        message: message.into(),
    }])
}

/// Reads and statically validates a dataset file.
pub fn read_path(path: &Path) -> Result<Parsed, DatasetErrors> {
    let name = path.display().to_string();
    let Some(format) = Format::from_path(path) else {
        return Err(whole_file_error(
            &name,
            "unknown dataset type; expected a .yaml, .yml or .jsonl file",
        ));
    };
    let file = std::fs::File::open(path)
        .map_err(|e| whole_file_error(&name, format!("cannot open the file: {e}")))?;
    match format {
        Format::Yaml => {
            let size = file.metadata().map(|m| m.len()).unwrap_or(0);
            if size > MAX_YAML_BYTES {
                return Err(whole_file_error(
                    &name,
                    format!(
                        "the YAML file is {size} bytes, over the {MAX_YAML_BYTES}-byte limit; use JSON Lines for large datasets"
                    ),
                ));
            }
            let bytes = std::fs::read(path)
                .map_err(|e| whole_file_error(&name, format!("cannot read the file: {e}")))?;
            let text = String::from_utf8(bytes).map_err(|e| {
                whole_file_error(
                    &name,
                    format!(
                        "the file is not valid UTF-8 (byte {})",
                        e.utf8_error().valid_up_to()
                    ),
                )
            })?;
            yaml::read(&name, &text)
        }
        Format::Jsonl => jsonl::read(&name, std::io::BufReader::new(file)),
    }
}

/// serde_yaml and serde_json end messages with " at line L column C" (counted in
/// the text they were given: for a JSONL line, always line 1); the location is
/// reported separately, so the suffix goes.
pub fn strip_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// Validates events built by an importer as if they had been read from a file:
/// `origins[i]` says where event `i` came from.
pub fn from_raw(
    file: &str,
    header: raw::RawHeader,
    events: Vec<raw::RawEvent>,
    origins: Vec<Location>,
) -> Result<Parsed, DatasetErrors> {
    struct Origins(Vec<Location>);
    impl validate::Positions for Origins {
        fn event(&self, index: usize) -> Option<Location> {
            self.0.get(index).copied()
        }
        fn field(&self, index: usize, _kind: &str, _field: &str) -> Option<Location> {
            self.event(index)
        }
        fn header(&self, _path: &str) -> Option<Location> {
            None
        }
    }
    validate::validate(
        file,
        header,
        events.into_iter().map(Ok).collect(),
        &Origins(origins),
    )
}

/// Reads a dataset from bytes as a file would be read (UTF-8 checked as for files).
pub fn read_bytes(name: &str, format: Format, bytes: &[u8]) -> Result<Parsed, DatasetErrors> {
    match format {
        Format::Yaml => match std::str::from_utf8(bytes) {
            Ok(text) => yaml::read(name, text),
            Err(e) => Err(whole_file_error(
                name,
                format!("the file is not valid UTF-8 (byte {})", e.valid_up_to()),
            )),
        },
        Format::Jsonl => jsonl::read(name, bytes),
    }
}

/// Reads a dataset held in memory (the bundled demo, tests).
pub fn read_str(name: &str, format: Format, text: &str) -> Result<Parsed, DatasetErrors> {
    match format {
        Format::Yaml => yaml::read(name, text),
        Format::Jsonl => jsonl::read(name, text.as_bytes()),
    }
}
