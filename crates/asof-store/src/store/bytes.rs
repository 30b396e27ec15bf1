//! The one place the store's blobs are read and written byte by byte: the
//! packed version `rest` (codec.rs), the packed header (packed_header.rs),
//! the version pages (pages.rs) and the scrub index's parts (scrub/blob.rs)
//! all use these. Variable-length numbers are LEB128 (signed ones zigzagged);
//! fixed-width ones are little-endian. A reader returns `None` when a blob
//! runs out: a damaged store, never a panic.

/// Appends `n` as LEB128: seven bits a byte, low bits first, the top bit set
/// on every byte but the last.
pub(crate) fn put_unsigned(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Appends `n` zigzagged (0, -1, 1, -2, … as 0, 1, 2, 3, …) as LEB128, so a
/// small number of either sign takes a byte or two.
pub(crate) fn put_signed(out: &mut Vec<u8>, n: i64) {
    put_unsigned(out, ((n << 1) ^ (n >> 63)) as u64);
}

/// Takes a LEB128 number off the front of `bytes`; `None` when it is cut
/// short or runs past ten bytes.
pub(crate) fn take_unsigned(bytes: &mut &[u8]) -> Option<u64> {
    // Most numbers are one byte.
    if let Some((&byte, rest)) = bytes.split_first()
        && byte < 0x80
    {
        *bytes = rest;
        return Some(u64::from(byte));
    }
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        n |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

/// Takes a number written by [`put_signed`] off the front of `bytes`.
pub(crate) fn take_signed(bytes: &mut &[u8]) -> Option<i64> {
    let n = take_unsigned(bytes)?;
    Some(((n >> 1) as i64) ^ -((n & 1) as i64))
}

/// Takes a little-endian `i64` off the front of `bytes`.
pub(crate) fn take_word(bytes: &mut &[u8]) -> Option<i64> {
    let (word, rest) = bytes.split_first_chunk::<8>()?;
    *bytes = rest;
    Some(i64::from_le_bytes(*word))
}

/// A little-endian reader over one blob; `None` when it runs out.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl Reader<'_> {
    pub(crate) fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|[b]| b)
    }
    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    pub(crate) fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_le_bytes)
    }
    /// Fixed-width records until the blob ends exactly.
    pub(crate) fn records<T>(
        mut self,
        width: usize,
        mut one: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<Vec<T>> {
        if !self.0.len().is_multiple_of(width) {
            return None;
        }
        let mut out = Vec::with_capacity(self.0.len() / width);
        while !self.0.is_empty() {
            out.push(one(&mut self)?);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_come_back_as_written_and_a_short_blob_is_none() {
        let mut out = Vec::new();
        for n in [0u64, 1, 127, 128, 300, u64::MAX] {
            put_unsigned(&mut out, n);
        }
        for n in [0i64, -1, 1, -64, 64, i64::MIN, i64::MAX] {
            put_signed(&mut out, n);
        }
        out.extend_from_slice(&(-5i64).to_le_bytes());
        let mut bytes = out.as_slice();
        for n in [0u64, 1, 127, 128, 300, u64::MAX] {
            assert_eq!(take_unsigned(&mut bytes), Some(n));
        }
        for n in [0i64, -1, 1, -64, 64, i64::MIN, i64::MAX] {
            assert_eq!(take_signed(&mut bytes), Some(n));
        }
        assert_eq!(take_word(&mut bytes), Some(-5));
        assert_eq!(take_unsigned(&mut bytes), None);
        assert_eq!(take_word(&mut &[1u8, 2, 3][..]), None);
        let mut r = Reader(&[1, 0, 2, 0, 0, 0][..]);
        assert_eq!((r.u16(), r.u32(), r.u8()), (Some(1), Some(2), None));
    }
}
