//! Many stores into one Hive-partitioned directory (docs/fleet.md):
//!
//! ```text
//! DIR/<table>/incident=<id>/part-<digest>.parquet      one file per table and incident
//! ```
//!
//! `<digest>` is the first 16 hex digits of SHA-256 over the schema version and
//! the store's bytes: a store exported before and unchanged since has every
//! file of its digest already, and is skipped without being opened. A changed
//! store's files are written beside the old ones (a temporary name, renamed
//! into place), then the old ones are removed; `incidents` is written last.
//!
//! Stores are taken by `jobs` threads, each exporting one store at a time. A
//! store that cannot be read (not a store, damaged, of another format) is
//! reported and the others go on. Two stores of one incident are refused
//! before anything is written: a partition holds one store.

use crate::tables::{self, Origin, SCHEMA_VERSION, TABLES};
use asof_store::fork::{sha256_hex, sha256_of};
use asof_store::store::Store;
use std::path::{Path, PathBuf};

/// What happened to one store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Its tables were written (`replaced`: over an earlier export of the incident).
    Written {
        /// The store's incident.
        incident: String,
        /// Whether it replaced an earlier export of the incident.
        replaced: bool,
    },
    /// Its files from an earlier export are there and it has not changed.
    Unchanged {
        /// The store's incident.
        incident: String,
    },
    /// It could not be exported; the sentence says why.
    Failed {
        /// Why, in one sentence.
        reason: String,
    },
}

/// One store's result, as it comes in.
#[derive(Debug, Clone)]
pub struct Done {
    /// The store, as named.
    pub store: PathBuf,
    /// What happened to it.
    pub outcome: Outcome,
}

/// What refuses a whole export before anything is written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Two stores of one incident.
    #[error(
        "{first} and {second} are both incident `{incident}`: a partition holds one store, so export them to different directories (or load one under another incident id)"
    )]
    Duplicate {
        /// The incident.
        incident: String,
        /// The first store of it, as named.
        first: String,
        /// The second.
        second: String,
    },
    /// A directory or file could not be written.
    #[error("{path}: cannot write: {source}")]
    Io {
        /// Where.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The partition directory's name for an incident id: `incident=` and the id,
/// with every byte outside `[A-Za-z0-9._-]` written `%XX` (Hive's escaping,
/// applied to more bytes than Hive needs, so the name is safe on any file
/// system and object store; DuckDB, Spark and pyarrow read the id back).
pub fn partition(incident: &str) -> String {
    let mut name = String::from("incident=");
    for b in incident.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-' => name.push(b as char),
            _ => name.push_str(&format!("%{b:02X}")),
        }
    }
    name
}

/// Exports `stores` into `out` with `jobs` threads, calling `progress` with
/// each store's result as it comes in (on the calling thread). Returns every
/// result, in the stores' order.
/// With `redact`, each store is read through a redacted copy of it
/// (docs/review.md) and its files are named apart from an unredacted export.
pub fn export(
    stores: &[PathBuf],
    out: &Path,
    jobs: usize,
    redact: Option<&asof_core::redact::Redactor>,
    mut progress: impl FnMut(&Done),
) -> Result<Vec<Done>, ExportError> {
    // First, each store's incident (a header read), so that two stores of one
    // incident are refused before any file is written.
    // A store that cannot be opened is reported with the others, not a stop.
    let incidents: Vec<Result<String, String>> = asof_core::pool::map(
        stores.len(),
        jobs,
        |i| {
            Ok::<_, std::convert::Infallible>(
                Store::open(&stores[i])
                    .map(|s| s.header().incident.id.clone())
                    .map_err(|e| e.to_string()),
            )
        },
        |_, _| {},
    )
    .into_iter()
    .flatten()
    .flatten()
    .collect();
    let mut seen: std::collections::HashMap<&str, &Path> = Default::default();
    for (path, id) in stores.iter().zip(&incidents) {
        if let Ok(id) = id
            && let Some(first) = seen.insert(id, path)
        {
            return Err(ExportError::Duplicate {
                incident: id.clone(),
                first: first.display().to_string(),
                second: path.display().to_string(),
            });
        }
    }
    let make = |dir: &Path| {
        std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
            path: dir.display().to_string(),
            source,
        })
    };
    for (table, _) in TABLES {
        make(&out.join(table))?;
    }
    let results = asof_core::pool::map(
        stores.len(),
        jobs,
        |i| {
            let path = &stores[i];
            let outcome = match &incidents[i] {
                Err(reason) => Outcome::Failed {
                    reason: reason.clone(),
                },
                Ok(incident) => export_one(path, incident, out, redact)
                    .unwrap_or_else(|reason| Outcome::Failed { reason }),
            };
            // A store that fails is an outcome, not a stop.
            Ok::<_, std::convert::Infallible>(Done {
                store: path.to_owned(),
                outcome,
            })
        },
        |_, done| {
            if let Ok(done) = done {
                progress(done);
            }
        },
    );
    Ok(results.into_iter().flatten().flatten().collect())
}

/// The digest that names a store's files: SHA-256 over the schema version and
/// the store's SHA-256 (16 hex digits), and the store's SHA-256.
/// A redacted export's digest also covers the patterns it was redacted with.
fn digests(
    path: &Path,
    redact: Option<&asof_core::redact::Redactor>,
) -> std::io::Result<(String, String)> {
    let sha256 = sha256_of(std::fs::File::open(path)?)?;
    let redacted = match redact {
        None => String::new(),
        Some(r) => format!("\nredacted\n{}", r.patterns().join("\n")),
    };
    let named = sha256_hex(format!("asof-fleet/{SCHEMA_VERSION}\n{sha256}{redacted}").as_bytes());
    Ok((named[..16].to_owned(), sha256))
}

/// Exports one store (whose incident is `incident`); a sentence when it cannot.
fn export_one(
    path: &Path,
    incident: &str,
    out: &Path,
    redact: Option<&asof_core::redact::Redactor>,
) -> Result<Outcome, String> {
    let named = path.display().to_string();
    let (digest, sha256) =
        digests(path, redact).map_err(|e| format!("{named}: cannot read: {e}"))?;
    let part = partition(incident);
    let file = format!("part-{digest}.parquet");
    let dirs: Vec<PathBuf> = TABLES
        .iter()
        .map(|(t, _)| out.join(t).join(&part))
        .collect();
    if dirs.iter().all(|d| d.join(&file).is_file()) {
        return Ok(Outcome::Unchanged {
            incident: incident.to_owned(),
        });
    }
    let store = Store::open_snapshot(path).map_err(|e| e.to_string())?;
    // A fleet's tables hold what agents did: a what-if replay among them
    // would read as the record in every table but one.
    if let Some(what_if) = asof_store::fork::label::WhatIf::of(&store).map_err(|e| e.to_string())? {
        return Err(format!(
            "{named}: {}: a fleet export holds records only (export its parent, {})",
            what_if.banner(),
            what_if.parent
        ));
    }
    let store = match redact {
        Some(r) => store
            .redacted(&|t| r.redact(t))
            .map_err(|e| format!("{named}: {e}"))?,
        None => store,
    };
    let origin = Origin {
        store: &named,
        sha256: &sha256,
    };
    let tables = tables::tables(&store, &origin).map_err(|e| format!("{named}: {e}"))?;
    drop(store);
    let mut replaced = false;
    let version = SCHEMA_VERSION.to_string();
    for ((dir, table), (name, _)) in dirs.iter().zip(&tables).zip(TABLES) {
        let failed = |e: &dyn std::fmt::Display| format!("{}: cannot write: {e}", dir.display());
        std::fs::create_dir_all(dir).map_err(|e| failed(&e))?;
        let target = dir.join(&file);
        let temporary = dir.join(format!(".{file}.tmp"));
        let mut writer =
            std::io::BufWriter::new(std::fs::File::create(&temporary).map_err(|e| failed(&e))?);
        table
            .write(
                &mut writer,
                &[
                    ("asof.schema_version", &version),
                    ("asof.table", name),
                    ("asof.incident", incident),
                    ("asof.store_sha256", &sha256),
                    (
                        "asof.redacted",
                        if redact.is_some() {
                            "yes: secrets replaced by [redacted:KIND]; asof.store_sha256 is of the unredacted store"
                        } else {
                            "no"
                        },
                    ),
                ],
            )
            .map_err(|e| failed(&e))?;
        let file = writer.into_inner().map_err(|e| failed(e.error()))?;
        file.sync_all().map_err(|e| failed(&e))?;
        std::fs::rename(&temporary, &target).map_err(|e| failed(&e))?;
        // Earlier exports of this incident, at once: a partition holding two
        // files of one table would have a reader count the incident twice.
        for old in std::fs::read_dir(dir).map_err(|e| failed(&e))?.flatten() {
            let old_name = old.file_name();
            let old_name = old_name.to_string_lossy();
            if old_name.starts_with("part-")
                && old_name.ends_with(".parquet")
                && old.path() != target
            {
                replaced = true;
                std::fs::remove_file(old.path()).map_err(|e| failed(&e))?;
            }
        }
    }
    Ok(Outcome::Written {
        incident: incident.to_owned(),
        replaced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_name_escapes_what_a_path_cannot_hold() {
        assert_eq!(partition("inc-2041_a.b"), "incident=inc-2041_a.b");
        assert_eq!(partition("a/b=c d"), "incident=a%2Fb%3Dc%20d");
        assert_eq!(partition("é"), "incident=%C3%A9");
    }
}
