//! `--redact` on every export (docs/review.md): the command reads a redacted
//! copy of its store, in memory, so every field it writes went through the
//! detectors; the store itself is never changed.

use super::CliError;
use crate::redact::Redactor;
use crate::store::Store;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Default, Clone, Args)]
pub struct RedactArg {
    /// Replace API keys and tokens (sk-…, AKIA…, gh*_…, Bearer …, JWTs, PEM
    /// private keys), e-mail addresses and IP addresses with [redacted:KIND]
    /// in everything written; the provenance counts them. The store is never
    /// changed (docs/review.md says what is and is not detected).
    #[arg(long)]
    pub redact: bool,
    /// Also redact what this regular expression matches, as
    /// [redacted:pattern] (repeatable; turns --redact on).
    #[arg(long, value_name = "REGEX")]
    pub redact_pattern: Vec<String>,
    /// A file of such regular expressions, one per line (`#` starts a
    /// comment line; turns --redact on).
    #[arg(long, value_name = "FILE")]
    pub redact_patterns: Option<PathBuf>,
}

impl RedactArg {
    /// Whether any redaction was asked for.
    pub fn any(&self) -> bool {
        self.redact || !self.redact_pattern.is_empty() || self.redact_patterns.is_some()
    }

    /// The redactor asked for, if any.
    pub fn redactor(&self) -> Result<Option<Arc<Redactor>>, CliError> {
        if !self.any() {
            return Ok(None);
        }
        let mut patterns = self.redact_pattern.clone();
        if let Some(file) = &self.redact_patterns {
            let text = std::fs::read_to_string(file)
                .map_err(|e| CliError::Input(format!("{}: cannot read: {e}", file.display())))?;
            for (n, line) in text.lines().enumerate() {
                let line = line.trim_end_matches('\r');
                if line.trim().is_empty() || line.trim_start().starts_with('#') {
                    continue;
                }
                regex_check(line)
                    .map_err(|e| CliError::Input(format!("{}:{}: {e}", file.display(), n + 1)))?;
                patterns.push(line.to_owned());
            }
        }
        Redactor::new(true, &patterns)
            .map(|r| Some(Arc::new(r)))
            .map_err(CliError::Input)
    }

    /// `store`, or its redacted copy when redaction was asked for, with the
    /// redactor (for the provenance's counts).
    pub fn apply(&self, store: Store) -> Result<(Store, Option<Arc<Redactor>>), CliError> {
        match self.redactor()? {
            None => Ok((store, None)),
            Some(r) => {
                let copy = store.redacted(&|t| r.redact(t))?;
                Ok((copy, Some(r)))
            }
        }
    }
}

/// One pattern of a patterns file, checked alone (so its line is named).
fn regex_check(pattern: &str) -> Result<(), String> {
    Redactor::new(false, &[pattern.to_owned()]).map(|_| ())
}

/// Every string in `value` through `r` (a JSON another command wrote from
/// an unredacted store: a fork's diff).
pub fn redact_json(value: &mut serde_json::Value, r: &Redactor) {
    match value {
        serde_json::Value::String(s) => *s = r.redact(s),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| redact_json(v, r)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|v| redact_json(v, r)),
        _ => {}
    }
}
