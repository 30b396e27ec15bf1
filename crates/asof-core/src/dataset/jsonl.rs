//! The JSON Lines reader: a header object on the first line, one event per line.
//! Blank lines are allowed and skipped; the line number is every error's location.

use super::raw::{RawEvent, RawHeader};
use super::validate::{Positions, RawEventError, validate};
use super::{
    DatasetError, DatasetErrors, Location, MAX_JSONL_HEADER, MAX_JSONL_LINE, Parsed, strip_location,
};
use std::io::BufRead;

/// Lines parsed per batch by the parsing threads.
const BATCH_LINES: usize = 2048;
/// Threads parsing event lines while the reading thread splits them.
const PARSERS: usize = 2;

/// Event lines read but not yet parsed: their text end to end, where each ends,
/// and their line numbers.
#[derive(Default)]
struct Batch {
    text: String,
    ends: Vec<usize>,
    lines: Vec<usize>,
}

/// One event line read into its raw shape, or why it could not be.
pub type ParsedEvent = Result<RawEvent, RawEventError>;

/// Receives a JSON Lines dataset as [`stream`] reads it.
pub trait Sink {
    /// The header and its line, before any event.
    fn header(&mut self, header: RawHeader, line: usize);
    /// An event's index (in file order), line and parse.
    fn event(&mut self, index: usize, line: usize, event: ParsedEvent);
}

/// Collects the whole file (for validation and in-memory sources).
struct Collect {
    header: Option<RawHeader>,
    lines: LineNumbers,
    events: Vec<ParsedEvent>,
}

impl Sink for Collect {
    fn header(&mut self, header: RawHeader, line: usize) {
        self.header = Some(header);
        self.lines.header_line = line;
    }

    fn event(&mut self, _index: usize, line: usize, event: ParsedEvent) {
        self.lines.event_lines.push(line);
        self.events.push(event);
    }
}

/// Reads a JSON Lines dataset from `input` (named `file` in errors): the header line, then one
/// event per line, parsed on several threads and validated in order.
pub fn read(file: &str, input: impl BufRead + Send) -> Result<Parsed, DatasetErrors> {
    let mut all = Collect {
        header: None,
        lines: LineNumbers {
            event_lines: Vec::new(),
            header_line: 1,
        },
        events: Vec::new(),
    };
    stream(file, input, &mut all)?;
    let header = all.header.ok_or_else(|| DatasetErrors(vec![empty(file)]))?;
    validate(file, header, all.events, &all.lines)
}

/// Reads a JSON Lines dataset without holding it, handing it to `sink`. One thread splits lines and
/// hands batches
/// round-robin to the parsing threads; batches come back in order. Memory is a
/// few batches, whatever the file's size. Errors that stop the reading (a line
/// too long, an unreadable file, a bad header) are returned at the end.
pub fn stream(
    file: &str,
    input: impl BufRead + Send,
    sink: &mut impl Sink,
) -> Result<(), DatasetErrors> {
    std::thread::scope(|scope| {
        let mut to_parsers = Vec::new();
        let mut from_parsers = Vec::new();
        for _ in 0..PARSERS {
            let (send, receive) = std::sync::mpsc::sync_channel::<Batch>(4);
            let (send_parsed, receive_parsed) = std::sync::mpsc::sync_channel(4);
            to_parsers.push(send);
            from_parsers.push(receive_parsed);
            scope.spawn(move || {
                for batch in receive {
                    let parsed = parse_batch(&batch);
                    if send_parsed.send((batch.lines, parsed)).is_err() {
                        break;
                    }
                }
            });
        }
        let (send_header, receive_header) = std::sync::mpsc::sync_channel(1);
        let reader = scope.spawn(move || {
            split_lines(
                file,
                input,
                |header, line| {
                    // The receiver waits for it until the reader ends.
                    let _ = send_header.send((header, line));
                },
                |n, batch| {
                    // A parser only stops early by panicking, which the scope reports.
                    let _ = to_parsers[n % PARSERS].send(batch);
                },
            )
        });
        if let Ok((header, line)) = receive_header.recv() {
            sink.header(header, line);
        }
        let mut index = 0;
        'batches: for n in 0.. {
            let Ok((lines, parsed)) = from_parsers[n % PARSERS].recv() else {
                break 'batches;
            };
            for (line, event) in lines.into_iter().zip(parsed) {
                sink.event(index, line, event);
                index += 1;
            }
        }
        reader
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The error for a file with no header line.
pub fn empty(file: &str) -> DatasetError {
    error(
        file,
        1,
        None,
        "the file is empty; the first line must be the header object".to_owned(),
    )
}

/// Reads the header and splits the event lines into batches for `send`.
fn split_lines(
    file: &str,
    mut input: impl BufRead,
    mut on_header: impl FnMut(RawHeader, usize),
    mut send: impl FnMut(usize, Batch),
) -> Result<(), DatasetErrors> {
    let mut have_header = false;
    let mut fatal = Vec::new();
    let mut buffer = Vec::new();
    let mut batch = Batch::default();
    let mut batches = 0;
    let mut line_no = 0usize;
    loop {
        line_no += 1;
        buffer.clear();
        let limit = if !have_header {
            MAX_JSONL_HEADER
        } else {
            MAX_JSONL_LINE
        };
        let read = match read_line(&mut input, &mut buffer, limit) {
            Ok(read) => read,
            Err(LineError::TooLong) => {
                fatal.push(error(
                    file,
                    line_no,
                    None,
                    format!("line is longer than {limit} bytes"),
                ));
                break;
            }
            Err(LineError::Io(e)) => {
                fatal.push(error(
                    file,
                    line_no,
                    None,
                    format!("cannot read the file: {e}"),
                ));
                break;
            }
        };
        if read == 0 {
            break;
        }
        let Ok(text) = std::str::from_utf8(&buffer) else {
            fatal.push(error(
                file,
                line_no,
                None,
                "the line is not valid UTF-8".to_owned(),
            ));
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        if !have_header {
            let mut de = serde_json::Deserializer::from_str(text);
            match serde_path_to_error::deserialize::<_, RawHeader>(&mut de) {
                Ok(h) => {
                    have_header = true;
                    on_header(h, line_no);
                }
                Err(e) => {
                    let path = e.path().to_string();
                    let inner = e.into_inner();
                    let hint = if text.contains("\"evidence\"")
                        || text.contains("\"believe\"")
                        || text.contains("\"retract\"")
                        || text.contains("\"verify\"")
                    {
                        " (the first line must be the header object with `asof`, `incident`, `agents`, `topics`)"
                    } else {
                        ""
                    };
                    fatal.push(error(
                        file,
                        line_no,
                        Some(inner.column()),
                        format!(
                            "header{}: {}{hint}",
                            at_path(&path),
                            strip_location(&inner.to_string())
                        ),
                    ));
                    break;
                }
            }
            continue;
        }
        batch.text.push_str(text);
        batch.ends.push(batch.text.len());
        batch.lines.push(line_no);
        if batch.lines.len() == BATCH_LINES {
            send(batches, std::mem::take(&mut batch));
            batches += 1;
        }
    }
    if !batch.lines.is_empty() {
        send(batches, batch);
    }
    if !fatal.is_empty() {
        return Err(DatasetErrors(fatal));
    }
    if !have_header {
        return Err(DatasetErrors(vec![empty(file)]));
    }
    Ok(())
}

fn parse_batch(batch: &Batch) -> Vec<ParsedEvent> {
    let mut start = 0;
    batch
        .ends
        .iter()
        .zip(&batch.lines)
        .map(|(&end, &line_no)| {
            let text = &batch.text[start..end];
            start = end;
            parse_event(text, line_no)
        })
        .collect()
}

/// The fast parse first; only a failing line is parsed again to name the field.
/// One event line's parse (its line number for the error's location).
pub fn parse_event(text: &str, line_no: usize) -> ParsedEvent {
    serde_json::from_str::<RawEvent>(text).map_err(|_| {
        let mut de = serde_json::Deserializer::from_str(text);
        match serde_path_to_error::deserialize::<_, RawEvent>(&mut de) {
            Err(e) => {
                let path = e.path().to_string();
                let inner = e.into_inner();
                RawEventError {
                    location: Some(Location::at(line_no, inner.column())),
                    message: format!(
                        "event{}: {}",
                        at_path(&path),
                        strip_location(&inner.to_string())
                    ),
                }
            }
            Ok(_) => RawEventError {
                location: Some(Location::line(line_no)),
                message: "event: not a valid event object".to_owned(),
            },
        }
    })
}

fn at_path(path: &str) -> String {
    if path == "." || path.is_empty() {
        String::new()
    } else {
        format!(" `{path}`")
    }
}

fn error(file: &str, line: usize, column: Option<usize>, message: String) -> DatasetError {
    DatasetError {
        file: file.to_owned(),
        location: Some(Location {
            line,
            column,
            unit: None,
        }),
        event: None,
        message,
    }
}

enum LineError {
    TooLong,
    Io(std::io::Error),
}

/// Reads one line (without its newline) into `buf`, refusing lines over the limit
/// without buffering them whole.
fn read_line(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    limit: usize,
) -> Result<usize, LineError> {
    let mut total = 0;
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(LineError::Io(e)),
        };
        if chunk.is_empty() {
            return Ok(total);
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let body = if done { &chunk[..take - 1] } else { chunk };
        if buf.len() + body.len() > limit {
            return Err(LineError::TooLong);
        }
        buf.extend_from_slice(body);
        total += take;
        input.consume(take);
        if done {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(total);
        }
    }
}

struct LineNumbers {
    event_lines: Vec<usize>,
    header_line: usize,
}

impl Positions for LineNumbers {
    fn event(&self, index: usize) -> Option<Location> {
        self.event_lines.get(index).map(|&l| Location::line(l))
    }

    fn field(&self, index: usize, _kind: &str, _field: &str) -> Option<Location> {
        self.event(index)
    }

    fn header(&self, _path: &str) -> Option<Location> {
        Some(Location::line(self.header_line))
    }
}
