//! A followed trace read as one file across its segments
//! ([`asof_core::segments`]): `asof serve`'s archive goes on in
//! `NAME.000002`, `NAME.000003`, … once a segment is full. A file no one
//! segments is a series of one.
//!
//! A segment is whole once the next exists (the writer creates the next
//! only after its last write to this one), so a follow reads a segment to
//! its end, and on into the next, only when the next is there; otherwise it
//! reads up to the last complete line, as in a file of one piece. Each
//! segment is checked, every time it is opened, to be the file first found
//! there (a replaced segment stops the follow), and a closed one to keep its
//! length and to end with a whole line.

use super::{Stop, complete_after, identity, io, replaced, truncated};
use asof_core::segments;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The segments of a followed file found so far.
pub(super) struct Series {
    name: String,
    first: PathBuf,
    segments: Vec<Segment>,
}

struct Segment {
    path: PathBuf,
    /// The device and inode of the file first found at `path`.
    identity: (u64, u64),
    /// Where it starts in the series.
    start: u64,
    /// Its length, once the next segment exists (it is closed).
    closed: Option<u64>,
}

impl Series {
    /// The series whose first segment is `first` (which must exist).
    pub(super) fn open(name: &str, first: &Path) -> Result<Series, Stop> {
        let meta = std::fs::metadata(first).map_err(|e| io(first, e))?;
        Ok(Series {
            name: name.to_owned(),
            first: first.to_owned(),
            segments: vec![Segment {
                path: first.to_owned(),
                identity: identity(&meta),
                start: 0,
                closed: None,
            }],
        })
    }

    /// Segment `i` opened, checked to be the file first found there and, when
    /// closed, to keep its length; with its length now.
    fn open_segment(&self, i: usize) -> Result<(File, u64), Stop> {
        let segment = &self.segments[i];
        let unreadable = |e: std::io::Error| {
            Stop::File(format!(
                "{}: can no longer be read ({e})",
                segment.path.display()
            ))
        };
        // Open first and ask the open file: a rename between a stat of the
        // path and the open would otherwise read the new file as the old one.
        let file = File::open(&segment.path).map_err(unreadable)?;
        let meta = file.metadata().map_err(unreadable)?;
        if identity(&meta) != segment.identity {
            return Err(replaced(&self.name));
        }
        if let Some(closed) = segment.closed
            && meta.len() != closed
        {
            return Err(Stop::File(format!(
                "{}: a closed segment of {}, changed length from {closed} to {} bytes",
                segment.path.display(),
                self.name,
                meta.len()
            )));
        }
        Ok((file, meta.len()))
    }

    /// Whether segment `i` is closed: the next one exists (found, and
    /// learned, now if need be).
    fn closed(&mut self, i: usize) -> Result<bool, Stop> {
        if self.segments[i].closed.is_some() {
            return Ok(true);
        }
        let next = segments::nth(&self.first, i as u32 + 2);
        let found = match File::open(&next) {
            Ok(file) => file.metadata().map_err(|e| io(&next, e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(io(&next, e)),
        };
        // The next exists, so this one is written no more: its length now
        // is its length, and it ends with a whole line.
        let (mut file, len) = self.open_segment(i)?;
        if len > 0 {
            let mut last = [0u8];
            file.seek(SeekFrom::Start(len - 1))
                .and_then(|_| file.read_exact(&mut last))
                .map_err(|e| io(&self.segments[i].path, e))?;
            if last[0] != b'\n' {
                return Err(Stop::File(format!(
                    "{}: ends inside a line, though {} follows it",
                    self.segments[i].path.display(),
                    next.display()
                )));
            }
        }
        self.segments[i].closed = Some(len);
        let start = self.segments[i].start + len;
        self.segments.push(Segment {
            path: next,
            identity: identity(&found),
            start,
            closed: None,
        });
        Ok(true)
    }

    /// Hands `sink` the series' bytes from `from`, up to `upto` (or, `None`,
    /// up to the end of the last segment now), in pieces, in order; returns
    /// where they ended (short of `upto` when the series is shorter).
    pub(super) fn read(
        &mut self,
        from: u64,
        upto: Option<u64>,
        mut sink: impl FnMut(&[u8]) -> Result<(), Stop>,
    ) -> Result<u64, Stop> {
        let mut at = from;
        let mut buf = vec![0u8; 1 << 20];
        let mut i = 0;
        loop {
            if upto.is_some_and(|u| at >= u) {
                return Ok(at);
            }
            let closed = self.closed(i)?;
            let (mut file, len) = self.open_segment(i)?;
            let start = self.segments[i].start;
            let end = start + len;
            if at < end {
                if at < start {
                    return Err(Stop::File(format!(
                        "{}: cannot be read from byte {at}",
                        self.name
                    )));
                }
                let stop = upto.map_or(end, |u| u.min(end));
                file.seek(SeekFrom::Start(at - start))
                    .map_err(|e| io(&self.segments[i].path, e))?;
                let mut left = stop - at;
                while left > 0 {
                    let want = buf.len().min(left as usize);
                    let n = file
                        .read(&mut buf[..want])
                        .map_err(|e| io(&self.segments[i].path, e))?;
                    if n == 0 {
                        break;
                    }
                    sink(&buf[..n])?;
                    at += n as u64;
                    left -= n as u64;
                }
            }
            if !closed {
                return Ok(at);
            }
            i += 1;
        }
    }

    /// The length of the series' complete lines now, if it holds one: the
    /// closed segments, and the last up to its last newline.
    pub(super) fn complete_len(&mut self) -> Result<Option<u64>, Stop> {
        let mut i = 0;
        while self.closed(i)? {
            i += 1;
        }
        let (mut file, len) = self.open_segment(i)?;
        let whole =
            segments::whole_lines(&mut file, len).map_err(|e| io(&self.segments[i].path, e))?;
        let total = self.segments[i].start + whole;
        Ok((total > 0).then_some(total))
    }

    /// What was written after the `offset` bytes applied, up to the last
    /// complete line, once the series is checked to be the one followed: no
    /// shorter, and still holding `tail` just before `offset`. Returns those
    /// bytes (none when no line was completed) and the length of the
    /// incomplete line after them. With `most`, the complete lines within
    /// the first `most` bytes (at least one line, however long): a follow
    /// far behind takes what was written in batches of a bounded size; the
    /// incomplete length is then of what was read of the next line.
    pub(super) fn read_on(
        &mut self,
        offset: u64,
        tail: &[u8],
        most: Option<u64>,
    ) -> Result<(Vec<u8>, usize), Stop> {
        let from = offset - tail.len() as u64;
        let mut bytes = Vec::new();
        let upto = most.map(|most| offset + most);
        let end = self.read(from, upto, |b| {
            bytes.extend_from_slice(b);
            Ok(())
        })?;
        if end < offset {
            return Err(truncated(&self.name, end, offset));
        }
        let (complete, pending) = complete_after(&self.name, bytes, tail, offset)?;
        match (complete.is_empty(), most) {
            // The next line is longer than `most` and may be complete: read
            // again twice as far.
            (true, Some(most)) if upto == Some(end) => {
                self.read_on(offset, tail, Some(most.saturating_mul(2)))
            }
            _ => Ok((complete, pending)),
        }
    }
}

/// Reads a followed file's bytes again, across its segments: `len` bytes
/// from byte `from` (lines a growing import read before and wants again:
/// `asof_import::import::otlp::Growing::reading_again`). Each segment is
/// checked to be the file first found there, as the follow checks it.
pub fn read_again(
    name: &str,
    first: &Path,
) -> Result<impl FnMut(u64, u64) -> Result<Vec<u8>, String> + Send + use<>, Stop> {
    let mut series = Series::open(name, first)?;
    let name = name.to_owned();
    Ok(move |from: u64, len: u64| {
        let mut bytes = Vec::with_capacity(len as usize);
        let end = series
            .read(from, Some(from + len), |b| {
                bytes.extend_from_slice(b);
                Ok(())
            })
            .map_err(|stop| stop.to_string())?;
        if end < from + len {
            return Err(format!(
                "{name}: ends at byte {end}, before the line read at byte {from}"
            ));
        }
        Ok(bytes)
    })
}

/// What the series at `first` holds past `offset`: its bytes, and the
/// complete lines among them (what a follow has yet to take in; a line
/// still being written is not counted).
pub fn unread(first: &Path, offset: u64) -> std::io::Result<(u64, u64)> {
    let (mut start, mut bytes, mut lines) = (0u64, 0u64, 0u64);
    let mut buf = vec![0u8; 1 << 16];
    let series = segments::existing(first);
    if series.is_empty() {
        // The file itself is not there: said as opening it says.
        File::open(first)?;
    }
    for path in series {
        let mut f = File::open(&path)?;
        let len = f.metadata()?.len();
        let end = start + len;
        if end > offset {
            let skip = offset.saturating_sub(start);
            f.seek(SeekFrom::Start(skip))?;
            bytes += len - skip;
            loop {
                match f.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        start = end;
    }
    Ok((bytes, lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(series: &mut Series, from: u64) -> (Vec<u8>, u64) {
        let mut got = Vec::new();
        let end = series
            .read(from, None, |b| {
                got.extend_from_slice(b);
                Ok(())
            })
            .unwrap();
        (got, end)
    }

    #[test]
    fn a_series_reads_as_one_file_and_a_segment_counts_once_the_next_exists() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("a.otlp.jsonl");
        std::fs::write(&first, "one\ntwo\n").unwrap();
        let mut series = Series::open("a", &first).unwrap();
        assert_eq!(series.complete_len().unwrap(), Some(8));
        std::fs::write(segments::nth(&first, 2), "three\nfo").unwrap();
        assert_eq!(series.complete_len().unwrap(), Some(14));
        assert_eq!(all(&mut series, 4), (b"two\nthree\nfo".to_vec(), 16));
        let (new, pending) = series.read_on(8, b"two\n", None).unwrap();
        assert_eq!((new, pending), (b"three\n".to_vec(), 2));
        // The tail before an offset may lie across a segment's end.
        let (new, pending) = series.read_on(14, b"o\nthree\n", None).unwrap();
        assert_eq!((new, pending), (Vec::new(), 2));
        // At most so many bytes: the complete lines within them, or the one
        // line that is longer, whole.
        let (new, pending) = series.read_on(4, b"one\n", Some(6)).unwrap();
        assert_eq!((new, pending), (b"two\n".to_vec(), 2));
        let (new, pending) = series.read_on(4, b"one\n", Some(4)).unwrap();
        assert_eq!((new, pending), (b"two\n".to_vec(), 0));
        let (new, pending) = series.read_on(4, b"", Some(3)).unwrap();
        assert_eq!((new, pending), (b"two\n".to_vec(), 2));
        let (new, pending) = series.read_on(8, b"", Some(1)).unwrap();
        assert_eq!((new, pending), (b"three\n".to_vec(), 2));
        let (new, pending) = series.read_on(4, b"", Some(100)).unwrap();
        assert_eq!((new, pending), (b"two\nthree\n".to_vec(), 2));
        assert_eq!(unread(&first, 8).unwrap(), (8, 1));
        assert_eq!(unread(&first, 0).unwrap(), (16, 3));
        // Bounded reads stop where asked, across segments.
        let mut got = Vec::new();
        let end = series
            .read(2, Some(11), |b| {
                got.extend_from_slice(b);
                Ok(())
            })
            .unwrap();
        assert_eq!((got, end), (b"e\ntwo\nthr".to_vec(), 11));
    }

    #[test]
    fn a_closed_segment_changed_or_cut_inside_a_line_stops_the_reader() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("a.otlp.jsonl");
        std::fs::write(&first, "one\ntwo").unwrap();
        let mut series = Series::open("a", &first).unwrap();
        assert_eq!(series.complete_len().unwrap(), Some(4));
        std::fs::write(segments::nth(&first, 2), "three\n").unwrap();
        let err = series.complete_len().unwrap_err().to_string();
        assert!(err.contains("ends inside a line, though"), "{err}");

        std::fs::write(&first, "one\ntwo\n").unwrap();
        let mut series = Series::open("a", &first).unwrap();
        assert_eq!(series.complete_len().unwrap(), Some(14));
        std::fs::OpenOptions::new()
            .append(true)
            .open(&first)
            .unwrap()
            .write_all(b"late\n")
            .unwrap();
        let err = series.read_on(14, b"", None).unwrap_err().to_string();
        assert!(err.contains("changed length from 8 to 13 bytes"), "{err}");
    }

    #[test]
    fn a_replaced_segment_stops_the_reader() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("a.otlp.jsonl");
        std::fs::write(&first, "one\n").unwrap();
        let second = segments::nth(&first, 2);
        std::fs::write(&second, "two\n").unwrap();
        let mut series = Series::open("a", &first).unwrap();
        assert_eq!(series.complete_len().unwrap(), Some(8));
        let other = dir.path().join("other");
        std::fs::write(&other, "owt\n").unwrap();
        std::fs::rename(&other, &second).unwrap();
        let err = series.read_on(4, b"", None).unwrap_err().to_string();
        assert!(
            err.contains("was replaced") || err.contains("replaced"),
            "{err}"
        );
    }

    use std::io::Write;
}
