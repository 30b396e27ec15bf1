//! The "Review findings" section of every report (docs/review.md): who
//! judged what, when the finding was made, about which instant of the log,
//! and why — apart from the agent's record, which it never changes; then
//! where reviewers disagree.

use super::table::Table;
use asof_core::review::{Finding, Review};
use asof_core::time;

/// The findings as rows: who, when made, about which instant, what, the note
/// (the reports' section and `asof review`'s table).
pub fn table(findings: &[Finding]) -> Table {
    let mut t = Table::new(vec![
        "ID", "MADE", "REVIEWER", "ABOUT", "TARGET", "VERDICT", "NOTE",
    ]);
    for f in findings {
        t.row(vec![
            f.id.clone(),
            time::format(f.made_at),
            f.reviewer.clone(),
            time::format(f.about),
            f.target.label(),
            f.verdict.to_string(),
            f.note.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    t
}

/// What the section says of itself first.
const ABOUT: &str = "A reviewer's findings, kept apart from the agent's log: MADE is when the \
finding was made (the reviewer's clock), ABOUT the instant of the log it judges. None of them \
changes what the agent knew, and no answer above reads them.";

/// The Markdown section (`## Review findings`), or nothing without a review.
pub fn markdown(review: Option<&Review>) -> String {
    let Some(review) = review else {
        return String::new();
    };
    let mut out = format!("## Review findings\n\n{ABOUT}\n\n");
    for s in &review.sources {
        out.push_str(&format!(
            "- {} — SHA-256 `{}`, {} finding(s)\n",
            s.name(),
            if s.sha256.is_empty() { "-" } else { &s.sha256 },
            s.findings
        ));
    }
    out.push('\n');
    if review.findings.is_empty() {
        out.push_str("_No findings yet._\n\n");
        return out;
    }
    out.push_str(&table(&review.findings).markdown());
    out.push('\n');
    if let Some(t) = disagreements(review) {
        out.push_str("### Where reviewers disagree\n\n");
        out.push_str(&t.markdown());
        out.push('\n');
    }
    out
}

/// Where reviewers disagree, a row per target, or `None` when they do not.
pub fn disagreements(review: &Review) -> Option<Table> {
    let d = review.disagreements();
    if d.is_empty() {
        return None;
    }
    let mut t = Table::new(vec!["TARGET", "VERDICTS (latest by each reviewer)"]);
    for x in &d {
        t.row(vec![x.target.label(), x.said()]);
    }
    Some(t)
}

/// The HTML section (`<section id="review">`), or nothing without a review.
pub fn html(review: Option<&Review>, escape: impl Fn(&str) -> String) -> String {
    let Some(review) = review else {
        return String::new();
    };
    let mut out = format!(
        r#"<section id="review"><h2>Review findings</h2><p class="keys">{}</p><ul>"#,
        escape(ABOUT)
    );
    for s in &review.sources {
        out.push_str(&format!(
            "<li>{} — SHA-256 <code>{}</code>, {} finding(s)</li>",
            escape(&s.name()),
            escape(if s.sha256.is_empty() { "-" } else { &s.sha256 }),
            s.findings
        ));
    }
    out.push_str("</ul>");
    out.push_str("<table><thead><tr><th>id</th><th>made</th><th>reviewer</th><th>about</th><th>target</th><th>verdict</th><th>note</th></tr></thead><tbody>");
    for f in &review.findings {
        out.push_str(&format!(
            r#"<tr><td>{}</td><td class="nowrap">{}</td><td>{}</td><td class="nowrap">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            escape(&f.id),
            time::format(f.made_at),
            escape(&f.reviewer),
            time::format(f.about),
            escape(&f.target.label()),
            escape(f.verdict.as_str()),
            escape(f.note.as_deref().unwrap_or("-")),
        ));
    }
    out.push_str("</tbody></table>");
    let d = review.disagreements();
    if !d.is_empty() {
        out.push_str("<h3>Where reviewers disagree</h3><ul>");
        for x in &d {
            out.push_str(&format!(
                "<li>{}: {}</li>",
                escape(&x.target.label()),
                escape(&x.said())
            ));
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>\n");
    out
}
