//! `--follow` of a file still being written (design.md §6): an asof JSON Lines
//! dataset, or an OpenTelemetry trace in JSON Lines (one OTLP/JSON request a
//! line, as the Collector's file exporter writes it), read with the design.md §7
//! options. Which one is decided once the file's first line is complete: an
//! agent's file is often empty when the follow starts.

use super::import::TraceArgs;
use crate::dataset;
use crate::dataset::raw::RawEvent;
use crate::import::{self, otlp};
use crate::store::follow::{self, Again, Batch, Converted, Grown, Growth, Stop, Suffix};
use std::path::Path;

/// Follows `file` into `store` (see [`follow::follow`] and
/// [`follow::follow_whole`]), calling `go_on` after each batch. `archive`:
/// the file is `asof serve`'s archive, a trace one request a line by
/// construction, whose store is made at once (empty until the first line).
pub fn run(
    file: &Path,
    store: &Path,
    force: bool,
    poll: std::time::Duration,
    trace: &TraceArgs,
    archive: bool,
    go_on: impl FnMut(&Batch) -> bool,
) -> Result<(), Stop> {
    if dataset::Format::from_path(file) == Some(dataset::Format::Yaml) {
        return Err(Stop::File(format!(
            "{}: --follow reads a file written line by line (an asof JSON Lines dataset, or an OTLP trace in JSON Lines), not YAML",
            file.display()
        )));
    }
    if !trace.with.is_empty() {
        return Err(Stop::File(format!(
            "{}: --follow reads one file as it grows, so --with is not read with it; have the Collector write the traces and logs pipelines to one file exporter, and follow that file",
            file.display()
        )));
    }
    // A rules file is read (and refused) before any waiting.
    let options = trace
        .options()
        .map_err(|e| Stop::File(e.message().to_owned()))?;
    if !archive {
        return follow_any(file, store, force, poll, trace, &options, go_on);
    }
    // The archive grows for as long as serve runs, in segments, its lines
    // no longer than serve's body limit: no limit here.
    follow_trace(file, store, force, poll, &options, u64::MAX, go_on)
}

/// A followed file that may be a dataset or a trace: which, its first line
/// says.
fn follow_any(
    file: &Path,
    store: &Path,
    force: bool,
    poll: std::time::Duration,
    trace: &TraceArgs,
    options: &otlp::Options,
    mut go_on: impl FnMut(&Batch) -> bool,
) -> Result<(), Stop> {
    if follow::wait_for_a_line(file, poll, &mut go_on)?.is_none() {
        return Ok(());
    }
    if !super::source::is_otlp(file) {
        if dataset::Format::from_path(file) != Some(dataset::Format::Jsonl) {
            return Err(Stop::File(format!(
                "{}: --follow reads an asof JSON Lines dataset (.jsonl) or an OTLP trace in JSON Lines, and this is neither",
                file.display()
            )));
        }
        trace
            .refuse_for(file)
            .map_err(|e| Stop::File(e.message().to_owned()))?;
        return follow::follow(file, store, force, poll, go_on);
    }
    one_request_a_line(file)?;
    // As `import otlp` reads it: no limit to the file, each request at most
    // what a request read whole may be.
    follow_trace(file, store, force, poll, options, otlp::MAX_BYTES, go_on)
}

/// A trace followed into its store, each line at most `max` bytes: each batch reads
/// only the lines appended since the last one (in the file's next segments
/// too, when it has them: serve's archive).
fn follow_trace(
    file: &Path,
    store: &Path,
    force: bool,
    poll: std::time::Duration,
    options: &otlp::Options,
    max: u64,
    go_on: impl FnMut(&Batch) -> bool,
) -> Result<(), Stop> {
    let name = file.display().to_string();
    // The file's lines can be read again, so spans no checkpoint converts
    // again keep only what later spans consult of them.
    let again = follow::read_again(&name, file)?;
    let mut growing = Trace {
        growing: otlp::Growing::new(&name, options).reading_again(Box::new(again)),
        name,
        noops: Vec::new(),
    };
    follow::follow_whole(file, store, force, poll, max, &mut growing, go_on)
}

/// A trace's import growing with its file.
struct Trace {
    name: String,
    growing: otlp::Growing,
    /// The retractions the store leaves out (they find nothing to retract)
    /// as the last whole conversion found them: each one's place in the
    /// import's log, and what the summary says of it.
    noops: Vec<(usize, import::Skipped)>,
}

impl Growth for Trace {
    fn feed(&mut self, lines: &[u8]) -> Result<(), Stop> {
        Ok(self.growing.feed(lines)?)
    }

    /// Each line's request parsed.
    type Ahead = otlp::Parsed;

    fn ahead(lines: &[u8]) -> otlp::Parsed {
        otlp::Growing::parse(lines)
    }

    fn feed_ahead(&mut self, lines: &[u8], parsed: otlp::Parsed) -> Result<(), Stop> {
        Ok(self.growing.feed_parsed(lines, parsed)?)
    }

    /// The run with nothing in it yet: the store a receiver or a follow
    /// of an empty trace starts with.
    fn nothing_yet(&mut self) -> Option<Result<Converted, Stop>> {
        Some(self.converted(self.growing.nothing_yet()))
    }

    /// What `asof import otlp` makes of every line fed so far.
    fn convert(&mut self) -> Result<Converted, Stop> {
        let draft = self.growing.draft()?;
        self.converted(draft)
    }

    /// What the new lines changed: the import's log from the first event
    /// they changed, each event checked on its own rules (the importer
    /// made its references hold), with the summary `finish` would give.
    fn grow(&mut self) -> Result<Grown, Stop> {
        let advance = self.growing.advance()?;
        let otlp::Advance {
            keep,
            events,
            origins,
            header,
            mut report,
            calls_from,
            assertions,
            retractions,
        } = advance;
        // Those after the first change are judged again as the store takes them.
        let cut = self.noops.partition_point(|(at, _)| *at < keep);
        self.noops.truncate(cut);
        let header = dataset::from_raw(&self.name, header, Vec::new(), Vec::new())?
            .dataset
            .header;
        let events = events
            .into_iter()
            .zip(origins)
            .enumerate()
            .map(|(j, (raw, origin))| {
                dataset::validate::event_alone(&self.name, (keep + j, 0), raw, Some(origin))
            })
            .collect::<Result<Vec<_>, _>>()?;
        report.noops = self.noops.iter().map(|(_, s)| s.clone()).collect();
        report.assertions = assertions;
        report.retractions = retractions - cut;
        report.agents = header.agents.len();
        report.topics = header.topics.len();
        // The calls from the first the lines changed: the store writes them again.
        let calls = std::mem::take(&mut report.calls);
        let meta = report
            .meta_rows()
            .map_err(|e| Stop::File(e.to_string()))?
            .into_iter()
            .filter(|(key, _)| *key == "import_report")
            .collect();
        Ok(Grown::From(Suffix {
            keep,
            header,
            events,
            meta,
            skipped: report.skipped.len(),
            calls_from,
            calls,
        }))
    }

    fn taken(&mut self) {
        self.growing.retire();
    }

    fn settled(&self) -> (usize, usize) {
        self.growing.settled()
    }

    fn converted_again(&self) -> Again {
        let sum = |t: &import::Tally| t.0.iter().map(|c| c.count).sum();
        Again {
            from_checkpoint: sum(self.growing.taken_up()),
            from_start: sum(self.growing.converted_again()),
            whole: sum(self.growing.converted_whole()),
        }
    }
}

impl Trace {
    /// `draft` validated and replayed, with its import summary for the meta
    /// and the retractions it leaves out (found nothing to retract).
    fn converted(&mut self, draft: crate::import::Draft) -> Result<Converted, Stop> {
        let ids: Vec<Option<String>> = draft.events.iter().map(raw_id).collect();
        let (parsed, report, replay) = import::finish(&self.name, draft)?;
        let kept: std::collections::HashSet<&str> =
            parsed.dataset.events.iter().map(|e| e.id()).collect();
        let dropped: Vec<usize> = (0..ids.len())
            .filter(|&i| ids[i].as_deref().is_none_or(|id| !kept.contains(id)))
            .collect();
        self.noops = dropped.iter().copied().zip(report.noops.clone()).collect();
        let meta = report.meta_rows().map_err(|e| Stop::File(e.to_string()))?;
        Ok(Converted {
            parsed,
            replay,
            meta,
            skipped: report.skipped.len(),
            dropped,
            calls: report.calls,
        })
    }
}

/// An event's id as the importer wrote it.
fn raw_id(event: &RawEvent) -> Option<String> {
    match event {
        RawEvent::Evidence(e) => Some(e.id.clone()),
        RawEvent::Believe(b) => b.id.clone(),
        RawEvent::Retract(r) => r.id.clone(),
        RawEvent::Verify(v) => v.id.clone(),
    }
}

/// A trace is followed a line at a time only when each line is a whole
/// request: a pretty-printed request being written is refused at once.
fn one_request_a_line(file: &Path) -> Result<(), Stop> {
    use std::io::{BufRead, Read};
    let unreadable = |e: std::io::Error| Stop::File(format!("{}: {e}", file.display()));
    let mut first = Vec::new();
    std::fs::File::open(file)
        .map(|f| std::io::BufReader::new(f.take(otlp::MAX_BYTES)))
        .and_then(|mut f| f.read_until(b'\n', &mut first))
        .map_err(unreadable)?;
    if serde_json::from_slice::<serde::de::IgnoredAny>(&first).is_err() {
        return Err(Stop::File(format!(
            "{}:1: is not a whole OTLP/JSON request; --follow reads a trace written one request a line (the Collector's file exporter), not one request over many lines",
            file.display()
        )));
    }
    Ok(())
}
