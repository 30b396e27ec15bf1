//! The YAML reader.
//!
//! serde_yaml does the typed parse (and refuses alias bombs and deep nesting);
//! its `Value` keeps no positions, so one pass of saphyr-parser's span-carrying
//! event stream records where every node of the first few levels starts. The
//! events list is parsed item by item so that each broken event is reported.

use super::raw::{RawEvent, RawYamlDocument};
use super::validate::{Positions, RawEventError, validate};
use super::{DatasetError, DatasetErrors, Location, Parsed, strip_location};
use saphyr_parser::{Event as YamlEvent, Parser};
use std::collections::HashMap;

/// Deeper nesting is refused.
const MAX_NESTING: usize = 64;

/// How deep positions are recorded: `events[3].believe.confidence` is depth 4.
const POSITION_DEPTH: usize = 4;

pub fn read(file: &str, text: &str) -> Result<Parsed, DatasetErrors> {
    // Positions first: the scan also stops deep nesting before serde_yaml's
    // scanner, which is quadratic in flow-nesting depth, gets to it.
    let positions = YamlPositions::scan(text);
    if let Some(location) = positions.too_deep.or_else(|| too_deep_flow(text)) {
        return Err(DatasetErrors(vec![DatasetError {
            file: file.to_owned(),
            location: Some(location),
            event: None,
            message: format!("nested more than {MAX_NESTING} levels deep; a dataset nests a few"),
        }]));
    }
    let document: RawYamlDocument = match serde_yaml::from_str(text) {
        Ok(doc) => doc,
        Err(e) => {
            let message = e.to_string();
            // The reader's own errors (control characters, bad encodings) give a
            // character position in the message rather than a location.
            let (location, message) = match position_in(&message) {
                Some((at, rest)) => (Some(line_and_column(text, at)), rest),
                None => (
                    e.location()
                        .map(|l| within(text, Location::at(l.line(), l.column()))),
                    plain_words(&message),
                ),
            };
            return Err(DatasetErrors(vec![DatasetError {
                file: file.to_owned(),
                location,
                event: None,
                message,
            }]));
        }
    };
    let (header, values) = document.split();
    let events = values
        .into_iter()
        .enumerate()
        .map(|(index, value)| {
            serde_path_to_error::deserialize::<_, RawEvent>(value).map_err(|e| {
                let path = e.path().to_string();
                let field_path = format!("events[{index}].{path}");
                let location = positions
                    .exact(&field_path)
                    .or_else(|| positions.event(index));
                let message = strip_location(&e.into_inner().to_string());
                let message = if path == "." || path.is_empty() {
                    format!("event {}: {message}", index + 1)
                } else {
                    format!("event {} `{path}`: {message}", index + 1)
                };
                RawEventError { location, message }
            })
        })
        .collect();
    validate(file, header, events, &positions)
}

/// Start positions of nodes, by path (`events[2].believe.claim`).
struct YamlPositions {
    at: HashMap<String, Location>,
    /// Where nesting first went deeper than [`MAX_NESTING`].
    too_deep: Option<Location>,
}

enum Frame {
    Map { path: String, key: Option<String> },
    Seq { path: String, next: usize },
}

impl YamlPositions {
    fn scan(text: &str) -> Self {
        let mut at = HashMap::new();
        let mut stack: Vec<Frame> = Vec::new();
        let mut too_deep = None;
        for item in Parser::new_from_str(text) {
            let Ok((event, span)) = item else { break };
            let here = Location::at(span.start.line(), span.start.col() + 1);
            let starts_node = matches!(
                event,
                YamlEvent::Scalar(..)
                    | YamlEvent::MappingStart(..)
                    | YamlEvent::SequenceStart(..)
                    | YamlEvent::Alias(_)
            );
            let mut node_path = None;
            if starts_node {
                match stack.last_mut() {
                    Some(Frame::Map { path, key }) => match key.take() {
                        None => {
                            // This node is a key.
                            if let YamlEvent::Scalar(name, ..) = &event {
                                let child = join(path, name);
                                if depth(&child) <= POSITION_DEPTH {
                                    at.insert(child, here);
                                }
                                *key = Some(name.to_string());
                            } else {
                                *key = Some(String::new());
                            }
                            continue;
                        }
                        Some(name) => node_path = Some(join(path, &name)),
                    },
                    Some(Frame::Seq { path, next }) => {
                        let child = format!("{path}[{next}]");
                        *next += 1;
                        if depth(&child) <= POSITION_DEPTH {
                            at.insert(child.clone(), here);
                        }
                        node_path = Some(child);
                    }
                    None => node_path = Some(String::new()),
                }
            }
            match event {
                // Datasets nest a few levels: deeper input is refused, before its
                // paths make this scan (and serde_yaml's scanner) quadratic.
                YamlEvent::MappingStart(..) | YamlEvent::SequenceStart(..)
                    if stack.len() >= MAX_NESTING =>
                {
                    too_deep = Some(here);
                    break;
                }
                YamlEvent::MappingStart(..) => stack.push(Frame::Map {
                    path: node_path.unwrap_or_default(),
                    key: None,
                }),
                YamlEvent::SequenceStart(..) => stack.push(Frame::Seq {
                    path: node_path.unwrap_or_default(),
                    next: 0,
                }),
                YamlEvent::MappingEnd | YamlEvent::SequenceEnd => {
                    stack.pop();
                }
                _ => {}
            }
        }
        YamlPositions { at, too_deep }
    }

    fn exact(&self, path: &str) -> Option<Location> {
        self.at.get(path).copied()
    }
}

/// `"… at position N"` → (N, "…").
fn position_in(message: &str) -> Option<(usize, String)> {
    let i = message.rfind(" at position ")?;
    let n = message[i + " at position ".len()..].trim().parse().ok()?;
    Some((n, message[..i].to_owned()))
}

/// A location the parser gives, kept inside the file: a truncated file's
/// "end of stream" can point a line past its last character.
fn within(text: &str, at: Location) -> Location {
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len().max(1);
    if at.line <= last {
        let width = lines[at.line - 1].chars().count() + 1;
        return Location::at(at.line, at.column.unwrap_or(1).min(width));
    }
    Location::at(last, lines[last - 1].chars().count() + 1)
}

/// `" at line 3 column 7"` read out of a parser message.
fn line_column_in(part: &str) -> (String, Option<(usize, usize)>) {
    let Some(i) = part.find(" at line ") else {
        return (part.trim().to_owned(), None);
    };
    let rest = &part[i + " at line ".len()..];
    let mut words = rest.split_whitespace();
    let line = words.next().and_then(|w| w.parse().ok());
    let column = match (words.next(), words.next()) {
        (Some("column"), Some(c)) => c.trim_end_matches(',').parse().ok(),
        _ => None,
    };
    (part[..i].trim().to_owned(), line.zip(column))
}

/// The YAML parser's message said in plain words, with where a quote or a
/// bracket was opened when the parser says; the parser's own words follow in
/// parentheses (without its positions: the error's location is in front).
fn plain_words(raw: &str) -> String {
    let (problem, context) = match raw.split_once(", while ") {
        Some((p, c)) => (p, Some(c)),
        None => (raw, None),
    };
    let (problem, _) = line_column_in(problem);
    let (context, opened) = match context {
        Some(c) => {
            let (c, at) = line_column_in(c);
            (Some(c), at)
        }
        None => (None, None),
    };
    let from = |what: &str| match opened {
        Some((l, c)) => format!("{what} opened at line {l}, column {c}"),
        None => what.to_owned(),
    };
    let context_has = |w: &str| context.as_deref().is_some_and(|c| c.contains(w));
    let plain = if problem.contains("unexpected end of stream") {
        if context_has("quoted scalar") {
            format!(
                "the file ends inside a quoted string ({}): its closing quote is missing, or the file is cut short",
                from("the quote")
            )
        } else if context_has("flow mapping") || context_has("flow sequence") {
            format!(
                "the file ends inside a `{{…}}` or `[…]` ({}): it is never closed, or the file is cut short",
                from("the bracket")
            )
        } else {
            "the file ends in the middle of a value: is it cut short?".to_owned()
        }
    } else if problem.contains("did not find expected ',' or '}'") {
        format!(
            "a `{{…}}` mapping ({}) is not closed: a `,` or `}}` is missing",
            from("it")
        )
    } else if problem.contains("did not find expected ',' or ']'") {
        format!(
            "a `[…]` list ({}) is not closed: a `,` or `]` is missing",
            from("it")
        )
    } else if problem.contains("mapping values are not allowed") {
        "a `key: value` where none can be: this line is indented wrongly, or a value containing `: ` needs quotes".to_owned()
    } else if problem.contains("tab character") {
        "a tab indents this line; YAML indents with spaces".to_owned()
    } else if problem.contains("did not find expected key") {
        "this line is not indented like the keys around it".to_owned()
    } else if problem.contains("cannot start any token") {
        "a character that cannot begin a YAML value (`@`, a backtick, a tab…): put the value in quotes".to_owned()
    } else if problem.contains("did not find expected node content") {
        "a value is missing here".to_owned()
    } else if problem.contains("could not find expected ':'") {
        "a key without its `:` (or a multi-line value that needs quotes)".to_owned()
    } else {
        return match context {
            Some(c) => format!("{problem}, while {c}"),
            None => problem,
        };
    };
    let parser = match &context {
        Some(c) => format!("{problem}, while {c}"),
        None => problem.clone(),
    };
    format!("{plain} (the YAML parser: {parser})")
}

/// The 1-based line and column of character `at` of `text`.
fn line_and_column(text: &str, at: usize) -> Location {
    let (mut line, mut column) = (1, 1);
    for c in text.chars().take(at) {
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    Location::at(line, column)
}

/// Where `[`/`{` flow collections first nest deeper than [`MAX_NESTING`], by a
/// linear scan of the text (quotes and comments skipped). saphyr-parser gives up
/// on such input with an error, and serde_yaml's scanner takes quadratic time.
fn too_deep_flow(text: &str) -> Option<Location> {
    let (mut line, mut col) = (1usize, 0usize);
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut comment = false;
    let mut previous = '\n';
    for c in text.chars() {
        col += 1;
        if c == '\n' {
            line += 1;
            col = 0;
            comment = false;
        } else if comment {
        } else if let Some(q) = quote {
            if c == q {
                quote = None;
            }
        } else {
            match c {
                '\'' | '"' => quote = Some(c),
                '#' if previous.is_whitespace() => comment = true,
                '[' | '{' => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Some(Location::at(line, col));
                    }
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        previous = c;
    }
    None
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn depth(path: &str) -> usize {
    path.split(['.', '[']).count()
}

impl Positions for YamlPositions {
    fn event(&self, index: usize) -> Option<Location> {
        self.exact(&format!("events[{index}]"))
    }

    fn field(&self, index: usize, kind: &str, field: &str) -> Option<Location> {
        self.exact(&format!("events[{index}].{kind}.{field}"))
            .or_else(|| self.exact(&format!("events[{index}].{kind}")))
    }

    fn header(&self, path: &str) -> Option<Location> {
        self.exact(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_positions_of_events_and_fields() {
        let text = "asof: 1\nincident: {id: x}\nevents:\n  - evidence:\n      id: E1\n      kind: log\n  - believe:\n      claim: c\n";
        let p = YamlPositions::scan(text);
        assert_eq!(p.event(0), Some(Location::at(4, 5)));
        assert_eq!(p.field(0, "evidence", "kind"), Some(Location::at(6, 7)));
        assert_eq!(p.field(1, "believe", "claim"), Some(Location::at(8, 7)));
        assert_eq!(p.header("incident"), Some(Location::at(2, 1)));
    }
}
