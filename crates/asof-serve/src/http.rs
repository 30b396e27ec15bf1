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
    /// The method (`POST`).
    pub method: String,
    /// The path (`/v1/traces`).
    pub path: String,
    headers: Vec<(String, String)>,
    /// Its body.
    pub body: Body,
}

/// A request's body as read.
pub enum Body {
    /// Read whole.
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
    /// The HTTP status.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
    /// More headers, in order.
    pub headers: Vec<(&'static str, String)>,
}

impl Answer {
    /// A plain-text answer of `status` saying `message`.
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
    /// At most this many connections at once (one more is answered 503 and closed).
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
        let go_on = || writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        match next(&mut reader, limits.body, go_on)? {
            Next::Closed => return Ok(()),
            Next::Refuse(answer) => return respond(&mut writer, &answer, false),
            Next::Request { request, keep } => {
                let answer = handle(&request);
                respond(&mut writer, &answer, keep)?;
                if !keep {
                    if !matches!(request.body, Body::Read(_)) {
                        drain(&mut writer, &mut reader);
                    }
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

/// What a connection sends next.
pub enum Next {
    /// Nothing: it closed, or went idle between requests.
    Closed,
    /// What cannot be read as a request: answered, then the connection is
    /// closed.
    Refuse(Answer),
    /// A request; `keep`: the connection goes on after its answer (its body
    /// was read whole, and neither HTTP/1.0 nor `Connection: close` ends it).
    Request {
        /// The request.
        request: Request,
        /// Whether the connection goes on after its answer.
        keep: bool,
    },
}

/// Reads the next request from `reader`: its head (at most [`MAX_HEAD`]
/// bytes, parsed by httparse), then its body up to `limit` bytes, calling
/// `go_on` first when the client waits for `100 Continue`.
pub fn next(
    reader: &mut impl BufRead,
    limit: usize,
    go_on: impl FnOnce() -> io::Result<()>,
) -> io::Result<Next> {
    let head = match read_head(reader)? {
        Head::Closed => return Ok(Next::Closed),
        Head::TooLarge => {
            return Ok(Next::Refuse(Answer::text(
                431,
                "the request head is too large\n",
            )));
        }
        Head::Bytes(head) => head,
    };
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    if !matches!(parsed.parse(&head), Ok(httparse::Status::Complete(_))) {
        return Ok(Next::Refuse(Answer::text(400, "not an HTTP/1.1 request\n")));
    }
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
        go_on()?;
    }
    request.body = read_body(reader, &request, limit)?;
    // A body read whole: the next request starts right after it.
    let keep = matches!(request.body, Body::Read(_)) && !http10 && !close_asked;
    Ok(Next::Request { request, keep })
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
fn read_head(reader: &mut impl BufRead) -> io::Result<Head> {
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
fn read_body(reader: &mut impl BufRead, request: &Request, limit: usize) -> io::Result<Body> {
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
fn read_chunked(reader: &mut impl BufRead, limit: usize) -> io::Result<Body> {
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
        // Checked: a size near u64::MAX must not wrap under the limit.
        if (body.len() as u64)
            .checked_add(size)
            .is_none_or(|total| total > limit as u64)
        {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// Every request `bytes` hold, read as a connection reads them: each
    /// one's status if refused, else its method, body (or why not) and
    /// whether the connection goes on.
    fn read_all(bytes: &[u8], limit: usize) -> Vec<String> {
        let mut reader = Cursor::new(bytes.to_vec());
        let mut out = Vec::new();
        for _ in 0..16 {
            match next(&mut reader, limit, || Ok(())).expect("readable") {
                Next::Closed => break,
                Next::Refuse(answer) => {
                    out.push(answer.status.to_string());
                    break;
                }
                Next::Request { request, keep } => {
                    let body = match &request.body {
                        Body::Read(b) => String::from_utf8_lossy(b).into_owned(),
                        Body::TooLarge => "too large".into(),
                        Body::Broken(why) => format!("broken: {why}"),
                    };
                    out.push(format!("{} {body} {keep}", request.method));
                    if !keep {
                        break;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn requests_one_after_another_on_a_connection() {
        let two = b"POST /v1/traces HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc\
                    POST /v1/traces HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nde\r\n1\r\nf\r\n0\r\nT: 1\r\n\r\n\
                    GET / HTTP/1.1\r\nConnection: close\r\n\r\n";
        assert_eq!(
            read_all(two, 100),
            ["POST abc true", "POST def true", "GET  false"]
        );
        assert_eq!(read_all(b"GET / HTTP/1.0\r\n\r\n", 100), ["GET  false"]);
    }

    #[test]
    fn bodies_past_the_limit_are_not_read() {
        let long = b"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n";
        assert_eq!(read_all(long, 100), ["POST too large false"]);
        let chunks = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n";
        assert_eq!(read_all(chunks, 60), ["POST too large false"]);
        // A size that would wrap past u64::MAX is over the limit, not under it.
        let wrap = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
                     2\r\nab\r\nfffffffffffffffe\r\nxx";
        assert_eq!(read_all(wrap, 100), ["POST too large false"]);
    }

    #[test]
    fn what_cannot_be_read_on_from_ends_the_connection() {
        assert_eq!(read_all(b"HELLO\r\n\r\n", 100), ["400"]);
        let mut huge = b"GET / HTTP/1.1\r\nX: ".to_vec();
        huge.extend(std::iter::repeat_n(b'a', MAX_HEAD));
        huge.extend_from_slice(b"\r\n\r\n");
        assert_eq!(read_all(&huge, 100), ["431"]);
        let short = b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc";
        assert_eq!(
            read_all(short, 100),
            ["POST broken: the body ended after 3 of its 9 bytes false"]
        );
        let bad = b"POST / HTTP/1.1\r\nContent-Length: nine\r\n\r\n";
        assert_eq!(
            read_all(bad, 100),
            ["POST broken: Content-Length \"nine\" is not a number false"]
        );
        let chunk = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        assert_eq!(
            read_all(chunk, 100),
            ["POST broken: a chunk size \"zz\" is not hexadecimal false"]
        );
        // Cut inside a head: nothing to answer.
        assert!(read_all(b"GET / HTTP/1.1\r\nHost: x", 100).is_empty());
    }

    #[test]
    fn a_client_waiting_for_100_continue_is_told_to_go_on() {
        let bytes = b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok";
        let mut told = false;
        let read = next(&mut Cursor::new(bytes.to_vec()), 100, || {
            told = true;
            Ok(())
        });
        assert!(matches!(read, Ok(Next::Request { keep: true, .. })));
        assert!(told);
    }
}
