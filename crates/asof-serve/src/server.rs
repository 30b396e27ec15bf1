//! The HTTP side of `asof serve`: OTLP/HTTP as its specification says.
//!
//! ```text
//! HTTP workers ─ route, token, content type, size ─▶ decode ─▶ queue ─▶ writer
//!      ▲                                                        (bounded)   │
//!      └──────────── 200 (partial_success) once the line is synced ◀────────┘
//!                                          append + fsync, many requests a sync
//! ```
//!
//! A full queue answers 503 with `Retry-After` at once (the exporter retries);
//! nothing from a request names a file. Connections are bounded (http.rs).

use crate::archive::Archive;
use crate::decode::{self, Encoding, Refusal, Signal};
use crate::http::{self, Answer, Body, Limits, Request};
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsPartialSuccess, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceResponse,
};
use prost::Message;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// How the receiver runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// Clients must send `Authorization: Bearer TOKEN` when set.
    pub token: Option<String>,
    /// The largest body, after decompression.
    pub limit: usize,
    /// Connections open at once (one more is answered 503 and closed).
    pub max_connections: usize,
    /// A connection with no request for this long is closed.
    pub idle: Duration,
    /// Requests waiting for the writer before the receiver answers 503.
    pub queue: usize,
    /// What `GET /` says the archive and store are.
    pub describe: String,
    /// Where review findings sent as logs go (the store's review file):
    /// never into the archive. `None`: such records are refused.
    pub review: Option<PathBuf>,
}

/// What the receiver has done so far.
#[derive(Debug, Default)]
pub struct Stats {
    /// Requests read.
    pub requests: AtomicU64,
    /// Spans and log records received.
    pub items: AtomicU64,
    /// Of those, the ones the importer cannot read.
    pub rejected: AtomicU64,
    /// Requests answered with anything but 200.
    pub refused: AtomicU64,
    /// Bytes appended to the archive.
    pub archive_bytes: AtomicU64,
    /// Requests being answered now (read, and not yet answered): a stop
    /// waits for them before the writer ends.
    pub in_flight: AtomicU64,
}

/// One request waiting for the writer: its line, and where to say it is synced.
struct Job {
    line: String,
    done: mpsc::Sender<io::Result<()>>,
}

/// A receiver running; stopped by [`Running::stop`].
pub struct Running {
    /// The address it listens on (the port chosen when 0 was asked).
    pub addr: SocketAddr,
    /// What it has done so far.
    pub stats: Arc<Stats>,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Running {
    /// Stops taking requests, lets those taken finish, and returns when the
    /// writer has synced the last.
    pub fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Binds `config.listen` and starts the connections' acceptor and the
/// writer appending to `archive`.
pub fn start(config: Config, archive: Archive) -> io::Result<Running> {
    let listener = std::net::TcpListener::bind(config.listen)?;
    let addr = listener.local_addr()?;
    let stats = Arc::new(Stats::default());
    stats
        .archive_bytes
        .store(archive.bytes(), Ordering::Relaxed);
    let stop = Arc::new(AtomicBool::new(false));
    let (queue, jobs) = mpsc::sync_channel::<Job>(config.queue.max(1));
    let mut threads = Vec::new();
    {
        let stats = stats.clone();
        let stop = stop.clone();
        threads.push(std::thread::spawn(move || {
            write(archive, jobs, &stats, &stop)
        }));
    }
    let limits = Limits {
        max_connections: config.max_connections.max(1),
        idle: config.idle,
        // The body as sent: at most the limit after decompression (gzip
        // does not make a body of OTLP larger).
        body: config.limit,
    };
    let reviews = config.review.clone().map(crate::review::ReviewFile::new);
    let handle = {
        let stats = stats.clone();
        move |request: &Request| {
            stats.in_flight.fetch_add(1, Ordering::SeqCst);
            stats.requests.fetch_add(1, Ordering::Relaxed);
            let answer = answer(request, &config, reviews.as_ref(), &queue, &stats);
            stats.in_flight.fetch_sub(1, Ordering::SeqCst);
            if answer.status != 200 {
                stats.refused.fetch_add(1, Ordering::Relaxed);
            }
            answer
        }
    };
    {
        let stop = stop.clone();
        threads.push(std::thread::spawn(move || {
            http::serve(listener, limits, stop, Arc::new(handle))
        }));
    }
    Ok(Running {
        addr,
        stats,
        stop,
        threads,
    })
}

/// The writer: takes what is queued, appends it in one write, syncs, and
/// tells each request. Many requests share one sync.
fn write(mut archive: Archive, jobs: mpsc::Receiver<Job>, stats: &Stats, stop: &AtomicBool) {
    loop {
        let first = match jobs.recv_timeout(Duration::from_millis(100)) {
            Ok(job) => job,
            // Stopping, the writer stays while a request being answered may
            // still queue its line: what was read is answered, not refused.
            Err(mpsc::RecvTimeoutError::Timeout)
                if !stop.load(Ordering::SeqCst) || stats.in_flight.load(Ordering::SeqCst) > 0 =>
            {
                continue;
            }
            Err(_) => return,
        };
        let mut batch = vec![first];
        while batch.len() < 512 {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let lines: Vec<&str> = batch.iter().map(|j| j.line.as_str()).collect();
        let result = archive.append(&lines);
        stats
            .archive_bytes
            .store(archive.bytes(), Ordering::Relaxed);
        for job in batch {
            let _ = job.done.send(match &result {
                Ok(()) => Ok(()),
                Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
            });
        }
    }
}

/// What a request gets: route, token, content type, size, decoding, then
/// the archive.
fn answer(
    request: &Request,
    config: &Config,
    reviews: Option<&crate::review::ReviewFile>,
    queue: &mpsc::SyncSender<Job>,
    stats: &Stats,
) -> Answer {
    let path = request.path.split('?').next().unwrap_or("");
    let signal = match path {
        "/v1/traces" => Signal::Traces,
        "/v1/logs" => Signal::Logs,
        "/" if request.method == "GET" => {
            return Answer::text(200, config.describe.clone());
        }
        _ => return Answer::text(404, "not found: POST OTLP to /v1/traces or /v1/logs\n"),
    };
    if request.method != "POST" {
        let mut a = Answer::text(405, "method not allowed: POST only\n");
        a.headers.push(("Allow", "POST".into()));
        return a;
    }
    if let Some(token) = &config.token {
        let expected = format!("Bearer {token}");
        if request.header("Authorization") != Some(expected.as_str()) {
            let mut a = Answer::text(401, "unauthorized: send Authorization: Bearer <token>\n");
            a.headers.push(("WWW-Authenticate", "Bearer".into()));
            return a;
        }
    }
    let encoding = match request
        .header("Content-Type")
        .map(|t| {
            t.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .as_deref()
    {
        Some("application/x-protobuf") => Encoding::Protobuf,
        Some("application/json") => Encoding::Json,
        other => {
            return Answer::text(
                415,
                format!(
                    "unsupported content type {}: send application/x-protobuf or application/json\n",
                    other.unwrap_or("(none)")
                ),
            );
        }
    };
    let gzip = match request
        .header("Content-Encoding")
        .map(|e| e.trim().to_ascii_lowercase())
    {
        None => false,
        Some(e) if e == "identity" || e.is_empty() => false,
        Some(e) if e == "gzip" => true,
        Some(e) => {
            return Answer::text(
                415,
                format!("unsupported content encoding {e}: send gzip or none\n"),
            );
        }
    };
    let body = match &request.body {
        Body::Read(body) => body,
        Body::TooLarge => {
            return Answer::text(
                413,
                format!("the body is over the {}-byte limit\n", config.limit),
            );
        }
        Body::Broken(why) => return Answer::text(400, format!("the body cannot be read: {why}\n")),
    };
    let decoded = decode::inflate(body, gzip, config.limit)
        .and_then(|bytes| decode::decode(signal, encoding, &bytes));
    let decoded = match decoded {
        Ok(d) => d,
        Err(Refusal::TooLarge { limit }) => {
            return Answer::text(
                413,
                format!("the body is over the {limit}-byte limit after decompression\n"),
            );
        }
        Err(Refusal::Undecodable(why)) => return Answer::text(400, format!("{why}\n")),
    };
    // A reviewer's findings go to the review file, the rest to the archive.
    let mut decoded = decoded;
    if signal == Signal::Logs && decoded.line.contains(asof_core::review::otlp::NAME) {
        let mut request: serde_json::Value = match serde_json::from_str(&decoded.line) {
            Ok(v) => v,
            Err(e) => {
                return Answer::text(400, format!("the request cannot be read again ({e})\n"));
            }
        };
        match crate::review::split(&mut request) {
            Ok(findings) if findings.is_empty() => {}
            Ok(findings) => {
                let Some(reviews) = reviews else {
                    return Answer::text(
                        400,
                        "this receiver keeps no review file: asof review findings are refused\n",
                    );
                };
                if let Err(why) = reviews.keep(&findings) {
                    return Answer::text(400, format!("{why}\n"));
                }
                decoded.line = request.to_string();
            }
            Err(why) => return Answer::text(400, format!("an asof review finding: {why}\n")),
        }
    }
    let (done, synced) = mpsc::channel();
    let job = Job {
        line: decoded.line,
        done,
    };
    let behind = || {
        let mut a = Answer::text(503, "the writer is behind: retry\n");
        a.headers.push(("Retry-After", "1".into()));
        a
    };
    match queue.try_send(job) {
        Ok(()) => {}
        Err(_) => return behind(),
    }
    match synced.recv_timeout(Duration::from_secs(30)) {
        Ok(Ok(())) => {}
        _ => return behind(),
    }
    stats
        .items
        .fetch_add(decoded.items as u64, Ordering::Relaxed);
    stats
        .rejected
        .fetch_add(decoded.rejected as u64, Ordering::Relaxed);
    success(signal, encoding, decoded.rejected, decoded.rejected_why)
}

/// 200, with `partial_success` when some items cannot be read.
fn success(signal: Signal, encoding: Encoding, rejected: usize, why: Option<String>) -> Answer {
    let message = why.unwrap_or_default();
    let body = match (encoding, signal) {
        (Encoding::Protobuf, Signal::Traces) => ExportTraceServiceResponse {
            partial_success: (rejected > 0).then_some(ExportTracePartialSuccess {
                rejected_spans: rejected as i64,
                error_message: message,
            }),
        }
        .encode_to_vec(),
        (Encoding::Protobuf, Signal::Logs) => ExportLogsServiceResponse {
            partial_success: (rejected > 0).then_some(ExportLogsPartialSuccess {
                rejected_log_records: rejected as i64,
                error_message: message,
            }),
        }
        .encode_to_vec(),
        (Encoding::Json, _) if rejected == 0 => b"{}".to_vec(),
        (Encoding::Json, Signal::Traces) => serde_json::json!({
            "partialSuccess": {"rejectedSpans": rejected.to_string(), "errorMessage": message}
        })
        .to_string()
        .into_bytes(),
        (Encoding::Json, Signal::Logs) => serde_json::json!({
            "partialSuccess": {"rejectedLogRecords": rejected.to_string(), "errorMessage": message}
        })
        .to_string()
        .into_bytes(),
    };
    Answer {
        status: 200,
        content_type: match encoding {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        },
        body,
        headers: Vec::new(),
    }
}
