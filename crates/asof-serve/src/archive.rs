//! The store's archive: every acknowledged request, one OTLP/JSON line each,
//! beside the store (`STORE.otlp.jsonl`). A line is appended and synced to
//! the disk before its request is answered 200, so a kill at any instant
//! loses nothing acknowledged; the archive re-imports anywhere with
//! `asof import otlp STORE.otlp.jsonl*`, and the store follows it.
//!
//! A receiver runs for days, so the archive is written in segments
//! ([`asof_core::segments`]): once a segment holds `segment` bytes, the next
//! lines go to a new one (`STORE.otlp.jsonl.000002`, …), created and its
//! name synced to the directory before anything is written to it. A segment
//! is never written again once the next exists, and holds whole lines only:
//! a batch of lines is never split, so a segment may pass the size by one
//! batch.

use asof_core::segments;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The archive of `store`: its file name with `.otlp.jsonl` added (its first
/// segment).
pub fn path_for(store: &Path) -> PathBuf {
    let mut name = store.file_name().unwrap_or_default().to_os_string();
    name.push(".otlp.jsonl");
    store.with_file_name(name)
}

/// The size at which a segment is closed, unless told otherwise.
pub const SEGMENT: u64 = 256 << 20;

/// An archive open for appending.
pub struct Archive {
    /// The segment being written, its number and its size.
    file: File,
    first: PathBuf,
    n: u32,
    in_segment: u64,
    /// The size of every segment together.
    bytes: u64,
    segment: u64,
}

impl Archive {
    /// Opens the archive whose first segment is `path`, created if need be,
    /// to append to its last segment, closed at `segment` bytes. A last line
    /// without its newline — a write a kill cut short, never acknowledged —
    /// is dropped.
    pub fn open(path: &Path, segment: u64) -> io::Result<Archive> {
        let series = segments::existing(path);
        let n = series.len().max(1) as u32;
        let mut sealed = 0;
        for closed in series.iter().take(series.len().saturating_sub(1)) {
            sealed += std::fs::metadata(closed)?.len();
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(segments::nth(path, n))?;
        let len = file.metadata()?.len();
        let whole = segments::whole_lines(&mut file, len)?;
        if whole < len {
            file.set_len(whole)?;
            file.sync_data()?;
        }
        Ok(Archive {
            file,
            first: path.to_owned(),
            n,
            in_segment: whole,
            bytes: sealed + whole,
            segment: segment.max(1),
        })
    }

    /// The archive's first segment.
    pub fn path(&self) -> &Path {
        &self.first
    }

    /// Its size in bytes, every segment together.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Its segments so far.
    pub fn segments(&self) -> u32 {
        self.n
    }

    /// Appends `lines` (each without its newline) in one write and syncs
    /// them to the disk, in a new segment when the one being written is
    /// full. On an error the archive is cut back to where it was, and
    /// nothing of them may be acknowledged.
    pub fn append(&mut self, lines: &[&str]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for line in lines {
            buf.extend_from_slice(line.as_bytes());
            buf.push(b'\n');
        }
        if self.in_segment > 0 && self.in_segment + buf.len() as u64 > self.segment {
            self.next_segment()?;
        }
        let written = self
            .file
            .write_all(&buf)
            .and_then(|()| self.file.sync_data());
        match written {
            Ok(()) => {
                self.bytes += buf.len() as u64;
                self.in_segment += buf.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Best effort: a half-written batch must not prefix the next.
                let _ = self.file.set_len(self.in_segment);
                Err(e)
            }
        }
    }

    /// Closes the segment being written and opens the next, its name synced
    /// to the directory first: a reader that finds it knows the one before
    /// is whole.
    fn next_segment(&mut self) -> io::Result<()> {
        let path = segments::nth(&self.first, self.n + 1);
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(&path)?;
        file.sync_all()?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        self.file = file;
        self.n += 1;
        self.in_segment = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_appended_whole_and_a_cut_last_line_is_dropped_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("run.db");
        let path = path_for(&store);
        assert_eq!(path, dir.path().join("run.db.otlp.jsonl"));
        let mut archive = Archive::open(&path, SEGMENT).unwrap();
        archive.append(&["{\"a\":1}", "{\"b\":2}"]).unwrap();
        assert_eq!(archive.bytes(), 16);
        drop(archive);
        // A kill in the middle of the next write.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"c\":")
            .unwrap();
        let mut archive = Archive::open(&path, SEGMENT).unwrap();
        assert_eq!(archive.bytes(), 16);
        archive.append(&["{\"c\":3}"]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"
        );
    }

    #[test]
    fn a_full_segment_is_closed_and_the_next_lines_go_to_a_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_for(&dir.path().join("run.db"));
        let mut archive = Archive::open(&path, 20).unwrap();
        archive.append(&["{\"a\":1}", "{\"b\":2}"]).unwrap();
        // 16 bytes and 8 more would pass 20: a new segment, the batch whole.
        archive
            .append(&["{\"c\":3}", "{\"d\":4}", "{\"e\":5}"])
            .unwrap();
        archive.append(&["{\"f\":6}"]).unwrap();
        assert_eq!((archive.segments(), archive.bytes()), (3, 48));
        let second = asof_core::segments::nth(&path, 2);
        assert_eq!(
            std::fs::read_to_string(&second).unwrap(),
            "{\"c\":3}\n{\"d\":4}\n{\"e\":5}\n"
        );
        drop(archive);
        // Opened again, it goes on in the last segment, counting them all.
        let mut archive = Archive::open(&path, 20).unwrap();
        assert_eq!((archive.segments(), archive.bytes()), (3, 48));
        archive.append(&["{\"g\":7}"]).unwrap();
        assert_eq!(
            std::fs::read_to_string(asof_core::segments::nth(&path, 3)).unwrap(),
            "{\"f\":6}\n{\"g\":7}\n"
        );
        let all: String = asof_core::segments::existing(&path)
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect();
        assert_eq!(all.lines().count(), 7);
    }
}
