//! Pass 6a of `import otlp` (design.md §7): each item of evidence the traces
//! found (trace.rs: every tool result one item — its call id, else its order,
//! never its content —, every user or system message, every medium, memory
//! record and retrieved document, each recorded when a model call first
//! showed it), numbered by the merge, written as an event, kept whole.

use super::*;

/// Pass 6a: the evidence event item `e` makes, numbered `id`, its text
/// taken out of it or copied, kept whole up to the dataset's limit (the
/// summary counts the items cut there: [`is_long`]).
pub(super) fn evidence_event(e: &mut Ev, id: String, content: merge::Content) -> RawEvent {
    let mut locator = e.locator.clone();
    if let Some(call) = &e.call_id {
        locator.push_str(&format!(" tool call {call}"));
    }
    let summary: String = if e.content.is_empty() {
        format!("{} result (content not captured in the trace)", e.source)
    } else {
        asof_core::text::first_chars(&e.content, SUMMARY_CHARS).to_owned()
    };
    let text = match content {
        merge::Content::Take => std::mem::take(&mut e.content),
        merge::Content::Keep => e.content.clone(),
    };
    RawEvent::Evidence(RawEvidence {
        id,
        kind: e.kind.into(),
        source: e.source.clone(),
        locator,
        observed_at: RawTime::at(e.observed),
        observed_until: None,
        recorded_at: RawTime::at(e.recorded),
        reliability: None,
        content: crate::import::whole_content(text, &summary, &mut ImportReport::default()),
        summary,
    })
}

/// Whether item `e`'s text is over the dataset's limit (kept cut there).
pub(super) fn is_long(e: &Ev) -> bool {
    e.content.len() > asof_core::dataset::MAX_CONTENT
}
