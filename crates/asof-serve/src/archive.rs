//! The store's archive: every acknowledged request, one OTLP/JSON line each,
//! beside the store (`STORE.otlp.jsonl`). A line is appended and synced to
//! the disk before its request is answered 200, so a kill at any instant
//! loses nothing acknowledged; the archive re-imports anywhere with
//! `asof import otlp`, and the store follows it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The archive of `store`: its file name with `.otlp.jsonl` added.
pub fn path_for(store: &Path) -> PathBuf {
    let mut name = store.file_name().unwrap_or_default().to_os_string();
    name.push(".otlp.jsonl");
    store.with_file_name(name)
}

/// An archive open for appending.
pub struct Archive {
    file: File,
    path: PathBuf,
    bytes: u64,
}

impl Archive {
    /// Opens the archive at `path`, created if need be. A last line without
    /// its newline — a write a kill cut short, never acknowledged — is
    /// dropped.
    pub fn open(path: &Path) -> io::Result<Archive> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)?;
        let len = file.metadata()?.len();
        let whole = whole_lines(&mut file, len)?;
        if whole < len {
            file.set_len(whole)?;
            file.sync_data()?;
        }
        Ok(Archive {
            file,
            path: path.to_owned(),
            bytes: whole,
        })
    }

    /// The archive file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its size in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Appends `lines` (each without its newline) in one write and syncs
    /// them to the disk. On an error the archive is cut back to where it
    /// was, and nothing of them may be acknowledged.
    pub fn append(&mut self, lines: &[&str]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for line in lines {
            buf.extend_from_slice(line.as_bytes());
            buf.push(b'\n');
        }
        let written = self
            .file
            .write_all(&buf)
            .and_then(|()| self.file.sync_data());
        match written {
            Ok(()) => {
                self.bytes += buf.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Best effort: a half-written batch must not prefix the next.
                let _ = self.file.set_len(self.bytes);
                Err(e)
            }
        }
    }
}

/// The length of `file`'s whole lines: up to and including its last newline.
fn whole_lines(file: &mut File, len: u64) -> io::Result<u64> {
    let mut end = len;
    let mut chunk = vec![0u8; 64 << 10];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut chunk[..n])?;
        if let Some(at) = chunk[..n].iter().rposition(|&b| b == b'\n') {
            return Ok(start + at as u64 + 1);
        }
        end = start;
    }
    Ok(0)
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
        let mut archive = Archive::open(&path).unwrap();
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
        let mut archive = Archive::open(&path).unwrap();
        assert_eq!(archive.bytes(), 16);
        archive.append(&["{\"c\":3}"]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"
        );
    }
}
