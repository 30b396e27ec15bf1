//! Times as typed on the command line (`--at`, `--about`, `--after`,
//! `--until`), read once the store is open (design.md §8 "every time says how it
//! was read"): a clock time without a date (`12:10`) is read on the day of the
//! store's last event — not today, months after the incident — a date alone
//! at the end of that day (as `asof ask` reads it: everything recorded that
//! day), `end` as the log's last event and `now` as the wall clock, saying how
//! far past the last event it is. Each says the instant it used, as does an
//! instant after the last event.

use super::CliError;
use crate::store::Store;
use crate::time::{self, Micros};

/// A day, in microseconds.
const DAY: Micros = 86_400_000_000;

/// A time as the user wrote it, and what kind of time it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeArg {
    text: String,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `now`: the wall clock.
    Now(Micros),
    /// Written out whole (RFC 3339, or a date and a clock time).
    Instant(Micros),
    /// A date alone: its end (its last microsecond).
    Date(Micros),
    /// `end`: the log's last event.
    End,
    /// A clock time alone: on a day the store supplies.
    Clock(chrono::NaiveTime),
}

/// clap's value parser for a time argument.
pub fn parse(text: &str) -> Result<TimeArg, String> {
    static NOW: std::sync::OnceLock<Micros> = std::sync::OnceLock::new();
    let now = *NOW.get_or_init(time::now);
    let trimmed = text.trim();
    let kind = if trimmed.eq_ignore_ascii_case("now") {
        Kind::Now(now)
    } else if trimmed.eq_ignore_ascii_case("end") {
        Kind::End
    } else if let Some(clock) = ["%H:%M:%S", "%H:%M"]
        .iter()
        .find_map(|f| chrono::NaiveTime::parse_from_str(trimmed, f).ok())
    {
        Kind::Clock(clock)
    } else if chrono::NaiveDate::parse_from_str(trimmed, "%Y-%m-%d").is_ok() {
        Kind::Date(time::parse_user(trimmed, now, now)? + DAY - 1)
    } else {
        Kind::Instant(time::parse_user(trimmed, now, now)?)
    };
    Ok(TimeArg {
        text: trimmed.to_owned(),
        kind,
    })
}

impl TimeArg {
    /// An instant already resolved (`ask` reads its own times).
    pub fn instant(at: Micros) -> TimeArg {
        TimeArg {
            text: time::format(at),
            kind: Kind::Instant(at),
        }
    }

    /// The instant, given the log's last event, and the sentence that says how
    /// it was read when the user did not write it out whole — or when it lies
    /// after the last event.
    pub fn read(&self, last_event: Option<Micros>) -> (Micros, Option<String>) {
        let (at, how) = match self.kind {
            Kind::Now(t) => (t, Some("the wall clock".to_owned())),
            Kind::End => match last_event {
                Some(last) => (last, Some("the log's last event".to_owned())),
                None => (
                    time::now(),
                    Some("the wall clock: the log is empty".to_owned()),
                ),
            },
            Kind::Instant(t) => (t, None),
            Kind::Date(t) => (t, Some("the end of that day".to_owned())),
            Kind::Clock(clock) => {
                let day = last_event
                    .and_then(chrono::DateTime::from_timestamp_micros)
                    .map(|d| d.date_naive());
                match day {
                    Some(day) => (
                        day.and_time(clock).and_utc().timestamp_micros(),
                        Some(format!("on the day of the last event, {day}")),
                    ),
                    None => {
                        let today = chrono::Utc::now().date_naive();
                        (
                            today.and_time(clock).and_utc().timestamp_micros(),
                            Some(format!("today, {today}: the log is empty")),
                        )
                    }
                }
            }
        };
        let after = last_event.filter(|&last| at > last).map(|last| {
            format!(
                "{} after the last event ({})",
                time::format_duration(at - last),
                time::format_short(last)
            )
        });
        let note = match (how, after) {
            (None, None) => None,
            (Some(how), None) => Some(format!("{} → {} ({how})", self.text, time::format(at))),
            (None, Some(after)) => Some(format!("{} is {after}", self.text)),
            (Some(how), Some(after)) => Some(format!(
                "{} → {} ({how}), {after}",
                self.text,
                time::format(at)
            )),
        };
        (at, note)
    }

    /// [`TimeArg::read`] against `store`, the sentence written to standard
    /// error (standard output stays the answer, JSON included).
    pub fn resolve(&self, store: &Store) -> Result<Micros, CliError> {
        Ok(self.resolve_said(store)?.0)
    }

    /// [`TimeArg::resolve`], and the sentence it wrote (for a JSON answer's
    /// `read_as`).
    pub fn resolve_said(&self, store: &Store) -> Result<(Micros, Option<String>), CliError> {
        let last = crate::query::recorded_span(store)?.map(|(_, last)| last);
        let (at, note) = self.read(last);
        if let Some(note) = &note {
            eprintln!("asof: {note}");
        }
        Ok((at, note))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Micros {
        time::parse(text).unwrap_or_default()
    }

    #[test]
    fn a_clock_time_is_read_on_the_last_events_day_and_says_so() {
        let last = Some(at("2026-03-16T10:10:00Z"));
        let (t, note) = parse("12:10").unwrap().read(last);
        assert_eq!(t, at("2026-03-16T12:10:00Z"));
        assert_eq!(
            note.as_deref(),
            Some(
                "12:10 → 2026-03-16T12:10:00Z (on the day of the last event, 2026-03-16), 2h 0m after the last event (03-16 10:10)"
            )
        );
        let (t, note) = parse("09:00").unwrap().read(last);
        assert_eq!(t, at("2026-03-16T09:00:00Z"));
        assert_eq!(
            note.as_deref(),
            Some("09:00 → 2026-03-16T09:00:00Z (on the day of the last event, 2026-03-16)")
        );
    }

    #[test]
    fn a_date_an_instant_and_now_say_what_they_need_to() {
        let last = Some(at("2026-03-16T10:10:00Z"));
        let (t, note) = parse("2026-03-03").unwrap().read(last);
        assert_eq!(t, at("2026-03-03T23:59:59.999999Z"));
        assert_eq!(
            note.as_deref(),
            Some("2026-03-03 → 2026-03-03T23:59:59.999999Z (the end of that day)")
        );
        let (t, note) = parse("end").unwrap().read(last);
        assert_eq!(t, at("2026-03-16T10:10:00Z"));
        assert_eq!(
            note.as_deref(),
            Some("end → 2026-03-16T10:10:00Z (the log's last event)")
        );
        let (_, note) = parse("2026-03-04T00:00:00Z").unwrap().read(last);
        assert_eq!(
            note, None,
            "written out whole, before the end: nothing to say"
        );
        let (_, note) = parse("2026-04-01T00:00:00Z").unwrap().read(last);
        assert_eq!(
            note.as_deref(),
            Some("2026-04-01T00:00:00Z is 15d 13h after the last event (03-16 10:10)")
        );
        let (_, note) = parse("now").unwrap().read(last);
        let note = note.unwrap_or_default();
        assert!(note.contains("(the wall clock), "), "{note}");
        assert!(
            note.contains(" after the last event (03-16 10:10)"),
            "{note}"
        );
        assert!(parse("12:61").is_err());
        assert!(
            parse("2026-03-03T12:00").is_err(),
            "no offset: refused as before"
        );
    }
}
