#!/usr/bin/env python3
"""Writes asof's OTLP fixtures with the real OpenTelemetry Python SDK.

    pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-common \
        opentelemetry-instrumentation-openai-v2==2.3b0 openai
    python3 datasets/make-otlp.py

Spans are made by the SDK's tracer (explicit start and end times, so the output
is the same on every run), exported by a SimpleSpanProcessor (spans arrive in
the order they end, as a BatchSpanProcessor hands them over), encoded into
ExportTraceServiceRequest protobufs by the OTLP exporter's own encoder and
written as OTLP/JSON two ways:

* as the OpenTelemetry Collector's file exporter writes them: one request per
  line, ids in hex, enums as numbers, 64-bit integers as strings;
* with protobuf's generic JSON mapping (json_format): ids in base64, enums by
  name; one pretty-printed object.

Writes datasets/sre-agent.otlp.jsonl (the bundled example), its rerun by
another model (datasets/sre-agent-rerun.otlp.jsonl, for `asof compare`) and the test
fixtures in tests/fixtures/otlp/. The attributes follow each convention as its
instrumentations write them: the OpenTelemetry GenAI semantic conventions
(current message parts, and the older span-event form), OpenInference and
OpenLLMetry (Traceloop).

Logs: openai-v2 2.3b0, like every instrumentation still on the older
conventions, writes message content to OTLP log records, not to its spans. The
logs fixtures are made by that instrumentation's own event builders
(`message_to_event`, `choice_to_event`), emitted through the SDK's logger inside
the chat span (so each record carries its trace and span id), and encoded by
the OTLP exporter's own logs encoder.
"""

import base64
import json
import os
from datetime import datetime, timezone

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Sequential(IdGenerator):
    """Deterministic ids: the same spans get the same ids on every run."""

    def __init__(self, seed):
        self.seed = seed
        self.n = 0

    def generate_span_id(self):
        self.n += 1
        return (self.seed << 32) | (0x9E3779B1 * self.n & 0xFFFFFFFF) | 1

    def generate_trace_id(self):
        return (self.seed << 96) | 0x5A17_0000_0000_0000_0000_0001


def ns(text):
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1e9)


def provider(seed, service):
    exporter = InMemorySpanExporter()
    tp = TracerProvider(
        resource=Resource.create({"service.name": service, "service.version": "1.4.0", "service.instance.id": f"{service}-0"}),
        id_generator=Sequential(seed),
    )
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return tp, exporter


def collector_lines(spans, batch=8):
    """The Collector's file exporter: a request per batch, hex ids, numeric enums."""
    lines = []
    for i in range(0, len(spans), batch):
        request = MessageToDict(encode_spans(spans[i : i + batch]))
        for rs in request["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = base64.b64decode(span[key]).hex()
                    span["kind"] = {
                        "SPAN_KIND_INTERNAL": 1,
                        "SPAN_KIND_SERVER": 2,
                        "SPAN_KIND_CLIENT": 3,
                    }[span.get("kind", "SPAN_KIND_INTERNAL")]
                    if "status" in span and "code" in span["status"]:
                        span["status"]["code"] = {"STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}[
                            span["status"]["code"]
                        ]
        lines.append(json.dumps(request, separators=(",", ":"), ensure_ascii=False))
    return "\n".join(lines) + "\n"


def protobuf_json(spans):
    """protobuf's JSON mapping of one request: base64 ids, enum names."""
    return json.dumps(MessageToDict(encode_spans(spans)), indent=1, ensure_ascii=False) + "\n"


def log_lines(records, batch=8):
    """The Collector's file exporter, for logs: a request per batch, hex ids."""
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    lines = []
    for i in range(0, len(records), batch):
        request = MessageToDict(encode_logs(records[i : i + batch]))
        for rl in request["resourceLogs"]:
            for sl in rl["scopeLogs"]:
                for record in sl["logRecords"]:
                    for key in ("traceId", "spanId"):
                        if key in record:
                            record[key] = base64.b64decode(record[key]).hex()
        lines.append(json.dumps(request, separators=(",", ":"), ensure_ascii=False))
    return "\n".join(lines) + "\n"


def logger_provider(service):
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    exporter = InMemoryLogRecordExporter()
    lp = LoggerProvider(resource=Resource.create({"service.name": service, "service.version": "1.4.0", "service.instance.id": f"{service}-0"}))
    lp.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    return lp, exporter


def write(path, text):
    full = os.path.join(ROOT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote", path)


# ---------------------------------------------------------------------------
# One agent step in four conventions: the same messages, the same tool run.

SYSTEM = "You are an SRE agent. Find the root cause of the incident you are paged for."
USER = "PagerDuty: checkout-api 5xx above 5% since 09:05. Why?"
RESULT = "payments-db cpu 98% since 09:04; connections 480/500"
ARGS = '{"query": "payments-db cpu"}'
BELIEF = {
    "topic": "root-cause",
    "claim": "payments-db-overload",
    "confidence": 0.6,
    "rationale": "CPU saturated a minute before the errors",
}
BELIEF_ARGS = json.dumps(BELIEF)
PROSE = "CPU saturated a minute before the errors, so the root cause is payments-db-overload (60%)."
T = {
    "agent": ("2026-03-02T09:10:00Z", "2026-03-02T09:10:30Z"),
    "chat1": ("2026-03-02T09:10:01Z", "2026-03-02T09:10:04Z"),
    "tool": ("2026-03-02T09:10:04.500Z", "2026-03-02T09:10:06Z"),
    "chat2": ("2026-03-02T09:10:07Z", "2026-03-02T09:10:11Z"),
    "belief": ("2026-03-02T09:10:11.200Z", "2026-03-02T09:10:11.300Z"),
}


def genai_messages(step):
    """The GenAI conventions' message parts for chat 1 and chat 2."""
    user = {"role": "user", "parts": [{"type": "text", "content": USER}]}
    call = {"type": "tool_call", "id": "call_1", "name": "query_metrics", "arguments": json.loads(ARGS)}
    if step == 1:
        return [user], [{"role": "assistant", "parts": [call], "finish_reason": "tool_call"}]
    history = [
        user,
        {"role": "assistant", "parts": [call]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": RESULT}]},
    ]
    return history, None


def step_output(style):
    """Chat 2's output: a belief-tool call, or prose."""
    if style == "prose":
        return [{"role": "assistant", "parts": [{"type": "text", "content": PROSE}], "finish_reason": "stop"}]
    if style == "events":
        return [{"role": "assistant", "parts": [{"type": "text", "content": "Recorded."}], "finish_reason": "stop"}]
    return [
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "call_2", "name": "record_belief", "arguments": BELIEF}],
            "finish_reason": "tool_call",
        }
    ]


def genai_step(style="tool"):
    tp, exporter = provider(7, "triage-service")
    tracer = tp.get_tracer("sre_agent.instrumentation", "0.3.0")
    agent = tracer.start_span(
        "invoke_agent triage",
        kind=SpanKind.INTERNAL,
        start_time=ns(T["agent"][0]),
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage", "gen_ai.agent.id": "agt_01", "gen_ai.provider.name": "openai"},
    )
    from opentelemetry import trace

    ctx = trace.set_span_in_context(agent)
    input1, output1 = genai_messages(1)
    chat = tracer.start_span("chat gpt-4.1", context=ctx, kind=SpanKind.CLIENT, start_time=ns(T["chat1"][0]), attributes={
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4.1",
        "gen_ai.response.model": "gpt-4.1-2025-04-14", "gen_ai.usage.input_tokens": 212, "gen_ai.usage.output_tokens": 31,
        "gen_ai.response.finish_reasons": ["tool_calls"],
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
        "gen_ai.input.messages": json.dumps(input1), "gen_ai.output.messages": json.dumps(output1),
    })
    chat.end(end_time=ns(T["chat1"][1]))
    tool = tracer.start_span("execute_tool query_metrics", context=ctx, kind=SpanKind.INTERNAL, start_time=ns(T["tool"][0]), attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "query_metrics", "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": ARGS, "gen_ai.tool.call.result": RESULT,
    })
    tool.end(end_time=ns(T["tool"][1]))
    input2, _ = genai_messages(2)
    output2 = step_output(style)
    chat2 = tracer.start_span("chat gpt-4.1", context=ctx, kind=SpanKind.CLIENT, start_time=ns(T["chat2"][0]), attributes={
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4.1",
        "gen_ai.response.model": "gpt-4.1-2025-04-14", "gen_ai.usage.input_tokens": 305, "gen_ai.usage.output_tokens": 44,
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
        "gen_ai.input.messages": json.dumps(input2), "gen_ai.output.messages": json.dumps(output2),
    })
    if style == "events":
        chat2.add_event("asof.belief", {
            "asof.topic": BELIEF["topic"], "asof.claim": BELIEF["claim"], "asof.confidence": BELIEF["confidence"],
            "asof.rationale": BELIEF["rationale"],
        }, timestamp=ns(T["chat2"][1]))
    chat2.end(end_time=ns(T["chat2"][1]))
    if style == "tool":
        belief = tracer.start_span("execute_tool record_belief", context=ctx, start_time=ns(T["belief"][0]), attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "record_belief", "gen_ai.tool.call.id": "call_2",
            "gen_ai.tool.call.arguments": BELIEF_ARGS, "gen_ai.tool.call.result": "recorded",
        })
        belief.end(end_time=ns(T["belief"][1]))
    agent.end(end_time=ns(T["agent"][1]))
    return list(exporter.get_finished_spans())


def genai_events_step():
    """The older GenAI form: one span event per message, gen_ai.choice per output."""
    tp, exporter = provider(7, "triage-service")
    tracer = tp.get_tracer("opentelemetry.instrumentation.openai_v2", "2.0b0")
    from opentelemetry import trace

    agent = tracer.start_span("invoke_agent triage", start_time=ns(T["agent"][0]), attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"})
    ctx = trace.set_span_in_context(agent)
    tool_call = [{"id": "call_1", "type": "function", "function": {"name": "query_metrics", "arguments": ARGS}}]

    def chat_span(when, events):
        span = tracer.start_span("chat gpt-4.1", context=ctx, kind=SpanKind.CLIENT, start_time=ns(when[0]), attributes={
            "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4.1"})
        for name, attrs in events:
            span.add_event(name, attrs, timestamp=ns(when[0]))
        return span

    chat = chat_span(T["chat1"], [
        ("gen_ai.system.message", {"gen_ai.system": "openai", "content": SYSTEM}),
        ("gen_ai.user.message", {"gen_ai.system": "openai", "content": USER}),
        ("gen_ai.choice", {"gen_ai.system": "openai", "index": 0, "finish_reason": "tool_calls",
                            "message": json.dumps({"role": "assistant", "tool_calls": tool_call})}),
    ])
    chat.end(end_time=ns(T["chat1"][1]))
    tool = tracer.start_span("execute_tool query_metrics", context=ctx, start_time=ns(T["tool"][0]), attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "query_metrics", "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": ARGS, "gen_ai.tool.call.result": RESULT})
    tool.end(end_time=ns(T["tool"][1]))
    chat2 = chat_span(T["chat2"], [
        ("gen_ai.system.message", {"gen_ai.system": "openai", "content": SYSTEM}),
        ("gen_ai.user.message", {"gen_ai.system": "openai", "content": USER}),
        ("gen_ai.assistant.message", {"gen_ai.system": "openai", "tool_calls": json.dumps(tool_call)}),
        ("gen_ai.tool.message", {"gen_ai.system": "openai", "id": "call_1", "content": RESULT}),
        ("gen_ai.choice", {"gen_ai.system": "openai", "index": 0, "finish_reason": "tool_calls", "message": json.dumps(
            {"role": "assistant", "tool_calls": [{"id": "call_2", "type": "function", "function": {"name": "record_belief", "arguments": BELIEF_ARGS}}]})}),
    ])
    chat2.end(end_time=ns(T["chat2"][1]))
    belief = tracer.start_span("execute_tool record_belief", context=ctx, start_time=ns(T["belief"][0]), attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "record_belief", "gen_ai.tool.call.id": "call_2",
        "gen_ai.tool.call.arguments": BELIEF_ARGS, "gen_ai.tool.call.result": "recorded"})
    belief.end(end_time=ns(T["belief"][1]))
    agent.end(end_time=ns(T["agent"][1]))
    return list(exporter.get_finished_spans())


def genai_logs_step():
    """The step as openai-v2 2.3b0 writes it: chat spans with no content, and
    every message a log record (the instrumentation's own event builders),
    with only its observed time. The tool run is the agent's own span."""
    from types import SimpleNamespace as O

    from opentelemetry import trace
    from opentelemetry.instrumentation.openai_v2.utils import choice_to_event, message_to_event

    tp, exporter = provider(7, "triage-service")
    lp, logs = logger_provider("triage-service")
    tracer = tp.get_tracer("opentelemetry.instrumentation.openai_v2", "2.3b0")
    logger = lp.get_logger("opentelemetry.instrumentation.openai_v2", "2.3b0")
    agent = tracer.start_span("invoke_agent triage", start_time=ns(T["agent"][0]), attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"})
    ctx = trace.set_span_in_context(agent)

    def call_obj(cid, name, args):
        return O(id=cid, type="function", function=O(name=name, arguments=args))

    def chat(when, messages, choice_message, finish):
        span = tracer.start_span("chat gpt-4.1", context=ctx, kind=SpanKind.CLIENT, start_time=ns(when[0]), attributes={
            "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4.1"})
        with trace.use_span(span, end_on_exit=False):
            for m in messages:
                record = message_to_event(m, True)
                record.observed_timestamp = ns(when[0])
                logger.emit(record)
            record = choice_to_event(O(index=0, finish_reason=finish, message=choice_message), True)
            record.observed_timestamp = ns(when[1])
            logger.emit(record)
        span.end(end_time=ns(when[1]))

    first_call = call_obj("call_1", "query_metrics", ARGS)
    history = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
    chat(T["chat1"], history, O(role="assistant", content=None, tool_calls=[first_call]), "tool_calls")
    tool = tracer.start_span("execute_tool query_metrics", context=ctx, start_time=ns(T["tool"][0]), attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "query_metrics", "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": ARGS, "gen_ai.tool.call.result": RESULT})
    tool.end(end_time=ns(T["tool"][1]))
    history += [
        {"role": "assistant", "content": None, "tool_calls": [first_call]},
        {"role": "tool", "tool_call_id": "call_1", "content": RESULT},
    ]
    belief_call = call_obj("call_2", "record_belief", BELIEF_ARGS)
    chat(T["chat2"], history, O(role="assistant", content=None, tool_calls=[belief_call]), "tool_calls")
    belief = tracer.start_span("execute_tool record_belief", context=ctx, start_time=ns(T["belief"][0]), attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "record_belief", "gen_ai.tool.call.id": "call_2",
        "gen_ai.tool.call.arguments": BELIEF_ARGS, "gen_ai.tool.call.result": "recorded"})
    belief.end(end_time=ns(T["belief"][1]))
    agent.end(end_time=ns(T["agent"][1]))
    return list(exporter.get_finished_spans()), list(logs.get_finished_logs())


def openinference_step():
    """OpenInference (Arize Phoenix): flattened llm.input_messages.N.message.*."""
    tp, exporter = provider(7, "triage-service")
    tracer = tp.get_tracer("openinference.instrumentation.openai", "0.1.30")
    from opentelemetry import trace

    agent = tracer.start_span("triage", start_time=ns(T["agent"][0]), attributes={
        "openinference.span.kind": "AGENT", "agent.name": "triage", "input.value": USER})
    ctx = trace.set_span_in_context(agent)

    def messages(prefix, items):
        out = {}
        for i, m in enumerate(items):
            for k, v in m.items():
                out[f"{prefix}.{i}.message.{k}"] = v
        return out

    tool_call = {"tool_calls.0.tool_call.id": "call_1", "tool_calls.0.tool_call.function.name": "query_metrics",
                 "tool_calls.0.tool_call.function.arguments": ARGS}
    chat = tracer.start_span("ChatCompletion", context=ctx, start_time=ns(T["chat1"][0]), attributes={
        "openinference.span.kind": "LLM", "llm.model_name": "gpt-4.1", "llm.provider": "openai",
        **messages("llm.input_messages", [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]),
        **messages("llm.output_messages", [{"role": "assistant", **tool_call}]),
    })
    chat.end(end_time=ns(T["chat1"][1]))
    tool = tracer.start_span("query_metrics", context=ctx, start_time=ns(T["tool"][0]), attributes={
        "openinference.span.kind": "TOOL", "tool.name": "query_metrics", "input.value": ARGS, "output.value": RESULT})
    tool.end(end_time=ns(T["tool"][1]))
    chat2 = tracer.start_span("ChatCompletion", context=ctx, start_time=ns(T["chat2"][0]), attributes={
        "openinference.span.kind": "LLM", "llm.model_name": "gpt-4.1",
        **messages("llm.input_messages", [
            {"role": "system", "content": SYSTEM}, {"role": "user", "content": USER},
            {"role": "assistant", **tool_call}, {"role": "tool", "tool_call_id": "call_1", "content": RESULT}]),
        **messages("llm.output_messages", [{"role": "assistant", "tool_calls.0.tool_call.id": "call_2",
            "tool_calls.0.tool_call.function.name": "record_belief", "tool_calls.0.tool_call.function.arguments": BELIEF_ARGS}]),
    })
    chat2.end(end_time=ns(T["chat2"][1]))
    belief = tracer.start_span("record_belief", context=ctx, start_time=ns(T["belief"][0]), attributes={
        "openinference.span.kind": "TOOL", "tool.name": "record_belief", "input.value": BELIEF_ARGS, "output.value": "recorded"})
    belief.end(end_time=ns(T["belief"][1]))
    agent.end(end_time=ns(T["agent"][1]))
    return list(exporter.get_finished_spans())


def openllmetry_step():
    """OpenLLMetry (Traceloop): indexed gen_ai.prompt.N.* / gen_ai.completion.N.*."""
    tp, exporter = provider(7, "triage-service")
    tracer = tp.get_tracer("opentelemetry.instrumentation.openai.v1", "0.40.0")
    from opentelemetry import trace

    agent = tracer.start_span("triage.agent", start_time=ns(T["agent"][0]), attributes={
        "traceloop.span.kind": "agent", "traceloop.entity.name": "triage"})
    ctx = trace.set_span_in_context(agent)
    chat = tracer.start_span("openai.chat", context=ctx, kind=SpanKind.CLIENT, start_time=ns(T["chat1"][0]), attributes={
        "llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4.1",
        "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": SYSTEM,
        "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": USER,
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.finish_reason": "tool_calls",
        "gen_ai.completion.0.tool_calls.0.id": "call_1", "gen_ai.completion.0.tool_calls.0.name": "query_metrics",
        "gen_ai.completion.0.tool_calls.0.arguments": ARGS,
    })
    chat.end(end_time=ns(T["chat1"][1]))
    tool = tracer.start_span("query_metrics.tool", context=ctx, start_time=ns(T["tool"][0]), attributes={
        "traceloop.span.kind": "tool", "traceloop.entity.name": "query_metrics",
        "traceloop.entity.input": json.dumps({"args": [], "kwargs": json.loads(ARGS)}),
        "traceloop.entity.output": json.dumps(RESULT)})
    tool.end(end_time=ns(T["tool"][1]))
    chat2 = tracer.start_span("openai.chat", context=ctx, kind=SpanKind.CLIENT, start_time=ns(T["chat2"][0]), attributes={
        "llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4.1",
        "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": SYSTEM,
        "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": USER,
        "gen_ai.prompt.2.role": "assistant", "gen_ai.prompt.2.tool_calls.0.id": "call_1",
        "gen_ai.prompt.2.tool_calls.0.name": "query_metrics", "gen_ai.prompt.2.tool_calls.0.arguments": ARGS,
        "gen_ai.prompt.3.role": "tool", "gen_ai.prompt.3.tool_call_id": "call_1", "gen_ai.prompt.3.content": RESULT,
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.finish_reason": "tool_calls",
        "gen_ai.completion.0.tool_calls.0.id": "call_2", "gen_ai.completion.0.tool_calls.0.name": "record_belief",
        "gen_ai.completion.0.tool_calls.0.arguments": BELIEF_ARGS,
    })
    chat2.end(end_time=ns(T["chat2"][1]))
    belief = tracer.start_span("record_belief.tool", context=ctx, start_time=ns(T["belief"][0]), attributes={
        "traceloop.span.kind": "tool", "traceloop.entity.name": "record_belief",
        "traceloop.entity.input": json.dumps({"args": [], "kwargs": BELIEF}), "traceloop.entity.output": json.dumps("recorded")})
    belief.end(end_time=ns(T["belief"][1]))
    agent.end(end_time=ns(T["agent"][1]))
    return list(exporter.get_finished_spans())


# ---------------------------------------------------------------------------
# A re-check: the agent calls the same tool twice and gets byte-identical output.
# Three model calls; each later one states a hypothesis in prose after reading
# one of the two results. Tool spans carry no call id in OpenInference and
# OpenLLMetry, as their framework instrumentations write them.

RECHECK_ARGS = '{"node": "node-5"}'
RECHECK_RESULT = "node-5: Ready; pods 14/14; cpu 31%; last restart 6d ago"
RECHECK_PROSE = [
    "Node looks healthy, but the root cause is node-5 (40%) until I re-check it.",
    "Same again, so the root cause is paymentservice (70%), not the node.",
]
RT = {
    "agent": ("2026-03-02T09:20:00Z", "2026-03-02T09:21:00Z"),
    "chat": [("2026-03-02T09:20:01Z", "2026-03-02T09:20:03Z"), ("2026-03-02T09:20:10Z", "2026-03-02T09:20:13Z"),
             ("2026-03-02T09:20:20Z", "2026-03-02T09:20:24Z")],
    "tool": [("2026-03-02T09:20:04Z", "2026-03-02T09:20:05Z"), ("2026-03-02T09:20:14Z", "2026-03-02T09:20:15Z")],
}


def recheck_run(form):
    """The re-check in `genai`, `openinference` or `openllmetry` form."""
    from opentelemetry import trace

    tp, exporter = provider(9, "triage-service")
    tracer = tp.get_tracer(f"recheck.{form}", "1.0")
    agent_attrs = {
        "genai": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"},
        "openinference": {"openinference.span.kind": "AGENT", "agent.name": "triage"},
        "openllmetry": {"traceloop.span.kind": "agent", "traceloop.entity.name": "triage"},
    }[form]
    agent = tracer.start_span("triage", start_time=ns(RT["agent"][0]), attributes=agent_attrs)
    ctx = trace.set_span_in_context(agent)
    # The history as OpenAI chat messages; each form writes it its own way.
    history = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]

    def as_genai(m):
        if m["role"] == "tool":
            return {"role": "tool", "parts": [{"type": "tool_call_response", "id": m["tool_call_id"], "response": m["content"]}]}
        parts = [{"type": "text", "content": m["content"]}] if m.get("content") else []
        for c in m.get("tool_calls", []):
            parts.append({"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": json.loads(c["arguments"])})
        return {"role": m["role"], "parts": parts}

    def flat(prefix, items, oi):
        out = {}
        for i, m in enumerate(items):
            base = f"{prefix}.{i}.message." if oi else f"{prefix}.{i}."
            out[base + "role"] = m["role"]
            if m.get("content"):
                out[base + "content"] = m["content"]
            if m.get("tool_call_id"):
                out[base + "tool_call_id"] = m["tool_call_id"]
            for k, c in enumerate(m.get("tool_calls", [])):
                if oi:
                    out[f"{base}tool_calls.{k}.tool_call.id"] = c["id"]
                    out[f"{base}tool_calls.{k}.tool_call.function.name"] = c["name"]
                    out[f"{base}tool_calls.{k}.tool_call.function.arguments"] = c["arguments"]
                else:
                    out[f"{base}tool_calls.{k}.id"] = c["id"]
                    out[f"{base}tool_calls.{k}.name"] = c["name"]
                    out[f"{base}tool_calls.{k}.arguments"] = c["arguments"]
        return out

    def chat(n, output):
        if form == "genai":
            system = [{"type": "text", "content": SYSTEM}]
            attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1",
                     "gen_ai.system_instructions": json.dumps(system),
                     "gen_ai.input.messages": json.dumps([as_genai(m) for m in history[1:]]),
                     "gen_ai.output.messages": json.dumps([as_genai(output)])}
        elif form == "openinference":
            attrs = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4.1",
                     **flat("llm.input_messages", history, True), **flat("llm.output_messages", [output], True)}
        else:
            attrs = {"llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4.1",
                     **flat("gen_ai.prompt", history, False), **flat("gen_ai.completion", [output], False)}
        span = tracer.start_span("chat gpt-4.1", context=ctx, kind=SpanKind.CLIENT, start_time=ns(RT["chat"][n][0]), attributes=attrs)
        span.end(end_time=ns(RT["chat"][n][1]))
        history.append(output)

    def tool(n, call_id):
        if form == "genai":
            attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "describe_node", "gen_ai.tool.call.id": call_id,
                     "gen_ai.tool.call.arguments": RECHECK_ARGS, "gen_ai.tool.call.result": RECHECK_RESULT}
        elif form == "openinference":
            attrs = {"openinference.span.kind": "TOOL", "tool.name": "describe_node", "input.value": RECHECK_ARGS,
                     "output.value": RECHECK_RESULT}
        else:
            attrs = {"traceloop.span.kind": "tool", "traceloop.entity.name": "describe_node",
                     "traceloop.entity.input": json.dumps({"args": [], "kwargs": json.loads(RECHECK_ARGS)}),
                     "traceloop.entity.output": json.dumps(RECHECK_RESULT)}
        span = tracer.start_span("describe_node", context=ctx, start_time=ns(RT["tool"][n][0]), attributes=attrs)
        span.end(end_time=ns(RT["tool"][n][1]))
        history.append({"role": "tool", "tool_call_id": call_id, "content": RECHECK_RESULT})

    call = lambda cid: {"id": cid, "name": "describe_node", "arguments": RECHECK_ARGS}
    chat(0, {"role": "assistant", "content": "Checking the node first.", "tool_calls": [call("call_r1")]})
    tool(0, "call_r1")
    chat(1, {"role": "assistant", "content": RECHECK_PROSE[0], "tool_calls": [call("call_r2")]})
    tool(1, "call_r2")
    chat(2, {"role": "assistant", "content": RECHECK_PROSE[1]})
    agent.end(end_time=ns(RT["agent"][1]))
    return list(exporter.get_finished_spans())


# ---------------------------------------------------------------------------
# Evidence kept whole: a 20 KB page of alerts (naming the true cause many times)
# and a 30 KB tool result; the last call states two hypotheses at one instant.


def alerts_page():
    services = ["checkout-api", "paymentservice", "adservice2-0", "cartservice", "node-5"]
    lines = []
    n = 0
    while sum(len(line) + 1 for line in lines) < 20_000:
        svc = services[n % len(services)]
        lines.append(f"[{n:04d}] 09:{n % 60:02d}:{(7 * n) % 60:02d}Z ALERT {svc}: p99 latency {200 + (n * 37) % 900} ms, "
                     f"errors {(n * 13) % 97 / 10:.1f}% (rule slo-burn-{n % 7})")
        n += 1
    return "\n".join(lines)


def log_dump():
    lines = []
    n = 0
    while sum(len(line) + 1 for line in lines) < 30_000:
        lines.append(f"2026-03-02T09:{n % 60:02d}:{(n * 11) % 60:02d}.{n % 1000:03d}Z pod/adservice2-0 "
                     f"level={'ERROR' if n % 5 == 0 else 'INFO'} msg=\"request {n} took {(n * 29) % 1500} ms\"")
        n += 1
    return "\n".join(lines)


WHOLE_PROSE = "At first the root cause is node-5 (30%), but the logs say the root cause is adservice2-0 (60%)."


def whole_step():
    from opentelemetry import trace

    tp, exporter = provider(11, "triage-service")
    tracer = tp.get_tracer("sre_agent.instrumentation", "0.3.0")
    agent = tracer.start_span("invoke_agent triage", start_time=ns("2026-03-02T09:30:00Z"), attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"})
    ctx = trace.set_span_in_context(agent)
    user = {"role": "user", "parts": [{"type": "text", "content": alerts_page()}]}
    call = {"type": "tool_call", "id": "call_w1", "name": "fetch_logs", "arguments": {"pod": "adservice2-0"}}
    chat = tracer.start_span("chat gpt-4.1", context=ctx, kind=SpanKind.CLIENT, start_time=ns("2026-03-02T09:30:01Z"), attributes={
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1",
        "gen_ai.input.messages": json.dumps([user]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [call]}])})
    chat.end(end_time=ns("2026-03-02T09:30:03Z"))
    result = log_dump()
    tool = tracer.start_span("execute_tool fetch_logs", context=ctx, start_time=ns("2026-03-02T09:30:04Z"), attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "fetch_logs", "gen_ai.tool.call.id": "call_w1",
        "gen_ai.tool.call.arguments": json.dumps({"pod": "adservice2-0"}), "gen_ai.tool.call.result": result})
    tool.end(end_time=ns("2026-03-02T09:30:06Z"))
    history = [user, {"role": "assistant", "parts": [call]},
               {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_w1", "response": result}]}]
    chat2 = tracer.start_span("chat gpt-4.1", context=ctx, kind=SpanKind.CLIENT, start_time=ns("2026-03-02T09:30:07Z"), attributes={
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1",
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": WHOLE_PROSE}]}])})
    chat2.end(end_time=ns("2026-03-02T09:30:10Z"))
    agent.end(end_time=ns("2026-03-02T09:30:11Z"))
    return list(exporter.get_finished_spans())


# ---------------------------------------------------------------------------
# The newer conventions: a memory search, a retrieval, reasoning parts, an MCP
# tool, evaluations on a tool span and on a model call, a memory write that
# states a belief and a delete of that record.

FEATURES_PAGE = "PagerDuty: checkout-api 5xx above 5% since 09:35. Why?"


def features_run():
    from opentelemetry import trace

    tp, exporter = provider(13, "triage-service")
    tracer = tp.get_tracer("sre_agent.instrumentation", "0.4.0")
    day = "2026-03-02T09:40:"
    agent = tracer.start_span("invoke_agent triage", start_time=ns(day + "00Z"), attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"})
    ctx = trace.set_span_in_context(agent)

    def span(name, start, end, attrs, events=()):
        sp = tracer.start_span(name, context=ctx, start_time=ns(day + start + "Z"), attributes=attrs)
        for ev_name, ev_attrs, at in events:
            sp.add_event(ev_name, ev_attrs, timestamp=ns(day + at + "Z"))
        sp.end(end_time=ns(day + end + "Z"))

    span("search_memory incidents", "01", "02", {
        "gen_ai.operation.name": "search_memory", "gen_ai.memory.store.id": "incidents",
        "gen_ai.memory.query.text": "checkout-api 5xx",
        "gen_ai.memory.records": json.dumps([
            {"id": "mem-17", "content": "INC-4410: paymentservice connection pool exhausted after a deploy", "score": 0.82}])})
    span("retrieval runbooks", "02", "03", {
        "gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "runbooks",
        "gen_ai.retrieval.documents": json.dumps([
            {"id": "runbook-3", "content": "Runbook: restart paymentservice when its pool is exhausted", "score": 0.7}])})
    user = {"role": "user", "parts": [{"type": "text", "content": FEATURES_PAGE}]}
    call = {"type": "tool_call", "id": "call_m1", "name": "get_pod_status", "arguments": {"service": "paymentservice"}}
    span("chat gpt-5", "04", "06", {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-5",
        "gen_ai.input.messages": json.dumps([user]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "reasoning", "content": "Memory recalls INC-4410, so the root cause is paymentservice (50%) unless the pods look fine."},
            call]}])})
    result = "paymentservice: 3/3 pods Running; pool in use 200/200; waiters 1400"
    span("tools/call get_pod_status", "07", "08", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_pod_status", "gen_ai.tool.call.id": "call_m1",
        "gen_ai.tool.call.arguments": json.dumps({"service": "paymentservice"}), "gen_ai.tool.call.result": result,
        "mcp.method.name": "tools/call", "mcp.session.id": "sess-42", "network.transport": "pipe"},
        [("gen_ai.evaluation.result", {"gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.9,
                                       "gen_ai.evaluation.score.label": "relevant",
                                       "gen_ai.evaluation.explanation": "The pod status answers the question asked."}, "09")])
    history = [user, {"role": "assistant", "parts": [call]},
               {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_m1", "response": result}]}]
    span("chat gpt-5", "10", "13", {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-5",
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "text", "content": "The pool is exhausted: the root cause is paymentservice (80%)."}]}])},
        [("gen_ai.evaluation.result", {"gen_ai.evaluation.name": "groundedness", "gen_ai.evaluation.score.value": 0.4,
                                       "gen_ai.evaluation.score.label": "partially grounded",
                                       "gen_ai.evaluation.explanation": "The pool figure is cited; the deploy is not."}, "14")])
    span("create_memory incidents", "15", "16", {
        "gen_ai.operation.name": "create_memory", "gen_ai.memory.store.id": "incidents", "gen_ai.memory.record.id": "mem-18",
        "gen_ai.memory.records": json.dumps([{"id": "mem-18", "content": "INC-7731: remembered cause paymentservice-pool"}])})
    span("delete_memory incidents", "20", "21", {
        "gen_ai.operation.name": "delete_memory", "gen_ai.memory.store.id": "incidents", "gen_ai.memory.record.id": "mem-18"})
    agent.end(end_time=ns(day + "22Z"))
    return list(exporter.get_finished_spans())


# ---------------------------------------------------------------------------
# The bundled example: an SRE agent's whole run in the GenAI conventions.

SRE_SYSTEM = (
    "You are the on-call SRE agent for the checkout platform. Investigate incidents with the tools you have. "
    "State your current hypothesis as 'Hypothesis: root cause is <slug> (confidence <p>)' whenever it changes, "
    "and record what you believe about customer impact with record_belief."
)
SRE_PAGE = (
    "PagerDuty INC-7731 (P1): checkout-api HTTP 5xx rate 12.4% (threshold 2%) since 2026-04-14T02:05:12Z. "
    "Customers report failed payments. Find the root cause and mitigate."
)

# Each model call: (start, end, reasoning text, assistant text, [tool calls]);
# each tool call: (id, name, args, result, duration in seconds).
SRE_STEPS = [
    ("02:14:02", "02:14:05", None, "Starting with the active alerts for checkout-api and its dependencies.",
     [("call_a1", "get_alerts", {"service": "checkout-api", "include_dependencies": True},
       "FIRING checkout-api-5xx-rate since 02:05:12Z (12.4%); FIRING payments-db-cpu since 02:04:50Z (97%); "
       "FIRING payments-db-connections since 02:05:01Z (482/500)", 0.8)]),
    ("02:14:07", "02:14:12", "The database CPU alert fired 22 seconds before the 5xx alert, and the connection pool is nearly full.",
     "Hypothesis: root cause is payments-db-overload (confidence 0.6). The payments DB saturated just before checkout "
     "started failing. Checking the network path to it next.",
     [("call_a2", "network_check", {"from": "checkout-api", "to": "payments-db"},
       "packet loss checkout-api -> payments-db: az-a 0.0%, az-b 8.3%, az-c 0.1% (probe window 2026-04-13T22:00Z-23:00Z)", 2.2),
      ("call_a3", "record_belief", {"topic": "customer-impact", "claim": "about 12% of checkouts failing", "confidence": 0.8,
                                   "valid_from": "2026-04-14T02:05:12Z", "supported_by": ["call_a1"]}, "recorded", 0.1)]),
    ("02:14:17", "02:14:23", "8% packet loss in az-b would explain timeouts to the DB.",
     "Hypothesis: root cause is network-partition-az-b (confidence 0.55). Packet loss between checkout-api and the DB in az-b "
     "would produce exactly these timeouts. Confirming in the logs.",
     [("call_a4", "search_logs", {"service": "checkout-api", "level": "error", "since": "02:00"},
       "02:05:14Z ERROR checkout-api: upstream payments-db timeout after 3000ms (x1204, in all three zones); "
       "02:05:20Z ERROR checkout-api: order-history: query cancelled (x311)", 1.9)]),
    ("02:14:27", "02:14:31", "The timeouts are in all three zones, not only az-b, and the probe window was last night. "
     "The network does not fit; what is the database busy with?",
     "Timeouts appear in every zone, so I am looking at the database load and its slowest queries.",
     [("call_a5", "query_metrics", {"query": "payments-db cpu, active connections", "from": "01:50", "to": "02:14"},
       "payments-db cpu: 01:50 38%, 02:00 41%, 02:04 97%, 02:10 98%; active connections: 02:00 120, 02:05 482, 02:10 497", 1.4),
      ("call_a6", "get_slow_queries", {"database": "payments-db", "top": 3},
       "1. SELECT * FROM orders WHERE customer_id = $1 ORDER BY created_at DESC: 2.1 s avg, 38,400 calls since 02:03:45Z, "
       "seq scan on orders (no index on customer_id); 2. UPDATE payments SET status = $1 WHERE id = $2: 12 ms avg", 1.1)]),
    ("02:14:35", "02:14:38", None, "A new query pattern started at 02:03:45. Checking recent deploys.",
     [("call_a7", "get_deploys", {"service": "checkout-api", "since": "01:00"},
       "checkout-api v2.31.0 deployed 02:03:40Z by ci-bot (previous v2.30.4 at 2026-04-13T16:20Z)", 0.6)]),
    ("02:14:41", "02:14:48", "The slow query started 5 seconds after the v2.31.0 deploy. The DB overload is a symptom.",
     "Hypothesis: root cause is bad-deploy-v2-31-0 (confidence 0.8). The v2.31.0 release issues an unindexed query on "
     "orders.customer_id that saturates the payments DB.",
     [("call_a8", "get_diff", {"service": "checkout-api", "from": "v2.30.4", "to": "v2.31.0"},
       "v2.31.0: order-history endpoint now lists orders by customer_id; migration 0142 (index orders_customer_id_idx) "
       "is in the release notes but not applied: status pending", 1.0)]),
    ("02:14:52", "02:14:56", None, "Looking up the runbook before mitigating.",
     [("call_a9", "runbook_lookup", {"query": "bad deploy payments-db saturation"},
       "Runbook CHK-12: roll back checkout-api to the previous version; if the DB stays saturated, fail over to the replica.", 0.5)]),
    ("02:15:00", "02:15:03", None, "Rolling back checkout-api to v2.30.4 as the runbook says.",
     [("call_a10", "rollback_deploy", {"service": "checkout-api", "to": "v2.30.4"},
       "rollback of checkout-api to v2.30.4 started 02:15:04Z; 0/12 pods updated", 2.5)]),
    ("02:15:07", "02:15:10", None, "Waiting for the rollout to finish.",
     [("call_a11", "wait_for_rollout", {"service": "checkout-api", "timeout_s": 600},
       "rollout complete 02:19:41Z: 12/12 pods on v2.30.4", 271.0)]),
    ("02:19:45", "02:19:49", None, "Checking whether the errors and the database load recovered.",
     [("call_a12", "query_metrics", {"query": "checkout-api 5xx rate", "from": "02:10", "to": "02:19"},
       "checkout-api 5xx rate: 02:10 12.5%, 02:16 9.8%, 02:18 2.1%, 02:19 0.4%", 1.2),
      ("call_a13", "query_metrics", {"query": "payments-db cpu", "from": "02:10", "to": "02:19"},
       "payments-db cpu: 02:10 98%, 02:16 71%, 02:18 44%, 02:19 40%", 1.3)]),
    ("02:19:53", "02:20:00", "Errors and DB load fell as the old version rolled out, which confirms the release as the cause.",
     "Hypothesis: root cause is bad-deploy-v2-31-0 (confidence 0.95). Errors fell to 0.4% and DB CPU to 40% after the rollback.",
     [("call_a14", "record_belief", {"topic": "customer-impact", "claim": "checkouts recovered (0.4% failing)", "confidence": 0.9,
                                    "valid_from": "2026-04-14T02:19:00Z", "supported_by": ["call_a12"]}, "recorded", 0.1),
      ("call_a15", "create_ticket", {"title": "Apply migration 0142 before re-releasing v2.31.0", "team": "checkout"},
       "created JIRA CHK-4411", 0.7)]),
    ("02:20:05", "02:20:10", None,
     "Incident INC-7731 mitigated. Root cause: checkout-api v2.31.0 queried orders by customer_id without the index from "
     "migration 0142, saturating payments-db. Rolled back to v2.30.4 at 02:19:41Z; errors 0.4%. Follow-up: CHK-4411.",
     [("call_a16", "post_status", {"channel": "#inc-7731", "text": "Mitigated: rolled back checkout-api to v2.30.4; root cause bad deploy v2.31.0"},
       "posted to #inc-7731", 0.4)]),
    ("02:20:14", "02:20:16", None, "Done. Root cause is bad-deploy-v2-31-0; the incident is mitigated.", []),
]


def sre_run(seed=0x5E, steps=SRE_STEPS, model=("gpt-4.1", "gpt-4.1-2025-04-14"), start="02:14:00", end="02:20:17", tag="sre"):
    """The SRE agent's run: `steps` (as SRE_STEPS), by `model` (requested,
    answered), its agent span from `start` to `end` on the incident's day."""
    tp, exporter = provider(seed, "sre-agent")
    tracer = tp.get_tracer("sre_agent", "1.4.0")
    from opentelemetry import trace

    day = "2026-04-14T"
    requested, answered = model
    agent = tracer.start_span("invoke_agent sre-agent", start_time=ns(day + start + "Z"), attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "sre-agent", "gen_ai.agent.id": "agent_sre_01",
        "gen_ai.agent.description": "On-call SRE agent for the checkout platform", "gen_ai.provider.name": "openai",
        "gen_ai.request.model": requested})
    ctx = trace.set_span_in_context(agent)
    history = [{"role": "user", "parts": [{"type": "text", "content": SRE_PAGE}]}]
    system = json.dumps([{"type": "text", "content": SRE_SYSTEM}])
    tokens = 900
    for n, (call_start, call_end, reasoning, text, calls) in enumerate(steps):
        parts = []
        if reasoning:
            parts.append({"type": "reasoning", "content": reasoning})
        if text:
            parts.append({"type": "text", "content": text})
        for cid, name, args, _, _ in calls:
            parts.append({"type": "tool_call", "id": cid, "name": name, "arguments": args})
        output = [{"role": "assistant", "parts": parts, "finish_reason": "tool_call" if calls else "stop"}]
        tokens += 180 + 40 * n
        chat = tracer.start_span(f"chat {requested}", context=ctx, kind=SpanKind.CLIENT, start_time=ns(day + call_start + "Z"), attributes={
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": requested,
            "gen_ai.request.temperature": 0.2, "gen_ai.response.model": answered,
            "gen_ai.response.id": f"chatcmpl-{tag}{n:03d}", "gen_ai.usage.input_tokens": tokens, "gen_ai.usage.output_tokens": 60 + 9 * len(parts),
            "gen_ai.response.finish_reasons": ["tool_calls" if calls else "stop"],
            "gen_ai.system_instructions": system,
            "gen_ai.input.messages": json.dumps(history, ensure_ascii=False),
            "gen_ai.output.messages": json.dumps(output, ensure_ascii=False),
        })
        chat.end(end_time=ns(day + call_end + "Z"))
        history.append({"role": "assistant", "parts": parts})
        t = ns(day + call_end + "Z") + 300_000_000
        results = []
        for cid, name, args, result, seconds in calls:
            tool = tracer.start_span(f"execute_tool {name}", context=ctx, start_time=t, attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.type": "function",
                "gen_ai.tool.call.id": cid, "gen_ai.tool.call.arguments": json.dumps(args, ensure_ascii=False),
                "gen_ai.tool.call.result": result})
            t += int(seconds * 1e9)
            tool.end(end_time=t)
            t += 100_000_000
            results.append({"type": "tool_call_response", "id": cid, "response": result})
        if results:
            history.append({"role": "tool", "parts": results})
    agent.end(end_time=ns(day + end + "Z"))
    return list(exporter.get_finished_spans())


# The same incident run again by another model (a rerun against the recorded
# tool outputs, so each tool call it shares with the first run returned the
# same bytes). It never runs the network probe whose stale window misled the
# first run: it goes from the database load to the deploy.
def sre_steps_b():
    first = {c[0]: c for step in SRE_STEPS for c in step[4]}

    def again(old, new, **changes):
        _, name, args, result, seconds = first[old]
        return (new, name, dict(args, **changes), result, seconds)

    impact = dict(first["call_a3"][2], supported_by=["call_b1"])
    recovered = dict(first["call_a14"][2], supported_by=["call_b10"])
    return [
        ("03:10:02", "03:10:05", None, "Starting with the active alerts for checkout-api and its dependencies.",
         [again("call_a1", "call_b1")]),
        ("03:10:07", "03:10:12", "The database CPU alert fired 22 seconds before the 5xx alert, and the connection pool is nearly full.",
         "Hypothesis: root cause is payments-db-overload (confidence 0.6). The payments DB saturated just before checkout "
         "started failing. Looking at what the database is busy with.",
         [again("call_a5", "call_b2"), again("call_a6", "call_b3"),
          ("call_b4", "record_belief", impact, "recorded", 0.1)]),
        ("03:10:16", "03:10:20", "One query pattern dominates, and it started at 02:03:45Z.",
         "A new query pattern started at 02:03:45. Checking recent deploys.",
         [again("call_a7", "call_b5")]),
        ("03:10:23", "03:10:29", "The slow query started 5 seconds after the v2.31.0 deploy. The DB overload is a symptom.",
         "Hypothesis: root cause is bad-deploy-v2-31-0 (confidence 0.8). The v2.31.0 release issues an unindexed query on "
         "orders.customer_id that saturates the payments DB.",
         [again("call_a8", "call_b6")]),
        ("03:10:33", "03:10:36", None, "Looking up the runbook before mitigating.", [again("call_a9", "call_b7")]),
        ("03:10:40", "03:10:43", None, "Rolling back checkout-api to v2.30.4 as the runbook says.", [again("call_a10", "call_b8")]),
        ("03:10:47", "03:10:50", None, "Waiting for the rollout to finish.", [again("call_a11", "call_b9")]),
        ("03:15:25", "03:15:29", None, "Checking whether the errors and the database load recovered.",
         [again("call_a12", "call_b10"), again("call_a13", "call_b11")]),
        ("03:15:33", "03:15:40", "Errors and DB load fell as the old version rolled out, which confirms the release as the cause.",
         "Hypothesis: root cause is bad-deploy-v2-31-0 (confidence 0.95). Errors fell to 0.4% and DB CPU to 40% after the rollback.",
         [("call_b12", "record_belief", recovered, "recorded", 0.1), again("call_a15", "call_b13")]),
        ("03:15:45", "03:15:50", None,
         "Incident INC-7731 mitigated. Root cause: checkout-api v2.31.0 queried orders by customer_id without the index from "
         "migration 0142, saturating payments-db. Rolled back to v2.30.4; errors 0.4%. Follow-up: CHK-4411.",
         [again("call_a16", "call_b14")]),
        ("03:15:54", "03:15:56", None, "Done. Root cause is bad-deploy-v2-31-0; the incident is mitigated.", []),
    ]


def main():
    fixtures = "tests/fixtures/otlp"
    write(f"{fixtures}/genai.jsonl", collector_lines(genai_step("tool")))
    write(f"{fixtures}/genai-protobuf.json", protobuf_json(genai_step("tool")))
    write(f"{fixtures}/genai-events.jsonl", collector_lines(genai_events_step()))
    spans, records = genai_logs_step()
    write(f"{fixtures}/genai-logs.traces.jsonl", collector_lines(spans))
    write(f"{fixtures}/genai-logs.logs.jsonl", log_lines(records))
    for form in ("genai", "openinference", "openllmetry"):
        write(f"{fixtures}/recheck-{form}.jsonl", collector_lines(recheck_run(form)))
    write(f"{fixtures}/whole.jsonl", collector_lines(whole_step()))
    write(f"{fixtures}/features.jsonl", collector_lines(features_run()))
    write(f"{fixtures}/openinference.jsonl", collector_lines(openinference_step()))
    write(f"{fixtures}/openllmetry.jsonl", collector_lines(openllmetry_step()))
    write(f"{fixtures}/span-events.jsonl", collector_lines(genai_step("events")))
    write(f"{fixtures}/prose.jsonl", collector_lines(genai_step("prose")))
    write("datasets/sre-agent.otlp.jsonl", collector_lines(sre_run(), batch=12))
    write("datasets/sre-agent-rerun.otlp.jsonl", collector_lines(sre_run(
        seed=0x5F, steps=sre_steps_b(), model=("o3", "o3-2025-04-16"), start="03:10:00", end="03:15:57", tag="rerun"), batch=12))


if __name__ == "__main__":
    main()
