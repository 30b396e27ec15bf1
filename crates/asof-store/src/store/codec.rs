//! How lists are packed into one text column: ids joined with the unit
//! separator (U+001F), which no id may contain. Shared by the writers and the
//! queries.

/// The separator between the ids of a packed list.
pub(crate) const SEP: char = '\u{1f}';

/// A packed list read back (`NULL`: empty).
pub(crate) fn split(joined: Option<String>) -> Vec<String> {
    joined
        .map(|s| s.split(SEP).map(str::to_owned).collect())
        .unwrap_or_default()
}

pub(crate) use super::bytes::{put_signed, put_unsigned, take_signed, take_unsigned};

/// The rarely read fields of a version row, packed into its `rest` column so
/// a row stays narrow (SQLite decodes a row's header once per column it reads;
/// see docs/performance-log.md). Numbers are LEB128 (the signed ones zigzagged,
/// [`put_signed`]) and instants are written as their distance from the row's
/// own columns ([`Anchor`]), so most take one to three bytes; then come the
/// strings' lengths, then the strings themselves, one after another, so a
/// reader checks their UTF-8 once for the row instead of once per string:
///
/// ```text
/// flags u8 (1 split · 2 closed · 4 retracted · 8 clipped · 16 the valid end
/// asked for is the row's) · confidence f64 LE · created_by · assertion_seq
/// (signed) · [valid_to − requested_valid_to (signed), unless flag 16] ·
/// recorded_at − supported_at (signed) · [closed_seq] · supported_by count ·
/// reconfirmed count · each recorded_at − reconfirmed (signed) · lengths of:
/// assertion, [closed_by], [clipped_by], each supported_by · the strings, in
/// that order
/// ```
///
/// Differences wrap, so any instants round-trip. Packed from a list of cited
/// ids; read back as [`Texts`], which yields them without collecting them
/// first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rest<'a, Cites = Vec<&'a str>> {
    pub split: bool,
    pub confidence: f64,
    pub created_by: u64,
    pub assertion_seq: i64,
    pub requested_valid_to: i64,
    pub supported_at: i64,
    pub assertion: &'a str,
    /// Seq, event id, and whether it was a retraction.
    pub closed: Option<(u64, &'a str, bool)>,
    pub clipped_by: Option<&'a str>,
    pub supported_by: Cites,
    pub reconfirmed: Vec<i64>,
}

/// The columns of a version's row its packed [`Rest`] is written relative
/// to: a rest reads back only beside the row it was packed for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Anchor {
    pub recorded_at: i64,
    pub valid_to: i64,
}

/// Strings cut from text checked by [`unpack`] (valid UTF-8, each cut on a
/// character boundary, the lengths adding up), read on demand.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Texts<'a> {
    /// Their lengths, LEB128 each.
    lengths: &'a [u8],
    /// How many there are still to read.
    count: usize,
    text: &'a str,
}

impl<'a> Texts<'a> {
    /// Takes `count` lengths off the front of `lengths` and cuts their
    /// strings off the front of `text`: `None` when a length is cut short, a
    /// cut is not on a character boundary or the text is too short.
    fn cut(lengths: &mut &'a [u8], count: usize, text: &mut &'a str) -> Option<Texts<'a>> {
        let mine = *lengths;
        let mut at = 0usize;
        for _ in 0..count {
            let n = usize::try_from(take_unsigned(lengths)?).ok()?;
            at = at.checked_add(n)?;
            if !text.is_char_boundary(at) {
                return None;
            }
        }
        let (taken, after) = text.split_at_checked(at)?;
        *text = after;
        Some(Texts {
            lengths: &mine[..mine.len() - lengths.len()],
            count,
            text: taken,
        })
    }
}

impl<'a> Iterator for Texts<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        self.count = self.count.checked_sub(1)?;
        let n = usize::try_from(take_unsigned(&mut self.lengths)?).ok()?;
        let (first, after) = self.text.split_at_checked(n)?;
        self.text = after;
        Some(first)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.count, Some(self.count))
    }
}

impl ExactSizeIterator for Texts<'_> {}

impl<Cites> Rest<'_, Cites> {
    /// Packs the fields of the version whose row has `anchor` onto the end of
    /// `out`. (The citations may be borrowed as they are held, `&[String]`:
    /// a load packs a million rows and need not collect each one's.)
    pub(crate) fn pack<S: AsRef<str>>(&self, anchor: Anchor, out: &mut Vec<u8>)
    where
        Cites: AsRef<[S]>,
    {
        let supported_by = self.supported_by.as_ref();
        let asked_is_row = self.requested_valid_to == anchor.valid_to;
        let flags = u8::from(self.split)
            | if self.closed.is_some() { 2 } else { 0 }
            | if self.closed.is_some_and(|c| c.2) {
                4
            } else {
                0
            }
            | if self.clipped_by.is_some() { 8 } else { 0 }
            | if asked_is_row { 16 } else { 0 };
        out.push(flags);
        out.extend_from_slice(&self.confidence.to_le_bytes());
        put_unsigned(out, self.created_by);
        put_signed(out, self.assertion_seq);
        if !asked_is_row {
            put_signed(out, anchor.valid_to.wrapping_sub(self.requested_valid_to));
        }
        put_signed(out, anchor.recorded_at.wrapping_sub(self.supported_at));
        if let Some((seq, _, _)) = self.closed {
            put_unsigned(out, seq);
        }
        put_unsigned(out, supported_by.len() as u64);
        put_unsigned(out, self.reconfirmed.len() as u64);
        for t in &self.reconfirmed {
            put_signed(out, anchor.recorded_at.wrapping_sub(*t));
        }
        let texts = || {
            std::iter::once(self.assertion)
                .chain(self.closed.map(|c| c.1))
                .chain(self.clipped_by)
                .chain(supported_by.iter().map(AsRef::as_ref))
        };
        for s in texts() {
            put_unsigned(out, s.len() as u64);
        }
        for s in texts() {
            out.extend_from_slice(s.as_bytes());
        }
    }
}

/// A [`Rest`] packed for the row with `anchor`, read back; `None` when the
/// bytes are not one.
pub(crate) fn unpack(bytes: &[u8], anchor: Anchor) -> Option<Rest<'_, Texts<'_>>> {
    let b = &mut &bytes[..];
    let (&flags, after) = b.split_first()?;
    *b = after;
    if flags & !31 != 0 {
        return None;
    }
    let (confidence, after) = b.split_first_chunk::<8>()?;
    *b = after;
    let confidence = f64::from_le_bytes(*confidence);
    let created_by = take_unsigned(b)?;
    let assertion_seq = take_signed(b)?;
    let requested_valid_to = if flags & 16 != 0 {
        anchor.valid_to
    } else {
        anchor.valid_to.wrapping_sub(take_signed(b)?)
    };
    let supported_at = anchor.recorded_at.wrapping_sub(take_signed(b)?);
    let closed_seq = if flags & 2 != 0 {
        Some(take_unsigned(b)?)
    } else {
        None
    };
    let cites = usize::try_from(take_unsigned(b)?).ok()?;
    let times = usize::try_from(take_unsigned(b)?).ok()?;
    // Each takes a byte at least: a count past the bytes left is no rest.
    if times > b.len() || cites > b.len() {
        return None;
    }
    let reconfirmed = (0..times)
        .map(|_| Some(anchor.recorded_at.wrapping_sub(take_signed(b)?)))
        .collect::<Option<Vec<_>>>()?;
    let clipped = flags & 8 != 0;
    let own = 1 + usize::from(closed_seq.is_some()) + usize::from(clipped);
    // The lengths, then the strings: where the last length ends, the
    // strings begin. Every string is checked once.
    let mut strings = *b;
    for _ in 0..own.checked_add(cites)? {
        take_unsigned(&mut strings)?;
    }
    let mut lengths = &b[..b.len() - strings.len()];
    let mut text = std::str::from_utf8(strings).ok()?;
    let mut own = Texts::cut(&mut lengths, own, &mut text)?;
    let supported_by = Texts::cut(&mut lengths, cites, &mut text)?;
    if !text.is_empty() {
        return None;
    }
    let assertion = own.next()?;
    let closed = match closed_seq {
        Some(seq) => Some((seq, own.next()?, flags & 4 != 0)),
        None => None,
    };
    let clipped_by = if clipped { Some(own.next()?) } else { None };
    Some(Rest {
        split: flags & 1 != 0,
        confidence,
        created_by,
        assertion_seq,
        requested_valid_to,
        supported_at,
        assertion,
        closed,
        clipped_by,
        supported_by,
        reconfirmed,
    })
}

#[cfg(test)]
mod tests {
    use super::{Anchor, Rest};
    use asof_core::time::OPEN;

    fn rests() -> [Rest<'static>; 3] {
        [
            Rest {
                split: true,
                confidence: 0.35,
                created_by: 7,
                assertion_seq: 3,
                requested_valid_to: OPEN,
                supported_at: -12,
                assertion: "B1",
                closed: Some((9, "R2", true)),
                clipped_by: Some("B4 é"),
                supported_by: vec!["E1", "E22"],
                reconfirmed: vec![5, 6],
            },
            Rest {
                split: false,
                confidence: 1.0,
                created_by: 1,
                assertion_seq: 1,
                requested_valid_to: 10,
                supported_at: 0,
                assertion: "",
                closed: Some((2, "B2", false)),
                clipped_by: None,
                supported_by: Vec::new(),
                reconfirmed: Vec::new(),
            },
            Rest {
                split: false,
                confidence: f64::MIN_POSITIVE,
                created_by: u64::MAX,
                assertion_seq: i64::MIN,
                requested_valid_to: i64::MIN,
                supported_at: OPEN,
                assertion: "B\u{1F600}",
                closed: None,
                clipped_by: None,
                supported_by: vec!["", "E9"],
                reconfirmed: vec![i64::MIN, OPEN, 0],
            },
        ]
    }

    fn anchors() -> [Anchor; 4] {
        [
            Anchor {
                recorded_at: 0,
                valid_to: 10,
            },
            Anchor {
                recorded_at: 1_767_225_600_000_000,
                valid_to: OPEN,
            },
            Anchor {
                recorded_at: i64::MIN,
                valid_to: i64::MIN,
            },
            Anchor {
                recorded_at: OPEN,
                valid_to: -5,
            },
        ]
    }

    fn back(bytes: &[u8], anchor: Anchor) -> Rest<'_> {
        let back = super::unpack(bytes, anchor).expect("packed rest decodes");
        Rest {
            split: back.split,
            confidence: back.confidence,
            created_by: back.created_by,
            assertion_seq: back.assertion_seq,
            requested_valid_to: back.requested_valid_to,
            supported_at: back.supported_at,
            assertion: back.assertion,
            closed: back.closed,
            clipped_by: back.clipped_by,
            supported_by: back.supported_by.collect::<Vec<_>>(),
            reconfirmed: back.reconfirmed,
        }
    }

    #[test]
    fn a_version_row_rest_round_trips_and_any_cut_is_refused() {
        let mut bytes = Vec::new();
        for rest in rests() {
            for anchor in anchors() {
                bytes.clear();
                rest.pack(anchor, &mut bytes);
                assert_eq!(back(&bytes, anchor), rest, "{anchor:?}");
                for cut in 0..bytes.len() {
                    assert!(
                        super::unpack(&bytes[..cut], anchor).is_none(),
                        "cut at {cut}"
                    );
                }
                let mut longer = bytes.clone();
                longer.push(0);
                assert!(super::unpack(&longer, anchor).is_none());
                let mut flagged = bytes.clone();
                flagged[0] |= 32;
                assert!(super::unpack(&flagged, anchor).is_none());
            }
        }
    }

    /// Instants are written as distances from the row's own: a typical
    /// closed version's fields, beside its row, take a few bytes each.
    #[test]
    fn a_rest_beside_its_row_is_small() {
        let recorded_at = 1_767_225_600_000_000;
        let rest = Rest {
            split: false,
            confidence: 0.8,
            created_by: 812_345,
            assertion_seq: 812_345,
            requested_valid_to: OPEN,
            supported_at: recorded_at,
            assertion: "B812345",
            closed: Some((912_345, "B912345", false)),
            clipped_by: None,
            supported_by: vec!["E700001", "E700002"],
            reconfirmed: Vec::new(),
        };
        let anchor = Anchor {
            recorded_at,
            valid_to: OPEN,
        };
        let mut bytes = Vec::new();
        rest.pack(anchor, &mut bytes);
        // flags, confidence, two ids of three bytes, the support instant,
        // the closing seq, two counts, four lengths, 28 bytes of ids.
        assert_eq!(bytes.len(), 1 + 8 + 3 + 3 + 1 + 3 + 2 + 4 + 28);
        assert_eq!(back(&bytes, anchor), rest);
        // Read beside another row, it reads other instants.
        let elsewhere = Anchor {
            recorded_at: recorded_at - 1,
            valid_to: 5,
        };
        let moved = back(&bytes, elsewhere);
        assert_eq!(
            (moved.supported_at, moved.requested_valid_to),
            (recorded_at - 1, 5)
        );
    }

    #[test]
    fn varints_round_trip_and_an_overlong_one_is_refused() {
        for n in [0, 1, -1, 63, -64, 64, i64::MAX, i64::MIN, 1 << 40] {
            let mut out = Vec::new();
            super::put_signed(&mut out, n);
            let mut b = &out[..];
            assert_eq!(super::take_signed(&mut b), Some(n));
            assert!(b.is_empty());
        }
        assert_eq!(super::take_unsigned(&mut &[0xffu8; 11][..]), None);
        assert_eq!(super::take_unsigned(&mut &[0x80u8][..]), None);
    }
}
