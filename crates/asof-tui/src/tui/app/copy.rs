//! `y`: the selected row (a belief, a version under the plane's crosshair,
//! an evidence item, or the latest event) as one line of text, for the
//! terminal's clipboard (OSC 52: works over ssh and in tmux with
//! `set-clipboard on`, needs nothing installed).

use super::{App, Focus};
use asof_core::time;
use asof_store::query::Belief;

impl App {
    /// Text the loop should put on the clipboard, if the user asked (taken once).
    pub fn take_clipboard(&mut self) -> Option<String> {
        self.clipboard.take()
    }

    pub(super) fn copy(&mut self) {
        let text = match self.focus {
            Focus::Plane => self
                .plane
                .reading
                .versions
                .first()
                .and_then(|&id| self.timeline.belief_by_id(id))
                .map(|b| version_line(&b)),
            Focus::Beliefs => self
                .beliefs
                .selected()
                .and_then(|row| row.version)
                .and_then(|id| self.timeline.belief_by_id(id))
                .map(|b| version_line(&b)),
            Focus::Evidence => self.evidence.list.selected_item().map(|i| {
                let item = self.timeline.evidence_item(i);
                let e = &item.evidence;
                let cited = item.cited_by_at(self.cursor);
                format!(
                    "{} · {} from {} · observed {} · recorded {} (lag {}) · cited by {} as of {} · {}",
                    e.id,
                    e.kind,
                    e.source,
                    time::format(e.observed_at),
                    time::format(e.recorded_at),
                    time::format_duration(e.lag()),
                    if cited.is_empty() {
                        "none".to_owned()
                    } else {
                        cited.join(", ")
                    },
                    time::format(self.cursor),
                    e.content.as_deref().unwrap_or(&e.summary)
                )
            }),
            Focus::Scrubber => (!self.latest.is_empty()).then(|| self.latest.clone()),
        };
        match text {
            Some(text) => {
                self.status = Some(format!(
                    "copied to the clipboard (OSC 52): {}",
                    text.chars().take(60).collect::<String>()
                ));
                self.clipboard = Some(text);
            }
            None => self.status = Some("nothing selected to copy".into()),
        }
    }
}

/// A version as one line: who believed what, how surely, about when, since
/// when, on what.
fn version_line(b: &Belief) -> String {
    let v = &b.version;
    format!(
        "{} · {} believed “{}” ({:.2}) · valid [{}, {}) · recorded {} → {} · evidence {} · {}",
        v.topic,
        v.agent,
        v.claim,
        v.confidence,
        time::format(v.valid.from),
        time::format(v.valid.to),
        time::format(v.recorded_at),
        time::format(v.superseded_at),
        if b.supported_by.is_empty() {
            "none".to_owned()
        } else {
            b.supported_by.join(", ")
        },
        v.assertion
    )
}

/// The OSC 52 sequence that sets the system clipboard to `text`.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

/// Standard base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }
}
