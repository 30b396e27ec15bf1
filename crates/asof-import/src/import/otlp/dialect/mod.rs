//! The four ways agent traces describe a model call, a tool run and an agent,
//! read into one shape (design.md §7):
//!
//! ```text
//! dialect                 model call                           tool run                    agent
//! GenAI (current)         gen_ai.operation.name = chat,        execute_tool: gen_ai.tool.  invoke_agent:
//!                         gen_ai.input/output.messages parts   name, .call.id/arguments/   gen_ai.agent.name
//!                                                              result                      (else .id)
//! GenAI event form        span events gen_ai.{system,user,     (as above)                  (as above)
//!                         assistant,tool}.message, gen_ai.choice
//! OpenInference           openinference.span.kind = LLM,       kind TOOL: tool.name,       kind AGENT:
//!                         llm.{input,output}_messages.N.*      input.value, output.value   agent.name
//! OpenLLMetry (indexed)   gen_ai.prompt.N.*, gen_ai.           traceloop.span.kind = tool: traceloop.span.kind
//!                         completion.N.*                       traceloop.entity.*          = agent
//! ```

use asof_otlp::{AnyValue, KeyValue, SpanEvent};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A span's attributes, as written: a few dozen at most, so a list searched
/// in order beats hashing every key of every span.
#[derive(Debug, Default)]
pub struct Attrs(Vec<(String, AnyValue)>);

impl Attrs {
    /// The value of attribute `key`, if the span has it.
    pub fn get(&self, key: &str) -> Option<&AnyValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether the span has attribute `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The attributes' keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }

    fn iter(&self) -> impl Iterator<Item = (&String, &AnyValue)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl FromIterator<(String, AnyValue)> for Attrs {
    fn from_iter<I: IntoIterator<Item = (String, AnyValue)>>(iter: I) -> Self {
        Attrs(iter.into_iter().collect())
    }
}

/// A span's attribute list, as [`Attrs`].
pub fn attrs(list: Vec<KeyValue>) -> Attrs {
    list.into_iter().map(|kv| (kv.key, kv.value)).collect()
}

fn text(attrs: &Attrs, key: &str) -> Option<String> {
    attrs
        .get(key)
        .map(AnyValue::to_text)
        .filter(|s| !s.is_empty())
}

/// Which convention a model call was read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `gen_ai.input.messages` / `gen_ai.output.messages` (GenAI semantic conventions).
    GenAi,
    /// The GenAI event form: `gen_ai.*.message` and `gen_ai.choice` events.
    GenAiEvents,
    /// OpenInference: `llm.input_messages.N.*` / `llm.output_messages.N.*`.
    OpenInference,
    /// OpenLLMetry: `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`.
    OpenLlmetry,
}

impl Dialect {
    /// The convention in words, for the import summary.
    pub fn describe(self) -> &'static str {
        match self {
            Dialect::GenAi => "model calls in the GenAI conventions (gen_ai.input/output.messages)",
            Dialect::GenAiEvents => {
                "model calls in the GenAI event form (gen_ai.*.message, gen_ai.choice)"
            }
            Dialect::OpenInference => "model calls in OpenInference (llm.input/output_messages)",
            Dialect::OpenLlmetry => "model calls in OpenLLMetry (gen_ai.prompt/completion.N)",
        }
    }
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Part {
    /// Text the model read or wrote.
    Text(String),
    /// The model's reasoning, where the trace keeps it.
    Reasoning(String),
    /// A tool call the model made.
    ToolCall {
        /// The call's id, when given.
        id: Option<String>,
        /// The tool's name.
        name: String,
        /// The arguments as JSON text.
        args: String,
    },
    /// A tool's result, as the model was given it.
    ToolResult {
        /// The id of the call it answers, when given.
        id: Option<String>,
        /// The result's text.
        content: String,
    },
    /// A `blob`, `file` or `uri` part: media the model was given, said as
    /// its MIME type and its URI, file id or size (`image/png, 2048 bytes`).
    Media(String),
}

/// One message of a model call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Msg {
    /// `system`, `user`, `assistant`, `tool`, …
    pub role: String,
    /// The tool's name on a tool result message, when given.
    pub name: Option<String>,
    /// Its parts, in order.
    pub parts: Vec<Part>,
}

/// A model call's messages. Each call repeats the whole history, so the
/// importer keeps one copy of each distinct message and shares it
/// (`otlp::Interner`): memory grows with what was said, not with the trace.
pub type Msgs = Vec<Arc<Msg>>;

fn shared(messages: Vec<Msg>) -> Msgs {
    messages.into_iter().map(Arc::new).collect()
}

/// What a span is, as far as asof is concerned.
#[derive(Debug, Clone)]
pub enum Role {
    /// A model call.
    Call {
        /// The convention it was read in.
        dialect: Dialect,
        /// The messages it was given.
        input: Msgs,
        /// The messages it wrote.
        output: Msgs,
    },
    /// A tool run.
    Tool {
        /// The tool's name.
        name: String,
        /// The id of the model's call it answers, when given.
        call_id: Option<String>,
        /// Its arguments, as JSON text.
        args: Option<String>,
        /// Its result, as text.
        result: Option<String>,
    },
    /// An agent's step (`invoke_agent` and the like).
    Agent {
        /// The agent's name, when given.
        name: Option<String>,
    },
    /// A memory operation (GenAI conventions, in development): the records
    /// a search returned or a write stored, or the record a delete removed.
    Memory {
        /// Search, write or delete.
        op: MemoryOp,
        /// The memory store's name, when given.
        store: Option<String>,
        /// What it returned or stored.
        records: Vec<Record>,
        /// `gen_ai.memory.record.id`: the record a write or delete targets.
        record_id: Option<String>,
    },
    /// A retrieval: the documents it returned (`gen_ai.retrieval.documents`).
    Retrieval {
        /// What it returned.
        documents: Vec<Record>,
    },
    /// Anything else (kept only as a parent of what matters).
    Other,
}

/// What a memory operation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryOp {
    /// Read records (`search_memory`).
    Search,
    /// Stored a record (`create_memory`, `update_memory`, `upsert_memory`).
    Write,
    /// Removed a record (`delete_memory`).
    Delete,
}

/// A memory record or a retrieved document: its id, its text, its score.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Its id, when given.
    pub id: Option<String>,
    /// Its text.
    pub content: String,
    /// How well it matched, when given.
    pub score: Option<f64>,
}

/// Records as the conventions write them: a JSON array (or a string of one)
/// of objects with `content` (else `text`, `page_content`), `id`, `score`.
fn records(attrs: &Attrs, key: &str) -> Result<Vec<Record>, String> {
    let Some(v) = attrs.get(key) else {
        return Ok(Vec::new());
    };
    let items = match json_of(v, key)? {
        Value::Array(items) => items,
        other => vec![other],
    };
    Ok(items
        .iter()
        .map(|item| {
            let field = |k: &str| item.get(k).filter(|v| !v.is_null());
            Record {
                id: field("id").map(plain).filter(|s| !s.is_empty()),
                content: ["content", "text", "page_content", "document"]
                    .iter()
                    .find_map(|k| field(k))
                    .map(plain)
                    .unwrap_or_else(|| match item {
                        Value::Object(_) => String::new(),
                        other => plain(other),
                    }),
                score: field("score").and_then(Value::as_f64),
            }
        })
        .collect())
}

/// Reads a span's role. `Err` names what could not be read (the span is then
/// skipped and reported).
pub fn role(name: &str, attrs: &Attrs, events: &[SpanEvent]) -> Result<Role, String> {
    role_reading(name, attrs, events, &mut Fresh)
}

/// How a call's `gen_ai.input.messages` text becomes messages. Each call
/// repeats the history before it, so the importer reads only what a call
/// adds to an earlier call's input (`otlp::read::Histories`); [`Fresh`] reads
/// it all.
pub trait History {
    /// The messages `text` holds (a JSON array of messages), or why it cannot be read.
    fn read(&mut self, text: &str) -> Result<Msgs, String>;
}

/// Reads every message of every input.
pub struct Fresh;

impl History for Fresh {
    fn read(&mut self, text: &str) -> Result<Msgs, String> {
        messages_text(text).map(shared)
    }
}

/// A JSON text of messages as messages.
pub fn messages_text(text: &str) -> Result<Vec<Msg>, String> {
    serde_json::from_str::<Value>(text)
        .map(|v| messages_of(&v))
        .map_err(|e| format!("gen_ai.input.messages is not valid JSON ({e})"))
}

/// [`role`], reading a call's input through `history`.
pub fn role_reading(
    name: &str,
    attrs: &Attrs,
    events: &[SpanEvent],
    history: &mut dyn History,
) -> Result<Role, String> {
    let operation = text(attrs, "gen_ai.operation.name");
    let oi_kind = text(attrs, "openinference.span.kind").map(|k| k.to_ascii_uppercase());
    let tl_kind = text(attrs, "traceloop.span.kind").map(|k| k.to_ascii_lowercase());
    match (operation.as_deref(), oi_kind.as_deref(), tl_kind.as_deref()) {
        (Some("invoke_agent" | "create_agent"), _, _) => {
            return Ok(Role::Agent {
                name: text(attrs, "gen_ai.agent.name").or_else(|| text(attrs, "gen_ai.agent.id")),
            });
        }
        (_, Some("AGENT"), _) => {
            return Ok(Role::Agent {
                name: text(attrs, "agent.name").or_else(|| Some(name.to_owned())),
            });
        }
        (_, _, Some("agent")) => {
            return Ok(Role::Agent {
                name: text(attrs, "traceloop.entity.name").or_else(|| Some(name.to_owned())),
            });
        }
        (
            Some(
                op @ ("search_memory" | "create_memory" | "update_memory" | "upsert_memory"
                | "delete_memory"),
            ),
            _,
            _,
        ) => {
            return Ok(Role::Memory {
                op: match op {
                    "search_memory" => MemoryOp::Search,
                    "delete_memory" => MemoryOp::Delete,
                    _ => MemoryOp::Write,
                },
                store: text(attrs, "gen_ai.memory.store.id"),
                records: records(attrs, "gen_ai.memory.records")?,
                record_id: text(attrs, "gen_ai.memory.record.id"),
            });
        }
        (Some("retrieval"), _, _) => {
            return Ok(Role::Retrieval {
                documents: records(attrs, "gen_ai.retrieval.documents")?,
            });
        }
        _ if attrs.contains_key("gen_ai.retrieval.documents") => {
            return Ok(Role::Retrieval {
                documents: records(attrs, "gen_ai.retrieval.documents")?,
            });
        }
        (Some("execute_tool"), _, _) => {
            return Ok(Role::Tool {
                name: text(attrs, "gen_ai.tool.name")
                    .or_else(|| name.strip_prefix("execute_tool ").map(str::to_owned))
                    .unwrap_or_else(|| name.to_owned()),
                call_id: text(attrs, "gen_ai.tool.call.id"),
                args: text(attrs, "gen_ai.tool.call.arguments"),
                result: text(attrs, "gen_ai.tool.call.result"),
            });
        }
        (_, Some("TOOL"), _) => {
            return Ok(Role::Tool {
                name: text(attrs, "tool.name").unwrap_or_else(|| name.to_owned()),
                call_id: ["tool_call.id", "tool.id", "tool_call_id", "tool.call_id"]
                    .iter()
                    .find_map(|k| text(attrs, k)),
                args: text(attrs, "tool_call.function.arguments")
                    .or_else(|| text(attrs, "input.value")),
                result: text(attrs, "output.value"),
            });
        }
        (_, _, Some("tool")) => {
            return Ok(Role::Tool {
                name: text(attrs, "traceloop.entity.name").unwrap_or_else(|| name.to_owned()),
                call_id: None,
                args: text(attrs, "traceloop.entity.input").map(|i| traceloop_input(&i)),
                result: text(attrs, "traceloop.entity.output").map(|o| traceloop_output(&o)),
            });
        }
        _ => {}
    }
    let chat = matches!(
        operation.as_deref(),
        Some("chat" | "text_completion" | "generate_content")
    );
    if attrs.contains_key("gen_ai.input.messages") || attrs.contains_key("gen_ai.output.messages") {
        let mut input = Vec::new();
        if let Some(system) = attrs.get("gen_ai.system_instructions") {
            let parts = json_of(system, "gen_ai.system_instructions")?;
            input.push(Msg {
                role: "system".into(),
                name: None,
                parts: parts_of(&parts),
            });
        }
        let mut input = shared(input);
        if let Some(v) = attrs.get("gen_ai.input.messages") {
            match &v.string {
                Some(text) => input.extend(history.read(text)?),
                None => input.extend(shared(messages_of(&v.to_json()))),
            }
        }
        let output = match attrs.get("gen_ai.output.messages") {
            Some(v) => messages_of(&json_of(v, "gen_ai.output.messages")?),
            None => Vec::new(),
        };
        return Ok(Role::Call {
            dialect: Dialect::GenAi,
            input,
            output: shared(output),
        });
    }
    if oi_kind.as_deref() == Some("LLM")
        || attrs.keys().any(|k| k.starts_with("llm.input_messages."))
    {
        return Ok(Role::Call {
            dialect: Dialect::OpenInference,
            input: shared(openinference(attrs, "llm.input_messages.")),
            output: shared(openinference(attrs, "llm.output_messages.")),
        });
    }
    if attrs
        .keys()
        .any(|k| k.starts_with("gen_ai.prompt.") || k.starts_with("gen_ai.completion."))
    {
        return Ok(Role::Call {
            dialect: Dialect::OpenLlmetry,
            input: shared(openllmetry(attrs, "gen_ai.prompt.")),
            output: shared(openllmetry(attrs, "gen_ai.completion.")),
        });
    }
    let event_form = events.iter().any(|e| is_event_form(&e.name));
    if event_form {
        let (input, output) = event_messages(events)?;
        return Ok(Role::Call {
            dialect: Dialect::GenAiEvents,
            input: shared(input),
            output: shared(output),
        });
    }
    if chat {
        // A model call with its content not captured: nothing to read, but it is one.
        return Ok(Role::Call {
            dialect: Dialect::GenAi,
            input: Vec::new(),
            output: Vec::new(),
        });
    }
    Ok(Role::Other)
}

/// Whether a span event (or a log record read as one) is a message of the
/// GenAI event form.
pub fn is_message_event(name: &str) -> bool {
    is_details(name) || is_event_form(name)
}

/// Whether an event is the operation-details event.
pub fn is_details(name: &str) -> bool {
    name == OPERATION_DETAILS
}

/// Whether an event is one message of the older event form.
fn is_event_form(name: &str) -> bool {
    name.starts_with("gen_ai.") && (name.ends_with(".message") || name == "gen_ai.choice")
}

/// The event on which the GenAI conventions may record a call's messages
/// instead of on its span.
const OPERATION_DETAILS: &str = "gen_ai.client.inference.operation.details";

/// The messages and system instructions a call's
/// `gen_ai.client.inference.operation.details` event carries, taken as its
/// span's attributes where the span has none of its own.
pub fn adopt_operation_details(attrs: &mut Attrs, events: &[SpanEvent]) {
    for e in events.iter().filter(|e| e.name == OPERATION_DETAILS) {
        for kv in &e.attributes {
            let wanted = matches!(
                kv.key.as_str(),
                "gen_ai.input.messages" | "gen_ai.output.messages" | "gen_ai.system_instructions"
            );
            if wanted && !attrs.contains_key(&kv.key) {
                attrs.0.push((kv.key.clone(), kv.value.clone()));
            }
        }
    }
}

/// An attribute holding JSON: a string of JSON text, or a structured value.
fn json_of(v: &AnyValue, key: &str) -> Result<Value, String> {
    match &v.string {
        Some(s) => serde_json::from_str(s).map_err(|e| format!("{key} is not valid JSON ({e})")),
        None => Ok(v.to_json()),
    }
}

/// A JSON value as text: strings as they are, anything else compact.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// GenAI message parts (`{"type": "text", "content": …}`, `tool_call`,
/// `tool_call_response`, `server_tool_call(_response)`, `reasoning`, and
/// media: `blob`, `file`, `uri`).
fn parts_of(v: &Value) -> Vec<Part> {
    let Value::Array(items) = v else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|p| {
            let kind = p.get("type").and_then(Value::as_str).unwrap_or("text");
            let id = p
                .get("id")
                .and_then(Value::as_str)
                .map(|s| s.trim().to_owned());
            match kind {
                "text" => Some(Part::Text(plain(p.get("content").unwrap_or(&Value::Null)))),
                "reasoning" | "thinking" => Some(Part::Reasoning(plain(
                    p.get("content").unwrap_or(&Value::Null),
                ))),
                "tool_call" => Some(Part::ToolCall {
                    id,
                    name: plain(p.get("name").unwrap_or(&Value::Null)),
                    args: plain(p.get("arguments").unwrap_or(&Value::Null)),
                }),
                "blob" | "file" | "uri" => Some(Part::Media(media(kind, p))),
                // A provider-side tool (web search, code execution) is a tool
                // call and its result like any other (design.md §7).
                "server_tool_call" => Some(Part::ToolCall {
                    id,
                    name: plain(p.get("name").unwrap_or(&Value::Null)),
                    args: plain(p.get("server_tool_call").unwrap_or(&Value::Null)),
                }),
                "server_tool_call_response" => Some(Part::ToolResult {
                    id,
                    content: plain(p.get("server_tool_call_response").unwrap_or(&Value::Null)),
                }),
                "tool_call_response" => Some(Part::ToolResult {
                    id,
                    content: plain(
                        p.get("response")
                            .or_else(|| p.get("result"))
                            .unwrap_or(&Value::Null),
                    ),
                }),
                _ => None,
            }
        })
        .collect()
}

/// A media part in words: its MIME type (else its modality), then its URI,
/// its file id, or the size of its inline bytes (base64 in JSON).
fn media(kind: &str, p: &Value) -> String {
    let field = |k: &str| p.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let what = field("mime_type")
        .or_else(|| field("media_type"))
        .or_else(|| field("modality"))
        .unwrap_or(kind);
    let place = match kind {
        "uri" => field("uri").map(str::to_owned),
        "file" => field("file_id").map(|id| format!("file {id}")),
        _ => field("content").map(|b64| {
            let padding = b64.bytes().rev().take_while(|&b| b == b'=').count();
            format!(
                "{} bytes",
                ((b64.len() / 4) * 3).saturating_sub(padding.min(2))
            )
        }),
    };
    match place {
        Some(place) => format!("{what}, {place}"),
        None => what.to_owned(),
    }
}

/// GenAI messages: `[{"role", "parts": […]}]`; messages in the OpenAI shape
/// (`content`, `tool_calls`, `tool_call_id`) are read too.
fn messages_of(v: &Value) -> Vec<Msg> {
    let Value::Array(items) = v else {
        return Vec::new();
    };
    items.iter().map(message).collect()
}

fn message(m: &Value) -> Msg {
    let role = m
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("assistant")
        .to_owned();
    let name = m.get("name").and_then(Value::as_str).map(str::to_owned);
    if let Some(parts) = m.get("parts") {
        return Msg {
            role,
            name,
            parts: parts_of(parts),
        };
    }
    // The OpenAI chat shape.
    let mut parts = Vec::new();
    let content = match m.get("content") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(v) => plain(v),
        None => String::new(),
    };
    let call_id = m
        .get("tool_call_id")
        .or_else(|| m.get("id"))
        .and_then(Value::as_str)
        .map(|s| s.trim().to_owned());
    if role == "tool" {
        parts.push(Part::ToolResult {
            id: call_id,
            content,
        });
    } else if !content.is_empty() {
        parts.push(Part::Text(content));
    }
    if let Some(calls) = m.get("tool_calls") {
        let calls = match calls {
            Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
            other => other.clone(),
        };
        if let Value::Array(calls) = calls {
            for c in &calls {
                let function = c.get("function").unwrap_or(c);
                parts.push(Part::ToolCall {
                    id: c
                        .get("id")
                        .and_then(Value::as_str)
                        .map(|s| s.trim().to_owned()),
                    name: plain(function.get("name").unwrap_or(&Value::Null)),
                    args: plain(function.get("arguments").unwrap_or(&Value::Null)),
                });
            }
        }
    }
    Msg { role, name, parts }
}

/// Indexed attributes under `prefix`: index → (rest of the key → value).
fn indexed<'a>(attrs: &'a Attrs, prefix: &str) -> BTreeMap<usize, HashMap<&'a str, &'a AnyValue>> {
    let mut out: BTreeMap<usize, HashMap<&str, &AnyValue>> = BTreeMap::new();
    for (key, value) in attrs.iter() {
        let Some(rest) = key.strip_prefix(prefix) else {
            continue;
        };
        let Some((n, field)) = rest.split_once('.') else {
            continue;
        };
        if let Ok(n) = n.parse::<usize>() {
            out.entry(n).or_default().insert(field, value);
        }
    }
    out
}

/// Sub-items of one indexed item: `tool_calls.K.rest` → K → rest → value.
fn sub<'a>(
    fields: &HashMap<&'a str, &'a AnyValue>,
    prefix: &str,
) -> BTreeMap<usize, HashMap<&'a str, &'a AnyValue>> {
    let mut out: BTreeMap<usize, HashMap<&str, &AnyValue>> = BTreeMap::new();
    for (key, value) in fields {
        let Some(rest) = key.strip_prefix(prefix) else {
            continue;
        };
        let Some((n, field)) = rest.split_once('.') else {
            continue;
        };
        if let Ok(n) = n.parse::<usize>() {
            out.entry(n).or_default().insert(field, *value);
        }
    }
    out
}

fn get(fields: &HashMap<&str, &AnyValue>, key: &str) -> Option<String> {
    fields
        .get(key)
        .map(|v| v.to_text())
        .filter(|s| !s.is_empty())
}

/// OpenInference's `llm.input_messages.N.message.*`.
fn openinference(attrs: &Attrs, prefix: &str) -> Vec<Msg> {
    indexed(attrs, prefix)
        .into_values()
        .map(|f| {
            let role = get(&f, "message.role").unwrap_or_else(|| "assistant".into());
            let call_id = get(&f, "message.tool_call_id");
            let mut texts: Vec<String> = Vec::new();
            if let Some(c) = get(&f, "message.content") {
                texts.push(c);
            }
            for item in sub(&f, "message.contents.").into_values() {
                if let Some(t) = get(&item, "message_content.text") {
                    texts.push(t);
                }
            }
            let mut parts: Vec<Part> = if role == "tool" {
                vec![Part::ToolResult {
                    id: call_id,
                    content: texts.join("\n"),
                }]
            } else {
                texts.into_iter().map(Part::Text).collect()
            };
            for call in sub(&f, "message.tool_calls.").into_values() {
                parts.push(Part::ToolCall {
                    id: get(&call, "tool_call.id"),
                    name: get(&call, "tool_call.function.name").unwrap_or_default(),
                    args: get(&call, "tool_call.function.arguments").unwrap_or_default(),
                });
            }
            Msg {
                role,
                name: get(&f, "message.name"),
                parts,
            }
        })
        .collect()
}

/// OpenLLMetry's `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`.
fn openllmetry(attrs: &Attrs, prefix: &str) -> Vec<Msg> {
    indexed(attrs, prefix)
        .into_values()
        .map(|f| {
            let role = get(&f, "role").unwrap_or_else(|| "assistant".into());
            let content = get(&f, "content").map(|c| {
                // Multimodal content is stored as a JSON list of parts.
                match serde_json::from_str::<Value>(&c) {
                    Ok(Value::Array(items)) if items.iter().all(|i| i.get("type").is_some()) => {
                        items
                            .iter()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join("\n")
                    }
                    _ => c,
                }
            });
            let mut parts = Vec::new();
            if role == "tool" {
                parts.push(Part::ToolResult {
                    id: get(&f, "tool_call_id"),
                    content: content.unwrap_or_default(),
                });
            } else if let Some(c) = content {
                parts.push(Part::Text(c));
            }
            for call in sub(&f, "tool_calls.").into_values() {
                parts.push(Part::ToolCall {
                    id: get(&call, "id"),
                    name: get(&call, "name").unwrap_or_default(),
                    args: get(&call, "arguments").unwrap_or_default(),
                });
            }
            Msg {
                role,
                name: get(&f, "name"),
                parts,
            }
        })
        .collect()
}

/// Traceloop writes a tool's return value as JSON (`json.dumps` of it): a
/// string comes back as the string, `{"output": …}` as its output.
fn traceloop_output(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(s)) => s,
        Ok(Value::Object(map)) if map.len() == 1 && map.contains_key("output") => {
            plain(&map["output"])
        }
        _ => text.to_owned(),
    }
}

/// Traceloop writes a tool's input as `{"args": [...], "kwargs": {...}}`: the
/// keyword arguments are the call's arguments.
fn traceloop_input(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map))
            if map.contains_key("kwargs")
                && map
                    .get("args")
                    .is_none_or(|a| a.as_array().is_some_and(Vec::is_empty)) =>
        {
            plain(&map["kwargs"])
        }
        _ => text.to_owned(),
    }
}

/// Tool-call arguments in one spelling, so the same call written by a model
/// call's output and by its tool span compares equal: parsed JSON written back
/// compactly with sorted keys, or the text itself when it is not JSON.
pub fn canonical(args: &str) -> String {
    serde_json::from_str::<Value>(args)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| args.to_owned())
}

/// The older GenAI event form: one span event per message, `gen_ai.choice` per
/// output (see [`event_message`]).
fn event_messages(events: &[SpanEvent]) -> Result<(Vec<Msg>, Vec<Msg>), String> {
    let mut input = Vec::new();
    let mut output = Vec::new();
    for e in events {
        match event_message(e)? {
            Some(Said::Input(m)) => input.push(m),
            Some(Said::Output(m)) => output.push(m),
            None => {}
        }
    }
    Ok((input, output))
}

/// A message of the event form, by where it stands in its call.
pub enum Said {
    /// A message the call was given.
    Input(Msg),
    /// A message the call wrote.
    Output(Msg),
}

/// One event (or log record) of the event form as a message: `None` when it
/// is not one. The body is in `gen_ai.event.content` (JSON) or in the
/// attributes (`content`, `id`, `tool_calls`, `message`).
pub fn event_message(e: &SpanEvent) -> Result<Option<Said>, String> {
    let role = match e.name.as_str() {
        "gen_ai.system.message" => "system",
        "gen_ai.user.message" => "user",
        "gen_ai.assistant.message" => "assistant",
        "gen_ai.tool.message" => "tool",
        "gen_ai.choice" => "choice",
        _ => return Ok(None),
    };
    let a = attrs_ref(&e.attributes);
    let mut body = match a.get("gen_ai.event.content") {
        Some(v) => json_of(v, "gen_ai.event.content")?,
        None => Value::Object(
            a.iter()
                .filter(|(k, _)| !k.starts_with("gen_ai.system") && **k != "event.name")
                .map(|(k, v)| ((*k).to_owned(), v.to_json()))
                .collect(),
        ),
    };
    if role == "choice" {
        let mut m = body.get("message").cloned().unwrap_or(Value::Null);
        if let Value::String(s) = &m {
            m = serde_json::from_str(s)
                .map_err(|err| format!("gen_ai.choice message is not valid JSON ({err})"))?;
        }
        if !m.is_object() {
            m = body.clone();
        }
        if m.get("role").is_none()
            && let Value::Object(map) = &mut m
        {
            map.insert("role".into(), Value::String("assistant".into()));
        }
        return Ok(Some(Said::Output(message(&m))));
    }
    if let Value::Object(map) = &mut body {
        map.insert("role".into(), Value::String(role.into()));
    }
    Ok(Some(Said::Input(message(&body))))
}

/// The messages a `gen_ai.client.inference.operation.details` event (or
/// log record) carries: its system instructions and input, its output.
pub fn operation_details(e: &SpanEvent) -> Result<(Vec<Msg>, Vec<Msg>), String> {
    let mut attrs = Attrs::default();
    adopt_operation_details(&mut attrs, std::slice::from_ref(e));
    match role("", &attrs, &[])? {
        Role::Call { input, output, .. } => {
            let owned = |v: Msgs| {
                v.into_iter()
                    .map(|m| Arc::try_unwrap(m).unwrap_or_else(|m| (*m).clone()))
                    .collect()
            };
            Ok((owned(input), owned(output)))
        }
        _ => Ok((Vec::new(), Vec::new())),
    }
}

fn attrs_ref(list: &[KeyValue]) -> HashMap<&str, &AnyValue> {
    list.iter().map(|kv| (kv.key.as_str(), &kv.value)).collect()
}

#[cfg(test)]
mod tests;
