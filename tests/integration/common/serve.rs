//! What the serve tests and the serve bench share (benches/common includes
//! this file): the client's side of HTTP/1.1, and how far a store follows
//! its archive.

use std::io::{BufRead, Read};
use std::net::TcpStream;
use std::path::Path;

/// The archive lines the store at `db` has applied (its follow position),
/// read without creating the store (`None` before `serve` made it).
pub fn applied_lines(db: &Path) -> Option<u64> {
    rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .ok()?
        .query_row(
            "SELECT value FROM meta WHERE key = 'follow_lines'",
            [],
            |r| r.get::<_, String>(0),
        )
        .ok()?
        .parse()
        .ok()
}

/// Reads one answer from a kept-alive connection: its status and its body
/// (by `Content-Length`, as `asof serve` answers).
pub fn read_answer(stream: &mut std::io::BufReader<TcpStream>) -> Option<(u16, Vec<u8>)> {
    let mut status = String::new();
    stream.read_line(&mut status).ok()?;
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).ok()?;
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).ok()?;
    Some((status.split_whitespace().nth(1)?.parse().ok()?, body))
}
