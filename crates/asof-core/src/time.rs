//! Instants and half-open intervals on either time axis.
//!
//! Every instant is an `i64` count of microseconds since the Unix epoch, UTC.
//! An open end ("until further notice") is represented by [`OPEN`], which sorts
//! after every real instant, so interval arithmetic needs no special cases.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};

/// Microseconds since the Unix epoch, UTC.
pub type Micros = i64;

/// The open end of an interval: +∞.
pub const OPEN: Micros = i64::MAX;

/// Earliest instant accepted in a dataset (year 0001).
const MIN_ACCEPTED: Micros = -62_135_596_800_000_000;
/// Latest instant accepted in a dataset (end of year 9999).
const MAX_ACCEPTED: Micros = 253_402_300_799_999_999;

/// Whether a dataset accepts `micros` (years 0001–9999).
pub fn accepted(micros: Micros) -> bool {
    (MIN_ACCEPTED..=MAX_ACCEPTED).contains(&micros)
}

/// Why a timestamp string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// No UTC offset: local time would be a guess.
    #[error(
        "`{0}` has no UTC offset; write it with `Z` or `+hh:mm` (a bare date `YYYY-MM-DD` means 00:00 UTC)"
    )]
    NoOffset(String),
    /// Not a timestamp asof reads.
    #[error("`{0}` is not an RFC 3339 timestamp or a YYYY-MM-DD date")]
    Malformed(String),
    /// Before year 1 or after 9999.
    #[error("`{0}` is outside the years 0001-9999")]
    OutOfRange(String),
}

/// Parses an RFC 3339 timestamp with an offset, or a bare `YYYY-MM-DD` date (00:00 UTC).
pub fn parse(text: &str) -> Result<Micros, TimeError> {
    let text = text.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(text) {
        let micros = dt.timestamp_micros();
        return if accepted(micros) {
            Ok(micros)
        } else {
            Err(TimeError::OutOfRange(text.to_owned()))
        };
    }
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d")
        && text.len() == 10
    {
        let dt = date.and_hms_opt(0, 0, 0).map(|naive| naive.and_utc());
        return dt
            .map(|dt| dt.timestamp_micros())
            .ok_or_else(|| TimeError::Malformed(text.to_owned()));
    }
    if looks_like_local_datetime(text) {
        return Err(TimeError::NoOffset(text.to_owned()));
    }
    Err(TimeError::Malformed(text.to_owned()))
}

/// A date-time that would parse if it had an offset: the ambiguous case.
fn looks_like_local_datetime(text: &str) -> bool {
    [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ]
    .iter()
    .any(|fmt| chrono::NaiveDateTime::parse_from_str(text, fmt).is_ok())
}

/// Formats an instant as RFC 3339 UTC with `Z`; fractional seconds only when present.
/// [`OPEN`] prints as `∞`; callers that need `null` check for it first.
pub fn format(micros: Micros) -> String {
    if micros == OPEN {
        return "∞".to_owned();
    }
    match DateTime::<Utc>::from_timestamp_micros(micros) {
        Some(dt) => dt.to_rfc3339_opts(SecondsFormat::AutoSi, true),
        None => format!("@{micros}µs"),
    }
}

/// `Some(text)` for a real instant, `None` for [`OPEN`] (JSON `null`).
pub fn format_opt(micros: Micros) -> Option<String> {
    (micros != OPEN).then(|| format(micros))
}

/// The current instant.
pub fn now() -> Micros {
    Utc::now().timestamp_micros()
}

/// A half-open interval `[from, to)`; `to == OPEN` means open-ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Interval {
    /// Where it starts (inclusive).
    pub from: Micros,
    /// Where it ends (exclusive); `OPEN` when open-ended.
    pub to: Micros,
}

impl Interval {
    /// All of time.
    pub const ALL: Interval = Interval {
        from: i64::MIN,
        to: OPEN,
    };

    /// `[from, to)`.
    pub fn new(from: Micros, to: Micros) -> Self {
        Interval { from, to }
    }

    /// Whether it holds no instant.
    pub fn is_empty(&self) -> bool {
        self.from >= self.to
    }

    /// Whether `t` is in it.
    pub fn contains(&self, t: Micros) -> bool {
        self.from <= t && t < self.to
    }

    /// Half-open overlap: intervals that only touch do not overlap.
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.from < other.to && other.from < self.to
    }

    /// Where the two overlap, if they do.
    pub fn intersect(&self, other: &Interval) -> Option<Interval> {
        let cut = Interval::new(self.from.max(other.from), self.to.min(other.to));
        (!cut.is_empty()).then_some(cut)
    }

    /// The parts of `self` outside `cut`: zero, one or two pieces, in order.
    pub fn minus(&self, cut: &Interval) -> Vec<Interval> {
        if !self.overlaps(cut) {
            return vec![*self];
        }
        let mut pieces = Vec::with_capacity(2);
        if self.from < cut.from {
            pieces.push(Interval::new(self.from, cut.from));
        }
        if cut.to < self.to {
            pieces.push(Interval::new(cut.to, self.to));
        }
        pieces
    }
}

/// Why a duration string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a duration: write a positive number with s, m, h or d (`30s`, `6h`, `2d`), or ISO 8601 (`PT6H`, `P1DT12H`)"
)]
pub struct DurationError(pub String);

/// Parses a positive duration: `30s`, `15m`, `6h`, `2d` (several may follow one
/// another: `1d12h`), or ISO 8601 `PnDTnHnMnS` (fractions only on the last
/// unit, no years or months: their length varies). Returns microseconds.
pub fn parse_duration(text: &str) -> Result<Micros, DurationError> {
    let fail = || DurationError(text.to_owned());
    let t = text.trim();
    let (body, iso) = match t.strip_prefix(['P', 'p']) {
        Some(rest) => (rest, true),
        None => (t, false),
    };
    let mut total: f64 = 0.0;
    let mut number = String::new();
    let mut in_time = !iso;
    let mut units = 0;
    for c in body.chars() {
        match c {
            '0'..='9' | '.' => number.push(c),
            'T' | 't' if iso && !in_time && number.is_empty() => in_time = true,
            _ => {
                let unit = match c.to_ascii_lowercase() {
                    'd' if !iso || !in_time => 86_400.0,
                    'w' if iso && !in_time => 7.0 * 86_400.0,
                    'h' if in_time => 3_600.0,
                    'm' if in_time => 60.0,
                    's' if in_time => 1.0,
                    _ => return Err(fail()),
                };
                let n: f64 = number.parse().map_err(|_| fail())?;
                total += n * unit;
                number.clear();
                units += 1;
            }
        }
    }
    if !number.is_empty() || units == 0 {
        return Err(fail());
    }
    let micros = (total * 1e6).round();
    if !micros.is_finite() || micros <= 0.0 || micros > (MAX_ACCEPTED - MIN_ACCEPTED) as f64 {
        return Err(fail());
    }
    Ok(micros as Micros)
}

/// Durations people read, from a millisecond to a week: the steps of the
/// TUI's axes, arrows and zoom, and the rounding of a click.
pub const READABLE_STEPS: [i64; 25] = [
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    15_000_000,
    30_000_000,
    60_000_000,
    300_000_000,
    900_000_000,
    1_800_000_000,
    3_600_000_000,
    10_800_000_000,
    21_600_000_000,
    43_200_000_000,
    86_400_000_000,
    172_800_000_000,
    604_800_000_000,
];

/// The smallest readable step (see [`READABLE_STEPS`]) of at least
/// `micros`; a week beyond.
pub fn readable_step(micros: i64) -> i64 {
    READABLE_STEPS
        .iter()
        .copied()
        .find(|&s| s >= micros)
        .unwrap_or(READABLE_STEPS[READABLE_STEPS.len() - 1])
}

/// Formats a duration in microseconds for people: `3d 4h`, `12m`, `45s`.
pub fn format_duration(micros: i64) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let secs = micros.unsigned_abs() / 1_000_000;
    let (d, h, m, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    // Under a minute, the fraction shows (an agent run may last seconds):
    // `1.250s`, `0.004s`, `35µs`.
    let fraction = micros.unsigned_abs() % 1_000_000;
    let text = if d > 0 {
        format!("{d}d {h}h")
    } else if h > 0 {
        format!("{h}h {m}m")
    } else if m > 0 {
        format!("{m}m {s}s")
    } else if fraction == 0 {
        format!("{s}s")
    } else if s == 0 && fraction < 1_000 {
        format!("{fraction}µs")
    } else if fraction.is_multiple_of(1_000) {
        format!("{s}.{:03}s", fraction / 1_000)
    } else {
        format!("{s}.{fraction:06}s")
    };
    format!("{sign}{text}")
}

/// Compact UTC form for the terminal UI: `03-02 09:05`, with seconds (and
/// milliseconds or microseconds) when present.
/// What was observed, as an interval when it lasted (`03-02 09:05–09:08`,
/// `03-02 09:05→03-03 10:00`), else its instant; `short` in the compact form.
/// An evidence item's lag runs from the end, so a table showing its start
/// alone would read wrong.
pub fn format_observed(from: Micros, until: Option<Micros>, short: bool) -> String {
    let one = |t| if short { format_short(t) } else { format(t) };
    match until.filter(|&u| u > from) {
        None => one(from),
        Some(until)
            if short && from.div_euclid(86_400_000_000) == until.div_euclid(86_400_000_000) =>
        {
            let end = format_short(until);
            let clock = end.split_once(' ').map_or(end.as_str(), |(_, c)| c);
            format!("{}–{clock}", format_short(from))
        }
        Some(until) if short => format!("{}→{}", one(from), one(until)),
        Some(until) => format!("{} → {}", one(from), one(until)),
    }
}

/// An instant in the short form the TUI shows, `03-03 12:10`, to the
/// precision it has (seconds, milliseconds, microseconds); `∞` for `OPEN`.
pub fn format_short(micros: Micros) -> String {
    if micros == OPEN {
        return "∞".to_owned();
    }
    if micros == i64::MIN {
        return "-∞".to_owned();
    }
    match DateTime::<Utc>::from_timestamp_micros(micros) {
        Some(dt) if micros % 60_000_000 == 0 => dt.format("%m-%d %H:%M").to_string(),
        Some(dt) if micros % 1_000_000 == 0 => dt.format("%m-%d %H:%M:%S").to_string(),
        Some(dt) if micros % 1_000 == 0 => dt.format("%m-%d %H:%M:%S%.3f").to_string(),
        Some(dt) => dt.format("%m-%d %H:%M:%S%.6f").to_string(),
        None => format!("@{micros}µs"),
    }
}

/// `[from, to)` in the compact form; the end drops its date when it is the same day.
pub fn format_interval_short(v: Interval) -> String {
    let same_day = v.to != OPEN
        && v.from != i64::MIN
        && v.from.div_euclid(86_400_000_000) == v.to.div_euclid(86_400_000_000);
    let to = if same_day {
        let full = format_short(v.to);
        full.split_once(' ')
            .map_or(full.clone(), |(_, clock)| clock.to_owned())
    } else {
        format_short(v.to)
    };
    format!("[{}, {to})", format_short(v.from))
}

/// Formats with a chrono pattern (UTC); used for axis labels.
pub fn format_with(micros: Micros, pattern: &str) -> String {
    DateTime::<Utc>::from_timestamp_micros(micros)
        .map(|dt| dt.format(pattern).to_string())
        .unwrap_or_default()
}

/// Whether `text` is a clock time without a date (`12:10`, `12:10:30`): such
/// a time is read on some day, and whoever reads it must say which.
pub fn is_clock_only(text: &str) -> bool {
    let text = text.trim();
    ["%H:%M:%S", "%H:%M"]
        .iter()
        .any(|fmt| chrono::NaiveTime::parse_from_str(text, fmt).is_ok())
}

/// A time as people type it, in the CLI's `--at`/`--about` and the TUI's jump
/// prompt alike: `now`; RFC 3339 with an offset; `YYYY-MM-DD`; `YYYY-MM-DD HH:MM[:SS]`
/// (UTC); or `HH:MM[:SS]` (UTC, on the day of `today`). A date-time written with
/// `T` but no offset is refused as in datasets (ambiguous).
pub fn parse_user(text: &str, now: Micros, today: Micros) -> Result<Micros, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("now") {
        return Ok(now);
    }
    // A date and a clock time with a space between are UTC, seconds or not
    // (with a `T` and no offset, a time is refused as a dataset refuses it).
    for fmt in ["%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"] {
        if let Ok(naive) = chrono::NaiveDateTime::parse_from_str(text, fmt) {
            return Ok(naive.and_utc().timestamp_micros());
        }
    }
    match parse(text) {
        Ok(t) => return Ok(t),
        Err(e @ (TimeError::NoOffset(_) | TimeError::OutOfRange(_))) => return Err(e.to_string()),
        Err(TimeError::Malformed(_)) => {}
    }
    for fmt in ["%H:%M:%S", "%H:%M"] {
        if let Ok(clock) = chrono::NaiveTime::parse_from_str(text, fmt) {
            let day = DateTime::<Utc>::from_timestamp_micros(today).map(|d| d.date_naive());
            if let Some(day) = day {
                return Ok(day.and_time(clock).and_utc().timestamp_micros());
            }
        }
    }
    Err(format!(
        "`{text}` is not a time: write 2026-03-03T12:00:00Z, 2026-03-03 12:00 (UTC), 2026-03-03, 12:00 (UTC, that day) or now"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_durations_and_instants_keep_their_fractions() {
        assert_eq!(format_duration(1_250_000), "1.250s");
        assert_eq!(format_duration(4_000), "0.004s");
        assert_eq!(format_duration(35), "35µs");
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(61_000_000), "1m 1s");
        let t = parse("2026-03-02T09:05:01.250Z").unwrap();
        assert_eq!(format_short(t), "03-02 09:05:01.250");
    }

    #[test]
    fn parses_offsets_and_dates() {
        assert_eq!(parse("1970-01-01T00:00:01Z"), Ok(1_000_000));
        assert_eq!(parse("1970-01-01T09:00:00+09:00"), Ok(0));
        assert_eq!(parse("1970-01-02"), Ok(86_400_000_000));
        assert_eq!(parse("1970-01-01T00:00:00.000123Z"), Ok(123));
    }

    #[test]
    fn refuses_local_and_garbage() {
        assert!(matches!(
            parse("2026-03-02T09:10:00"),
            Err(TimeError::NoOffset(_))
        ));
        assert!(matches!(
            parse("2026-03-02 09:10:00"),
            Err(TimeError::NoOffset(_))
        ));
        assert!(matches!(parse("yesterday"), Err(TimeError::Malformed(_))));
        assert!(matches!(parse("2026-3-2"), Err(TimeError::Malformed(_))));
        assert!(matches!(parse("2026-02-30"), Err(TimeError::Malformed(_))));
    }

    #[test]
    fn formats_utc_with_z() {
        assert_eq!(format(0), "1970-01-01T00:00:00Z");
        assert_eq!(format(1_500_000), "1970-01-01T00:00:01.500Z");
        assert_eq!(format(OPEN), "∞");
        assert_eq!(format_opt(OPEN), None);
        let t = parse("2026-03-02T09:10:00+01:00").unwrap();
        assert_eq!(format(t), "2026-03-02T08:10:00Z");
    }

    #[test]
    fn half_open_intervals() {
        let a = Interval::new(0, 10);
        let b = Interval::new(10, 20);
        assert!(!a.overlaps(&b));
        assert!(a.contains(0) && !a.contains(10));
        assert_eq!(
            a.intersect(&Interval::new(5, OPEN)),
            Some(Interval::new(5, 10))
        );
        assert_eq!(
            Interval::new(0, OPEN).minus(&Interval::new(3, 5)),
            vec![Interval::new(0, 3), Interval::new(5, OPEN)]
        );
        assert_eq!(a.minus(&Interval::ALL), vec![]);
        assert_eq!(a.minus(&b), vec![a]);
    }

    #[test]
    fn durations_parse_in_both_forms() {
        let h = 3_600_000_000;
        assert_eq!(parse_duration("30s"), Ok(30_000_000));
        assert_eq!(parse_duration("15m"), Ok(15 * 60_000_000));
        assert_eq!(parse_duration("6h"), Ok(6 * h));
        assert_eq!(parse_duration("2d"), Ok(48 * h));
        assert_eq!(parse_duration("1d12h"), Ok(36 * h));
        assert_eq!(parse_duration("1.5h"), Ok(90 * 60_000_000));
        assert_eq!(parse_duration("PT6H"), Ok(6 * h));
        assert_eq!(parse_duration("P1DT12H30M"), Ok(36 * h + 30 * 60_000_000));
        assert_eq!(parse_duration("P2W"), Ok(14 * 24 * h));
        for bad in [
            "", "6", "h", "-6h", "0s", "6x", "PT", "P6H", "PT2D", "P1M", "6h30",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(format_duration(90_000_000), "1m 30s");
        assert_eq!(format_duration(-26 * 3_600_000_000), "-1d 2h");
    }

    #[test]
    fn short_forms_for_the_terminal() {
        let t = parse("2026-03-02T09:05:00Z").unwrap();
        assert_eq!(format_short(t), "03-02 09:05");
        assert_eq!(format_short(t + 30_000_000), "03-02 09:05:30");
        assert_eq!(
            format_interval_short(Interval::new(t, t + 3_600_000_000)),
            "[03-02 09:05, 10:05)"
        );
        assert_eq!(
            format_interval_short(Interval::new(t, t + 86_400_000_000)),
            "[03-02 09:05, 03-03 09:05)"
        );
        assert_eq!(
            format_interval_short(Interval::new(t, OPEN)),
            "[03-02 09:05, ∞)"
        );
        assert_eq!(parse_user("2026-03-02 09:05", 0, 0), Ok(t));
        assert_eq!(parse_user("09:05", 0, t - 3_600_000_000), Ok(t));
        assert_eq!(parse_user(" now ", 42, t), Ok(42));
        assert!(parse_user("soon", 0, t).unwrap_err().contains("or now"));
        assert!(
            parse_user("2026-03-02T09:05:00", 0, t)
                .unwrap_err()
                .contains("no UTC offset")
        );
    }
}
