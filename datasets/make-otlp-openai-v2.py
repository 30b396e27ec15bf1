#!/usr/bin/env python3
"""A ReAct loop run through the real openai client, instrumented by the real
opentelemetry-instrumentation-openai-v2 2.3b0 (message content captured), with
the model answering from a mock HTTP transport. The agent re-checks a node and
gets byte-identical output twice. The instrumentation writes its spans and,
as every instrumentation on the older GenAI conventions does, all message
content as OTLP log records; both are encoded by the OTLP exporter's own
encoders and written as the Collector's file exporter writes them.

    pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-common \
        opentelemetry-instrumentation-openai-v2==2.3b0 openai "wrapt<2"
    python3 datasets/make-otlp-openai-v2.py

Writes tests/fixtures/otlp/openai-v2.traces.jsonl and openai-v2.logs.jsonl
(times are the run's own, so they differ on every run).
"""
import base64
import json
import os

import httpx

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "fixtures", "otlp")
os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
from opentelemetry import trace, _logs
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from google.protobuf.json_format import MessageToDict

res = Resource.create({"service.name": "rca-agent"})
tp = TracerProvider(resource=res); spans = InMemorySpanExporter(); tp.add_span_processor(SimpleSpanProcessor(spans))
lp = LoggerProvider(resource=res); logs = InMemoryLogRecordExporter(); lp.add_log_record_processor(SimpleLogRecordProcessor(logs))
trace.set_tracer_provider(tp); _logs.set_logger_provider(lp)
OpenAIInstrumentor().instrument(tracer_provider=tp, logger_provider=lp)
import openai

turns = [
    {"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "describe_node", "arguments": "{\"node\": \"node-5\"}"}}]},
    {"content": "Hypothesis: root cause is node-5 (40%). Re-checking.", "tool_calls": [{"id": "call_2", "type": "function", "function": {"name": "describe_node", "arguments": "{\"node\": \"node-5\"}"}}]},
    {"content": "Hypothesis: root cause is paymentservice (70%)."},
]
n = {"i": 0}
def handler(request):
    t = turns[n["i"]]; n["i"] += 1
    msg = {"role": "assistant", "content": t.get("content")}
    if "tool_calls" in t: msg["tool_calls"] = t["tool_calls"]
    body = {"id": f"chatcmpl-{n['i']}", "object": "chat.completion", "created": 1772442600 + n["i"], "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if "tool_calls" in t else "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}
    return httpx.Response(200, json=body)
client = openai.OpenAI(api_key="sk-test", base_url="http://mock/v1", http_client=httpx.Client(transport=httpx.MockTransport(handler)))
tracer = tp.get_tracer("rca")
messages = [{"role": "system", "content": "You find root causes."}, {"role": "user", "content": "checkout 5xx since 09:05; paymentservice pool alerts firing"}]
with tracer.start_as_current_span("invoke_agent rca", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "rca"}):
    for step in range(3):
        r = client.chat.completions.create(model="gpt-4o", messages=messages)
        m = r.choices[0].message
        entry = {"role": "assistant", "content": m.content}
        if m.tool_calls:
            entry["tool_calls"] = [tc.model_dump() for tc in m.tool_calls]
        messages.append(entry)
        for tc in m.tool_calls or []:
            with tracer.start_as_current_span(f"execute_tool {tc.function.name}", attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tc.function.name, "gen_ai.tool.call.id": tc.id}):
                messages.append({"role": "tool", "tool_call_id": tc.id, "content": "node-5: Ready; pods 14/14"})
def hexify(d, kind):
    for r in d[kind]:
        for s in r["scopeSpans" if kind == "resourceSpans" else "scopeLogs"]:
            for x in s["spans" if kind == "resourceSpans" else "logRecords"]:
                for k in ("traceId", "spanId", "parentSpanId"):
                    if k in x and x[k]: x[k] = base64.b64decode(x[k]).hex()
    return d
open(os.path.join(OUT, "openai-v2.traces.jsonl"), "w").write(json.dumps(hexify(MessageToDict(encode_spans(spans.get_finished_spans())), "resourceSpans")) + "\n")
open(os.path.join(OUT, "openai-v2.logs.jsonl"), "w").write(json.dumps(hexify(MessageToDict(encode_logs(logs.get_finished_logs())), "resourceLogs")) + "\n")
print(len(spans.get_finished_spans()), "spans", len(logs.get_finished_logs()), "log records")
