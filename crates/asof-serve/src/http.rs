//! The HTTP/1.1 connections of `asof serve`, bounded: at most
//! `max_connections` at once (one thread each; one more is answered 503
//! with `Retry-After` and closed), a connection idle for `idle` is closed,
//! a request head is at most [`MAX_HEAD`] bytes, and a body is read only up
//! to the size limit (`Content-Length` or chunked). The request line and
//! headers are parsed by `httparse`, hyper's parser; what a request means is
//! the server's (`server.rs`).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// The largest request head (request line and headers).
pub const MAX_HEAD: usize = 64 << 10;
/// The most headers a request may have.
const MAX_HEADERS: usize = 64;

/// A request, its body read.
pub struct Request {
    pub method: String,
    pub path: String,
    headers: Vec<(String, String)>,
    pub body: Body,
}

/// A request's body as read.
pub enum Body {
    Read(Vec<u8>),
    /// Over the limit: not read (the connection is closed after the answer).
    TooLarge,
    /// Cut short or malformed (the connection is closed after the answer).
    Broken(String),
}

impl Request {
    /// The value of header `name` (the first, any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// An answer: status, content type, body, extra headers.
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub headers: Vec<(&'static str, String)>,
}

impl Answer {
    pub fn text(status: u16, message: impl Into<String>) -> Answer {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: message.into().into_bytes(),
            headers: Vec::new(),
        }
    }
}

/// How connections are bounded.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_connections: usize,
    /// A connection with no request for this long is closed.
    pub idle: Duration,
    /// The largest body.
    pub body: usize,
}

/// Accepts connections on `listener` until `stop`, serving each on a thread
/// of its own with `handle`, at most `limits.max_connections` at once.
pub fn serve(
    listener: TcpListener,
    limits: Limits,
    stop: Arc<AtomicBool>,
    handle: Arc<dyn Fn(&Request) -> Answer + Send + Sync>,
) {
    let open = Arc::new(AtomicUsize::new(0));
    // Non-blocking accepts, so the loop sees `stop`.
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    while !stop.load(Ordering::SeqCst) {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            // A connection that failed before it was taken (reset): the
            // next one is still served.
            Err(_) => continue,
        };
        let _ = stream.set_nonblocking(false);
        if open.load(Ordering::SeqCst) >= limits.max_connections {
            busy(stream);
            continue;
        }
        open.fetch_add(1, Ordering::SeqCst);
        let (gone, handle, stop) = (open.clone(), handle.clone(), stop.clone());
        let spawned = std::thread::Builder::new()
            .name("asof-serve-connection".into())
            .spawn(move || {
                let _ = connection(stream, limits, &stop, handle.as_ref());
                gone.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            // No thread to be had: this connection is dropped, the next
            // ones are tried again.
            open.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// One connection over the limit: 503 and closed.
fn busy(mut stream: TcpStream) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let answer = Answer {
        headers: vec![("Retry-After", "1".into())],
        ..Answer::text(503, "too many connections: retry\n")
    };
    let _ = respond(&mut stream, &answer, false);
}

/// Serves the requests of one connection, kept alive until the client
/// closes it, asks to, is idle for `limits.idle`, or sends what cannot be
/// read on from.
fn connection(
    stream: TcpStream,
    limits: Limits,
    stop: &AtomicBool,
    handle: &(dyn Fn(&Request) -> Answer + Send + Sync),
) -> io::Result<()> {
    stream.set_read_timeout(Some(limits.idle))?;
    stream.set_write_timeout(Some(limits.idle))?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    while !stop.load(Ordering::SeqCst) {
        let head = match read_head(&mut reader)? {
            Head::Closed => return Ok(()),
            Head::TooLarge => {
                let answer = Answer::text(431, "the request head is too large\n");
                return respond(&mut writer, &answer, false);
            }
            Head::Bytes(head) => head,
        };
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut parsed = httparse::Request::new(&mut headers);
        let parsed = match parsed.parse(&head) {
            Ok(httparse::Status::Complete(_)) => parsed,
            _ => {
                let answer = Answer::text(400, "not an HTTP/1.1 request\n");
                return respond(&mut writer, &answer, false);
            }
        };
        let mut request = Request {
            method: parsed.method.unwrap_or("").to_owned(),
            path: parsed.path.unwrap_or("").to_owned(),
            headers: parsed
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_owned(),
                        String::from_utf8_lossy(h.value).into_owned(),
                    )
                })
                .collect(),
            body: Body::Read(Vec::new()),
        };
        let http10 = parsed.version == Some(0);
        let close_asked = request
            .header("Connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"));
        if request
            .header("Expect")
            .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
        {
            writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        }
        request.body = read_body(&mut reader, &request, limits.body)?;
        // The body was read whole: the next request starts right after it.
        let readable = matches!(request.body, Body::Read(_));
        let answer = handle(&request);
        let keep = readable && !http10 && !close_asked;
        respond(&mut writer, &answer, keep)?;
        if !keep {
            if !readable {
                drain(&mut writer, &mut reader);
            }
            return Ok(());
        }
    }
    Ok(())
}

/// Closes a connection whose body was not read (over the limit, or broken)
/// gracefully: the answer is sent, the writing side shut, and what the
/// client still sends read and dropped for a while, so the client reads the
/// answer instead of a reset.
fn drain(writer: &mut TcpStream, reader: &mut BufReader<TcpStream>) {
    let _ = writer.shutdown(std::net::Shutdown::Write);
    let _ = reader
        .get_ref()
        .set_read_timeout(Some(Duration::from_secs(2)));
    let _ = io::copy(&mut reader.by_ref().take(64 << 20), &mut io::sink());
}

enum Head {
    Bytes(Vec<u8>),
    /// The client closed (or went idle) between requests.
    Closed,
    TooLarge,
}

/// Reads up to the blank line that ends a request head.
fn read_head(reader: &mut BufReader<TcpStream>) -> io::Result<Head> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = match reader
            .by_ref()
            .take((MAX_HEAD + 1 - head.len()) as u64)
            .read_until(b'\n', &mut line)
        {
            Ok(n) => n,
            Err(e) if is_timeout(&e) && head.is_empty() => return Ok(Head::Closed),
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Ok(Head::Closed);
        }
        // Blank lines before a request are skipped (RFC 9112 §2.2).
        if head.is_empty() && (line == b"\r\n" || line == b"\n") {
            continue;
        }
        head.extend_from_slice(&line);
        if head.len() > MAX_HEAD {
            return Ok(Head::TooLarge);
        }
        if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
            return Ok(Head::Bytes(head));
        }
        if !line.ends_with(b"\n") {
            // The connection ended inside the head.
            return Ok(Head::Closed);
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Reads the body `request` announces, up to `limit` bytes.
fn read_body(
    reader: &mut BufReader<TcpStream>,
    request: &Request,
    limit: usize,
) -> io::Result<Body> {
    let chunked = request
        .header("Transfer-Encoding")
        .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
    if chunked {
        return read_chunked(reader, limit);
    }
    let length = match request.header("Content-Length") {
        None => return Ok(Body::Read(Vec::new())),
        Some(v) => match v.trim().parse::<u64>() {
            Ok(n) => n,
            Err(_) => {
                return Ok(Body::Broken(format!(
                    "Content-Length {v:?} is not a number"
                )));
            }
        },
    };
    if length > limit as u64 {
        return Ok(Body::TooLarge);
    }
    let mut body = Vec::with_capacity(length as usize);
    reader.by_ref().take(length).read_to_end(&mut body)?;
    if body.len() as u64 != length {
        return Ok(Body::Broken(format!(
            "the body ended after {} of its {length} bytes",
            body.len()
        )));
    }
    Ok(Body::Read(body))
}

/// A chunked body (RFC 9112 §7.1), its trailers skipped.
fn read_chunked(reader: &mut BufReader<TcpStream>, limit: usize) -> io::Result<Body> {
    let mut body = Vec::new();
    loop {
        let mut line = Vec::new();
        reader.by_ref().take(4096).read_until(b'\n', &mut line)?;
        let text = String::from_utf8_lossy(&line);
        let size = text.split(';').next().unwrap_or("").trim();
        let Ok(size) = u64::from_str_radix(size, 16) else {
            return Ok(Body::Broken(format!(
                "a chunk size {size:?} is not hexadecimal"
            )));
        };
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                let mut trailer = Vec::new();
                let n = reader.by_ref().take(4096).read_until(b'\n', &mut trailer)?;
                if n == 0 || trailer == b"\r\n" || trailer == b"\n" {
                    return Ok(Body::Read(body));
                }
            }
        }
        if body.len() as u64 + size > limit as u64 {
            return Ok(Body::TooLarge);
        }
        let before = body.len();
        reader.by_ref().take(size).read_to_end(&mut body)?;
        if (body.len() - before) as u64 != size {
            return Ok(Body::Broken("the body ended inside a chunk".into()));
        }
        let mut end = [0u8; 2];
        if reader.read_exact(&mut end).is_err() || &end != b"\r\n" {
            return Ok(Body::Broken("a chunk does not end with CRLF".into()));
        }
    }
}

/// Writes `answer`, with `Connection: close` unless the connection is kept.
fn respond(stream: &mut TcpStream, answer: &Answer, keep: bool) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
        answer.status,
        reason(answer.status),
        answer.content_type,
        answer.body.len()
    );
    for (name, value) in &answer.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !keep {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(&answer.body)?;
    stream.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    }
}
