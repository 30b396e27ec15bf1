//! A file written in segments: `asof serve`'s archive grows for as long as
//! the receiver runs, so it is written as a series of files, each closed
//! once it holds enough, and read as one. The first segment is the file's
//! own name (`run.db.otlp.jsonl`); the next ones add their number, six
//! digits, so that a shell's `run.db.otlp.jsonl*` lists them in order
//! (`run.db.otlp.jsonl.000002`, `….000003`, …). A segment ends with a whole
//! line, and once the next one exists nothing is written to it again.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The `n`th segment (from 1) of the series that starts at `first`.
pub fn nth(first: &Path, n: u32) -> PathBuf {
    if n <= 1 {
        return first.to_owned();
    }
    let mut name = first.as_os_str().to_owned();
    name.push(format!(".{n:06}"));
    PathBuf::from(name)
}

/// Where `segment` stands in its series: the series' first segment and its
/// number (1 for a name that ends in no six-digit number from 2 on).
fn place(segment: &Path) -> (PathBuf, u32) {
    let name = segment.as_os_str().to_string_lossy();
    let numbered = name
        .rsplit_once('.')
        .filter(|(_, n)| n.len() == 6 && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|(first, n)| Some((first, n.parse::<u32>().ok()?)))
        .filter(|&(_, n)| n >= 2);
    match numbered {
        Some((first, n)) => (PathBuf::from(first), n),
        None => (segment.to_owned(), 1),
    }
}

/// The segment after `segment`, whichever of its series it is.
pub fn after(segment: &Path) -> PathBuf {
    let (first, n) = place(segment);
    nth(&first, n + 1)
}

/// The segment before `segment` (none before a first one).
pub fn before(segment: &Path) -> Option<PathBuf> {
    let (first, n) = place(segment);
    (n > 1).then(|| nth(&first, n - 1))
}

/// The segments of the series at `first` that exist, in order: `first`
/// (when it exists), then each next one for as long as it exists.
pub fn existing(first: &Path) -> Vec<PathBuf> {
    (1..)
        .map(|n| nth(first, n))
        .take_while(|p| p.is_file())
        .collect()
}

/// The length of `file`'s whole lines (of its first `len` bytes): up to
/// and including its last newline; a segment being written may end inside
/// a line.
pub fn whole_lines(file: &mut File, len: u64) -> std::io::Result<u64> {
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
    fn segments_are_named_in_the_order_a_shell_lists_them() {
        let first = Path::new("/srv/run.db.otlp.jsonl");
        assert_eq!(nth(first, 1), first);
        assert_eq!(nth(first, 2), Path::new("/srv/run.db.otlp.jsonl.000002"));
        let mut names: Vec<String> = [12, 1, 3, 2, 100]
            .iter()
            .map(|&n| nth(first, n).display().to_string())
            .collect();
        names.sort();
        let order: Vec<String> = [1, 2, 3, 12, 100]
            .iter()
            .map(|&n| nth(first, n).display().to_string())
            .collect();
        assert_eq!(names, order);
    }

    #[test]
    fn the_segment_after_one_is_the_next_of_its_series() {
        let first = Path::new("/srv/run.db.otlp.jsonl");
        assert_eq!(after(first), nth(first, 2));
        assert_eq!(after(&nth(first, 2)), nth(first, 3));
        assert_eq!(after(&nth(first, 999_999)), nth(first, 1_000_000));
        // A name that only looks numbered is a first segment.
        let dated = Path::new("/srv/trace.20261206");
        assert_eq!(after(dated), nth(dated, 2));
        assert_eq!(before(first), None);
        assert_eq!(before(dated), None);
        assert_eq!(before(&nth(first, 2)), Some(first.to_owned()));
        assert_eq!(before(&nth(first, 3)), Some(nth(first, 2)));
    }

    #[test]
    fn the_series_is_the_segments_that_exist_without_a_gap() {
        let dir = std::env::temp_dir().join(format!("asof-segments-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let first = dir.join("a.jsonl");
        assert!(existing(&first).is_empty());
        for n in [1, 2, 4] {
            std::fs::write(nth(&first, n), "{}\n").unwrap();
        }
        assert_eq!(existing(&first), vec![nth(&first, 1), nth(&first, 2)]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
