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

/// The rarely read fields of a version row, packed into its `rest` column so
/// a row stays narrow (SQLite decodes a row's header once per column read; see
/// docs/performance.md): little-endian numbers, then the strings' lengths
/// (u32), then the strings themselves, one after another, so a reader checks
/// their UTF-8 once for the row instead of once per string:
///
/// ```text
/// flags u8 (1 split · 2 closed · 4 retracted · 8 clipped) · confidence f64 ·
/// created_by u64 · assertion_seq i64 · requested_valid_to i64 · supported_at i64 ·
/// [closed_seq u64] · supported_by count u32 · reconfirmed count u32 ·
/// reconfirmed [i64] · lengths u32 of: assertion, [closed_by], [clipped_by],
/// each supported_by · the strings, in that order
/// ```
///
/// Packed from a list of cited ids; read back as [`Texts`], which yields them
/// without collecting them first.
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

/// Strings cut from text checked by [`unpack`] (valid UTF-8, each cut on a
/// character boundary, the lengths adding up), read on demand.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Texts<'a> {
    /// Their lengths, u32 each.
    lengths: &'a [u8],
    text: &'a str,
}

impl<'a> Texts<'a> {
    /// Cuts the strings of `lengths` off the front of `text`: `None` when a
    /// cut is not on a character boundary or the text is too short.
    fn cut(lengths: &'a [u8], text: &mut &'a str) -> Option<Texts<'a>> {
        let mut at = 0usize;
        for n in lengths.chunks_exact(4) {
            at = at.checked_add(u32::from_le_bytes(n.try_into().ok()?) as usize)?;
            if !text.is_char_boundary(at) {
                return None;
            }
        }
        let (taken, after) = text.split_at_checked(at)?;
        *text = after;
        Some(Texts {
            lengths,
            text: taken,
        })
    }
}

impl<'a> Iterator for Texts<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let (n, lengths) = self.lengths.split_first_chunk::<4>()?;
        self.lengths = lengths;
        let (first, after) = self
            .text
            .split_at_checked(u32::from_le_bytes(*n) as usize)?;
        self.text = after;
        Some(first)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.lengths.len() / 4;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Texts<'_> {}

impl Rest<'_> {
    pub(crate) fn pack(&self, out: &mut Vec<u8>) {
        out.clear();
        let flags = u8::from(self.split)
            | if self.closed.is_some() { 2 } else { 0 }
            | if self.closed.is_some_and(|c| c.2) {
                4
            } else {
                0
            }
            | if self.clipped_by.is_some() { 8 } else { 0 };
        out.push(flags);
        out.extend_from_slice(&self.confidence.to_le_bytes());
        out.extend_from_slice(&self.created_by.to_le_bytes());
        for n in [
            self.assertion_seq,
            self.requested_valid_to,
            self.supported_at,
        ] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        if let Some((seq, _, _)) = self.closed {
            out.extend_from_slice(&seq.to_le_bytes());
        }
        out.extend_from_slice(&(self.supported_by.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.reconfirmed.len() as u32).to_le_bytes());
        for t in &self.reconfirmed {
            out.extend_from_slice(&t.to_le_bytes());
        }
        let texts = || {
            std::iter::once(self.assertion)
                .chain(self.closed.map(|c| c.1))
                .chain(self.clipped_by)
                .chain(self.supported_by.iter().copied())
        };
        for s in texts() {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        }
        for s in texts() {
            out.extend_from_slice(s.as_bytes());
        }
    }
}

/// A packed [`Rest`] read back; `None` when the bytes are not one.
pub(crate) fn unpack(bytes: &[u8]) -> Option<Rest<'_, Texts<'_>>> {
    let mut b = Reader(bytes);
    let flags = b.take(1)?[0];
    let confidence = f64::from_le_bytes(b.word()?);
    let created_by = u64::from_le_bytes(b.word()?);
    let assertion_seq = i64::from_le_bytes(b.word()?);
    let requested_valid_to = i64::from_le_bytes(b.word()?);
    let supported_at = i64::from_le_bytes(b.word()?);
    let closed_seq = if flags & 2 != 0 {
        Some(u64::from_le_bytes(b.word()?))
    } else {
        None
    };
    let cites = b.len()?;
    let times = b.len()?;
    let reconfirmed = (0..times)
        .map(|_| Some(i64::from_le_bytes(b.word()?)))
        .collect::<Option<Vec<_>>>()?;
    let clipped = flags & 8 != 0;
    let own = 1 + usize::from(closed_seq.is_some()) + usize::from(clipped);
    let lengths = b.take(cites.checked_add(own)?.checked_mul(4)?)?;
    // Every string, checked once.
    let mut text = std::str::from_utf8(b.0).ok()?;
    let (own, cited) = lengths.split_at(own * 4);
    let mut own = Texts::cut(own, &mut text)?;
    let supported_by = Texts::cut(cited, &mut text)?;
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

/// Reads a packed [`Rest`] front to back.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (taken, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(taken)
    }
    fn word(&mut self) -> Option<[u8; 8]> {
        self.take(8)?.try_into().ok()
    }
    fn len(&mut self) -> Option<usize> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_version_row_rest_round_trips_and_any_cut_is_refused() {
        let rests = [
            super::Rest {
                split: true,
                confidence: 0.35,
                created_by: 7,
                assertion_seq: 3,
                requested_valid_to: i64::MAX,
                supported_at: -12,
                assertion: "B1",
                closed: Some((9, "R2", true)),
                clipped_by: Some("B4 é"),
                supported_by: vec!["E1", "E22"],
                reconfirmed: vec![5, 6],
            },
            super::Rest {
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
        ];
        let mut bytes = Vec::new();
        for rest in rests {
            rest.pack(&mut bytes);
            let back = super::unpack(&bytes).expect("packed rest decodes");
            let back = super::Rest {
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
            };
            assert_eq!(back, rest);
            for cut in 0..bytes.len() {
                assert!(super::unpack(&bytes[..cut]).is_none(), "cut at {cut}");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(super::unpack(&longer).is_none());
        }
    }
}
