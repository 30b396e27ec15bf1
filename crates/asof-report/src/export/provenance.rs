//! Where a report came from and what it is (design.md §8): every Markdown, HTML
//! and SVG report opens with its source as the user named it, that source's
//! SHA-256, the asof version and the time of export; a report of a what-if
//! fork also opens with the what-if banner and its divergence from the record.

use asof_core::time::{self, Micros};
use asof_store::fork::WhatIf;
use asof_store::fork::diff::Diff;
use asof_store::store::{Store, StoreError};

/// A source as the user named it (a path, or the bundled demo) and the
/// SHA-256 of its bytes (of a store file, a dataset, a trace, or the demo's
/// embedded dataset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The source as the user named it.
    pub name: String,
    /// The SHA-256 of its bytes.
    pub sha256: String,
}

/// A what-if's divergence from the record it was forked from, or why it is
/// not shown (the parent moved or changed since).
#[derive(Debug, Clone)]
pub enum Divergence {
    /// The diff, and `asof diff`'s JSON of it (the HTML report reads that).
    Shown {
        /// The diff.
        diff: Box<Diff>,
        /// `asof diff`'s JSON of it.
        json: serde_json::Value,
    },
    /// Why the divergence is not shown.
    NotShown(String),
}

impl Divergence {
    /// The what-if `fork` (named `fork_name` in the report) against `parent`,
    /// the record it was forked from, whose bytes have SHA-256 `parent_sha`
    /// (the caller has checked it against the fork's lineage).
    pub fn between(
        parent: &Store,
        parent_sha: &str,
        fork: &Store,
        fork_name: &str,
    ) -> Result<Divergence, StoreError> {
        let report: asof_store::fork::PolicyReport = fork
            .meta("fork_report")?
            .and_then(|r| serde_json::from_str(&r).ok())
            .unwrap_or_default();
        let diff = asof_store::fork::diff::compare_stores(parent, parent_sha, fork)?;
        let json = asof_store::fork::diff::json(
            parent.label(),
            fork_name,
            &report,
            &diff,
            Some(parent_sha.to_owned()),
            true,
        );
        Ok(Divergence::Shown {
            diff: Box::new(diff),
            json,
        })
    }
}

/// Everything a report says about itself before its content.
#[derive(Debug, Clone)]
pub struct Provenance {
    /// Where the report was read from.
    pub origin: Origin,
    /// When it was exported (or `SOURCE_DATE_EPOCH`).
    pub exported_at: Micros,
    /// The store's lineage, when it is a what-if fork.
    pub what_if: Option<WhatIf>,
    /// For a what-if: its divergence from the record.
    pub divergence: Option<Divergence>,
    /// How many assertions have each field the importer assumed (design.md §7).
    pub assumed: Vec<(asof_core::model::Assumed, usize)>,
    /// Input lines that did not parse and were skipped (`--skip-bad-lines`).
    pub bad_lines: usize,
    /// The options an imported store was read with (its ids follow from them).
    pub read_with: Option<String>,
    /// The review shown beside the record (docs/review.md), if any.
    pub review: Option<asof_core::review::Review>,
    /// What `--redact` replaced ([`asof_core::redact::Redactor::provenance_line`]).
    pub redacted: Option<String>,
}

impl Provenance {
    /// The provenance of a report of `store`, read from `origin`, exported now
    /// (or at `SOURCE_DATE_EPOCH`, in seconds, when set: the reproducible-builds
    /// convention, so a report can be made byte for byte again); the
    /// divergence is left for the caller (who can open the parent).
    pub fn of(store: &Store, origin: Origin) -> Result<Provenance, StoreError> {
        let pinned = std::env::var("SOURCE_DATE_EPOCH")
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .and_then(|secs| secs.checked_mul(1_000_000));
        let report = store
            .meta("import_report")?
            .and_then(|json| serde_json::from_str::<asof_import::import::ImportReport>(&json).ok());
        Ok(Provenance {
            origin,
            exported_at: pinned.unwrap_or_else(time::now),
            what_if: WhatIf::of(store)?,
            divergence: None,
            assumed: asof_store::query::quality::ledger(store)?.assumed_counts(),
            bad_lines: report.as_ref().map_or(0, |r| r.bad_lines),
            read_with: report.and_then(|r| {
                let rules = r
                    .rules_sha256
                    .map(|sha| format!(" (rules file SHA-256 {sha})"))
                    .unwrap_or_default();
                r.read_with
                    .map(|flags| format!("asof import {} {flags}{rules}", r.format))
            }),
            review: None,
            redacted: None,
        })
    }

    /// How the store's ids came to be: the import's options, or the
    /// dataset's own ids.
    pub fn read_with_words(&self) -> String {
        self.read_with
            .clone()
            .unwrap_or_else(|| "none: the ids are the dataset's own".to_owned())
    }

    /// The input lines skipped for not parsing, in words.
    pub fn bad_lines_words(&self) -> String {
        match self.bad_lines {
            0 => "none".to_owned(),
            n => format!("{n} line(s) did not parse and were skipped (--skip-bad-lines)"),
        }
    }

    /// What the importer assumed, in words: `supported_by of 4 assertions,
    /// valid_from of 4` (or `nothing`).
    pub fn assumed_words(&self) -> String {
        if self.assumed.is_empty() {
            return "nothing".to_owned();
        }
        let parts: Vec<String> = self
            .assumed
            .iter()
            .enumerate()
            .map(|(i, (field, n))| match i {
                0 => format!("{} of {n} assertion(s)", field.as_str()),
                _ => format!("{} of {n}", field.as_str()),
            })
            .collect();
        format!("{} (marked *)", parts.join(", "))
    }

    /// The review in words: each file (or store table) with its SHA-256 and
    /// findings, or `none`.
    pub fn review_words(&self) -> String {
        match &self.review {
            None => "none".to_owned(),
            Some(r) => r
                .sources
                .iter()
                .map(|s| {
                    format!(
                        "{} (SHA-256 {}): {} finding(s)",
                        s.name(),
                        if s.sha256.is_empty() { "-" } else { &s.sha256 },
                        s.findings
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    /// The asof version that wrote the report.
    pub fn version() -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    /// (label, value) rows: source, its SHA-256, the asof version, the export
    /// time, what the importer assumed.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        let mut rows = vec![
            ("source", self.origin.name.clone()),
            ("source SHA-256", self.origin.sha256.clone()),
            ("asof version", Self::version().to_owned()),
            ("exported at", time::format(self.exported_at)),
            ("assumed by the importer", self.assumed_words()),
            ("input lines skipped", self.bad_lines_words()),
            ("import options", self.read_with_words()),
        ];
        if self.review.is_some() {
            rows.push(("review", self.review_words()));
        }
        if let Some(redacted) = &self.redacted {
            rows.push(("redacted", redacted.clone()));
        }
        rows
    }

    /// One line: `source demo.db · SHA-256 9f… · asof 0.1.0 · exported 2026-…`
    /// (and what the importer assumed, when it assumed anything).
    pub fn line(&self) -> String {
        let mut line = format!(
            "source {} · SHA-256 {} · asof {} · exported {}",
            self.origin.name,
            self.origin.sha256,
            Self::version(),
            time::format(self.exported_at)
        );
        if !self.assumed.is_empty() {
            line.push_str(&format!(" · assumed: {}", self.assumed_words()));
        }
        if self.bad_lines > 0 {
            line.push_str(&format!(
                " · input lines skipped: {}",
                self.bad_lines_words()
            ));
        }
        if let Some(read_with) = &self.read_with {
            line.push_str(&format!(" · read with: {read_with}"));
        }
        if self.review.is_some() {
            line.push_str(&format!(" · review: {}", self.review_words()));
        }
        if let Some(redacted) = &self.redacted {
            line.push_str(&format!(" · {redacted}"));
        }
        line
    }

    /// `What-if: ` before a what-if report's title.
    pub fn title_prefix(&self) -> &'static str {
        if self.what_if.is_some() {
            "What-if: "
        } else {
            ""
        }
    }
}
