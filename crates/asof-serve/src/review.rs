//! Review findings sent to `asof serve` (docs/review.md): `POST /v1/logs`
//! records that are asof review findings (`gen_ai.evaluation.result` with
//! `gen_ai.evaluation.name` = `asof.review`) are a reviewer's, not the
//! agent's. They go to the store's review file (beside it, synced), never
//! to the archive the store's log is read from.

use asof_core::review::{self, Finding};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Mutex;

/// Whether a log record is an asof review finding.
fn is_finding(record: &Value) -> bool {
    record
        .get("attributes")
        .and_then(Value::as_array)
        .is_some_and(|attrs| {
            attrs.iter().any(|kv| {
                kv.get("key").and_then(Value::as_str) == Some("gen_ai.evaluation.name")
                    && kv
                        .get("value")
                        .and_then(|v| v.get("stringValue"))
                        .and_then(Value::as_str)
                        == Some(review::otlp::NAME)
            })
        })
}

/// Takes the review findings out of a logs request (OTLP/JSON), leaving the
/// rest; a finding record that does not read as one refuses the request.
pub fn split(request: &mut Value) -> Result<Vec<Finding>, String> {
    let mut taken = Vec::new();
    for resource in request
        .get_mut("resourceLogs")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for scope in resource
            .get_mut("scopeLogs")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(records) = scope.get_mut("logRecords").and_then(Value::as_array_mut) {
                let (findings, rest): (Vec<Value>, Vec<Value>) =
                    std::mem::take(records).into_iter().partition(is_finding);
                *records = rest;
                taken.extend(findings);
            }
        }
    }
    if taken.is_empty() {
        return Ok(Vec::new());
    }
    // Scopes and resources left with nothing go too (the review's own scope).
    let empty = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_array)
            .is_none_or(|a| a.is_empty())
    };
    if let Some(resources) = request
        .get_mut("resourceLogs")
        .and_then(Value::as_array_mut)
    {
        for resource in resources.iter_mut() {
            if let Some(scopes) = resource.get_mut("scopeLogs").and_then(Value::as_array_mut) {
                scopes.retain(|s| !empty(s, "logRecords"));
            }
        }
        resources.retain(|r| !empty(r, "scopeLogs"));
    }
    let only = serde_json::json!({"resourceLogs": [{"scopeLogs": [{"logRecords": taken}]}]});
    review::otlp::from_logs(&only.to_string())
}

/// The store's review file, appended to by one request at a time.
#[derive(Debug)]
pub struct ReviewFile {
    path: PathBuf,
    lock: Mutex<()>,
}

impl ReviewFile {
    /// The review file at `path`, not yet opened (it is made on the first finding).
    pub fn new(path: PathBuf) -> ReviewFile {
        ReviewFile {
            path,
            lock: Mutex::new(()),
        }
    }

    /// Appends the findings not already there (a retried request sends the
    /// same again); one whose id the file holds with other content is
    /// refused, and nothing of the request is written.
    pub fn keep(&self, findings: &[Finding]) -> Result<usize, String> {
        let _one_at_a_time = self
            .lock
            .lock()
            .map_err(|_| "the review file's lock is poisoned")?;
        let held: Vec<Finding> = if self.path.exists() {
            review::read_file(&self.path)
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|(_, f)| f)
                .collect()
        } else {
            Vec::new()
        };
        let mut new = Vec::new();
        for f in findings {
            match held.iter().chain(&new).find(|h: &&Finding| h.id == f.id) {
                Some(h) if h == f => {}
                Some(_) => {
                    return Err(format!(
                        "finding {} is in {} already, with other content",
                        f.id,
                        self.path.display()
                    ));
                }
                None => new.push(f.clone()),
            }
        }
        for f in &new {
            review::append(&self.path, f)
                .map_err(|e| format!("{}: cannot append: {e}", self.path.display()))?;
        }
        Ok(new.len())
    }
}
