//! The dialects' unit tests: each instrumentation's attributes read as it writes them.

use super::*;

/// OpenLLMetry in the wild writes its flat `gen_ai.prompt.N.*` and the
/// newer `gen_ai.input/output.messages` on the same span: the messages
/// are read once, from the newer form, never twice.
#[test]
fn a_span_with_both_openllmetry_forms_is_read_once() {
    let both = attrs_of(&[
        ("gen_ai.prompt.0.role", "user"),
        ("gen_ai.prompt.0.content", "why?"),
        ("gen_ai.completion.0.role", "assistant"),
        ("gen_ai.completion.0.content", "the database"),
        (
            "gen_ai.input.messages",
            r#"[{"role":"user","parts":[{"type":"text","content":"why?"}]}]"#,
        ),
        (
            "gen_ai.output.messages",
            r#"[{"role":"assistant","parts":[{"type":"text","content":"the database"}]}]"#,
        ),
    ]);
    let Ok(Role::Call {
        dialect,
        input,
        output,
    }) = role("chat gpt-4o", &both, &[])
    else {
        panic!("a model call");
    };
    assert_eq!(dialect, Dialect::GenAi);
    assert_eq!((input.len(), output.len()), (1, 1));
}

/// A provider-side tool's call and result (`server_tool_call`,
/// `server_tool_call_response`) read as a tool call and its result.
#[test]
fn server_tool_calls_are_tool_calls() {
    let parts: Value = serde_json::from_str(
        r#"[{"type":"server_tool_call","id":"b1","name":"web_search","server_tool_call":{"type":"web_search","arguments":{"q":"x"}}},
            {"type":"server_tool_call_response","id":"b1","server_tool_call_response":{"type":"web_search","response":{"hits":1}}}]"#,
    )
    .unwrap_or_default();
    let said = parts_of(&parts);
    assert!(
        matches!(
            &said[0],
            Part::ToolCall { id: Some(id), name, args } if id == "b1" && name == "web_search" && args.contains("\"q\"")
        ),
        "{said:?}"
    );
    assert!(
        matches!(
            &said[1],
            Part::ToolResult { id: Some(id), content } if id == "b1" && content.contains("hits")
        ),
        "{said:?}"
    );
}

/// The GenAI conventions' media parts (`blob`, `file`, `uri`), as their
/// JSON schemas write them, read as what the model was given.
#[test]
fn media_parts_say_their_type_and_where_they_are() {
    let parts: Value = serde_json::from_str(
        r#"[{"type":"uri","modality":"image","mime_type":"image/png","uri":"https://grafana.example/d/x.png"},
            {"type":"file","modality":"document","mime_type":"application/pdf","file_id":"file-abc"},
            {"type":"blob","modality":"image","mime_type":"image/jpeg","content":"AAECAwQF"},
            {"type":"blob","modality":"audio","content":"AA=="},
            {"type":"uri","modality":"video"}]"#,
    )
    .unwrap_or_default();
    let said: Vec<Part> = parts_of(&parts);
    assert_eq!(
        said,
        vec![
            Part::Media("image/png, https://grafana.example/d/x.png".into()),
            Part::Media("application/pdf, file file-abc".into()),
            Part::Media("image/jpeg, 6 bytes".into()),
            Part::Media("audio, 1 bytes".into()),
            Part::Media("video".into()),
        ]
    );
}

fn attrs_of(pairs: &[(&str, &str)]) -> Attrs {
    pairs
        .iter()
        .map(|(k, v)| {
            (
                (*k).to_owned(),
                AnyValue {
                    string: Some((*v).to_owned()),
                    ..AnyValue::default()
                },
            )
        })
        .collect()
}

fn call(role: Role) -> (Vec<Msg>, Vec<Msg>) {
    let owned = |v: Msgs| v.into_iter().map(|m| (*m).clone()).collect();
    match role {
        Role::Call { input, output, .. } => (owned(input), owned(output)),
        other => panic!("not a call: {other:?}"),
    }
}

#[test]
fn the_same_step_reads_alike_in_three_attribute_dialects() {
    let genai = attrs_of(&[
        ("gen_ai.operation.name", "chat"),
        (
            "gen_ai.input.messages",
            r#"[{"role":"user","parts":[{"type":"text","content":"why?"}]},
                {"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"cpu 98%"}]}]"#,
        ),
        (
            "gen_ai.output.messages",
            r#"[{"role":"assistant","parts":[{"type":"tool_call","id":"c2","name":"logs","arguments":{"q":"x"}}]}]"#,
        ),
    ]);
    let oi = attrs_of(&[
        ("openinference.span.kind", "LLM"),
        ("llm.input_messages.0.message.role", "user"),
        ("llm.input_messages.0.message.content", "why?"),
        ("llm.input_messages.1.message.role", "tool"),
        ("llm.input_messages.1.message.tool_call_id", "c1"),
        ("llm.input_messages.1.message.content", "cpu 98%"),
        ("llm.output_messages.0.message.role", "assistant"),
        (
            "llm.output_messages.0.message.tool_calls.0.tool_call.id",
            "c2",
        ),
        (
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
            "logs",
        ),
        (
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
            r#"{"q":"x"}"#,
        ),
    ]);
    let ol = attrs_of(&[
        ("llm.request.type", "chat"),
        ("gen_ai.prompt.0.role", "user"),
        ("gen_ai.prompt.0.content", "why?"),
        ("gen_ai.prompt.1.role", "tool"),
        ("gen_ai.prompt.1.tool_call_id", "c1"),
        ("gen_ai.prompt.1.content", "cpu 98%"),
        ("gen_ai.completion.0.role", "assistant"),
        ("gen_ai.completion.0.tool_calls.0.id", "c2"),
        ("gen_ai.completion.0.tool_calls.0.name", "logs"),
        ("gen_ai.completion.0.tool_calls.0.arguments", r#"{"q":"x"}"#),
    ]);
    let a = call(role("chat m", &genai, &[]).unwrap());
    assert_eq!(a, call(role("chat m", &oi, &[]).unwrap()));
    assert_eq!(a, call(role("chat m", &ol, &[]).unwrap()));
    assert_eq!(
        a.1[0].parts,
        vec![Part::ToolCall {
            id: Some("c2".into()),
            name: "logs".into(),
            args: r#"{"q":"x"}"#.into()
        }]
    );
}

#[test]
fn unreadable_messages_are_named() {
    let bad = attrs_of(&[("gen_ai.input.messages", "[{not json")]);
    let e = role("chat", &bad, &[]).unwrap_err();
    assert!(
        e.starts_with("gen_ai.input.messages is not valid JSON"),
        "{e}"
    );
}
