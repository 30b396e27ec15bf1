//! An import's summary (design.md §7) as text or Markdown: what was read, where the
//! assertions came from, which rule applied how often, every default used, and
//! the no-ops and skipped records with their reasons. `asof import` prints it
//! after its first sentence; the audit report shows it under "How this store
//! was made".

use super::table::Table;
use asof_import::import::{Count, ImportReport, Skipped, Tally};
use std::fmt::Write;

/// The summary's lines after its first sentence.
pub fn details(report: &ImportReport, md: bool) -> String {
    let mut w = String::new();
    let item = if md { "- " } else { "" };
    let line = |w: &mut String, label: &str, tally: &Tally| {
        let counts: Vec<&Count> = tally.0.iter().filter(|c| c.count > 0).collect();
        match counts.as_slice() {
            [] => {}
            [one] => {
                let _ = writeln!(w, "{item}{label}: {} {}", one.count, one.what);
            }
            many => {
                let _ = writeln!(w, "{item}{label}:");
                for c in many {
                    if md {
                        let _ = writeln!(w, "  - {} {}", c.count, c.what);
                    } else {
                        let _ = writeln!(w, "  {:>5} {}", c.count, c.what);
                    }
                }
            }
        }
    };
    line(&mut w, "read", &report.read);
    line(&mut w, "assertions from", &report.assertions_by_source);
    line(&mut w, "cases", &report.cases);
    line(&mut w, "defaults", &report.defaults);
    for note in &report.notes {
        let _ = writeln!(w, "{item}note: {note}");
    }
    let list = |w: &mut String, label: &str, items: &[Skipped]| {
        if items.is_empty() {
            let _ = writeln!(w, "{}{label}: none", if md { "\n" } else { "" });
            return;
        }
        if md {
            let _ = writeln!(w, "\n**{label} ({}):**\n", items.len());
        } else {
            let _ = writeln!(w, "{label} ({}):", items.len());
        }
        let mut t = Table::new(vec!["WHERE", "WHY"]);
        for s in items {
            t.row(vec![s.location.clone(), s.reason.clone()]);
        }
        let _ = write!(w, "{}", if md { t.markdown() } else { t.text() });
    };
    list(&mut w, "no-ops", &report.noops);
    list(&mut w, "skipped", &report.skipped);
    w
}
