//! Each event's checksum: what `asof check` holds the log to, so a byte
//! changed inside an event row (which SQLite's own integrity check does not
//! see when the page's structure still holds) is found, and the way out is
//! to load the store again, not to re-derive from a damaged log.
//!
//! The checksum is CRC-32 over the event's fields as the log keeps them, in
//! a fixed order, each ended by a separator byte. A retraction's agent is left
//! out when it names an assertion: the writer fills it in after the row is
//! written, from the assertion (see `follow` and `stream`).
//!
//! The fields and their order are part of the store format: changing them
//! is a format version bump (`schema::FORMAT_VERSION`), as every stored
//! checksum would read as damage.

use asof_core::model::{Event, EventBody, RetractTarget};

/// The checksum of `event` as the log keeps it (citations, whole text and
/// assumed fields included).
pub fn event_crc(event: &Event) -> i64 {
    let mut h = Crc(crc32fast::Hasher::new());
    h.int(event.seq as i64);
    h.text(event.id());
    h.text(event.kind().as_str());
    h.int(event.recorded_at());
    match &event.body {
        EventBody::Evidence(e) => {
            h.text(&e.kind);
            h.text(&e.source);
            h.text(&e.locator);
            h.int(e.observed_at);
            h.opt_int(e.observed_until);
            h.int(e.reliability.to_bits() as i64);
            h.text(&e.summary);
            h.opt_text(e.content.as_deref());
        }
        EventBody::Believe(a) => {
            h.text(&a.agent);
            h.text(&a.topic);
            h.text(&a.claim);
            h.int(a.confidence.to_bits() as i64);
            h.int(a.valid.from);
            h.int(a.valid.to);
            h.int(i64::from(a.clip));
            h.opt_text(a.rationale.as_deref());
            for field in &a.assumed {
                h.text(field.as_str());
            }
        }
        EventBody::Retract(r) => {
            match &r.target {
                RetractTarget::Topic { topic, claim } => {
                    h.text(&r.agent);
                    h.text(topic);
                    h.opt_text(claim.as_deref());
                }
                RetractTarget::Assertion(id) => h.text(id),
            }
            h.opt_int(r.valid.map(|v| v.from));
            h.opt_int(r.valid.map(|v| v.to));
            h.opt_text(r.reason.as_deref());
        }
        EventBody::Verify(v) => {
            h.text(&v.evidence);
            h.text(v.state.as_str());
            h.text(&v.by);
            h.opt_text(v.note.as_deref());
        }
    }
    h.0.update(&[0x1e]);
    for cited in event.cites() {
        h.text(cited);
    }
    i64::from(h.0.finalize())
}

/// Fields fed to the hasher without allocating, each ended or tagged so no
/// two events' fields run together alike.
struct Crc(crc32fast::Hasher);

impl Crc {
    fn text(&mut self, s: &str) {
        self.0.update(s.as_bytes());
        self.0.update(&[0x1f]);
    }

    fn opt_text(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.text(s),
            None => self.0.update(&[0x00, 0x1f]),
        }
    }

    fn int(&mut self, n: i64) {
        self.0.update(&n.to_le_bytes());
    }

    fn opt_int(&mut self, n: Option<i64>) {
        match n {
            Some(n) => {
                self.0.update(&[1]);
                self.int(n);
            }
            None => self.0.update(&[0]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use asof_core::model::Assertion;
    use asof_core::time::Interval;

    fn believe(confidence: f64) -> Event {
        Event {
            seq: 3,
            body: EventBody::Believe(Assertion {
                id: "B1".into(),
                agent: "a".into(),
                topic: "t".into(),
                claim: "c".into(),
                confidence,
                valid: Interval::new(0, 10),
                clip: true,
                recorded_at: 5,
                supported_by: vec!["E1".into()],
                rationale: None,
                assumed: Vec::new(),
            }),
        }
    }

    #[test]
    fn any_field_changed_changes_the_checksum() {
        let a = event_crc(&believe(0.8));
        assert_eq!(a, event_crc(&believe(0.8)), "stable");
        assert_ne!(a, event_crc(&believe(0.800_000_000_000_1)));
        let mut other = believe(0.8);
        if let EventBody::Believe(b) = &mut other.body {
            b.supported_by = vec!["E2".into()];
        }
        assert_ne!(a, event_crc(&other));
    }
}
