// Exports one small agent run to two `asof serve` receivers with the real
// OpenTelemetry JavaScript SDK: the same spans through its OTLP/HTTP JSON
// exporter (@opentelemetry/exporter-trace-otlp-http) to the first and its
// protobuf exporter (@opentelemetry/exporter-trace-otlp-proto) to the
// second, three spans a request, in the order they ended. (The Python SDK
// has no JSON exporter; this one is the JSON an instrumented Node agent
// sends.)
//
//     OTEL_NODE=target/otel-node node tests/sdk/export_json_to_serve.mjs http://127.0.0.1:A http://127.0.0.1:B
//
// Needs the packages `.ci/run` installs with npm into target/otel-node
// (OTEL_NODE: that prefix; they are loaded from its node_modules).
// The run, in the OpenTelemetry GenAI conventions: an invoke_agent span; a
// model call that asks for get_logs; the get_logs tool span; a model call
// that reads its result and calls record_belief(root-cause = db-pool-exhausted).

import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.resolve(process.env.OTEL_NODE ?? ".", "package.json"));
const { context, trace, SpanKind } = require("@opentelemetry/api");
const {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} = require("@opentelemetry/sdk-trace-base");
const { resourceFromAttributes } = require("@opentelemetry/resources");
const { OTLPTraceExporter: JsonExporter } = require("@opentelemetry/exporter-trace-otlp-http");
const { OTLPTraceExporter: ProtoExporter } = require("@opentelemetry/exporter-trace-otlp-proto");

const [jsonBase, protoBase] = process.argv.slice(2);
if (!jsonBase || !protoBase) {
  console.error("usage: export_json_to_serve.mjs JSON_ENDPOINT PROTOBUF_ENDPOINT");
  process.exit(2);
}

const memory = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ "service.name": "node-sre-agent" }),
  spanProcessors: [new SimpleSpanProcessor(memory)],
});
const tracer = provider.getTracer("node-agent", "1.0.0");

// Instants of the run: 2026-01-01T00:00:00Z plus `s` seconds.
const base = Date.UTC(2026, 0, 1);
const at = (s) => new Date(base + s * 1000);
const json = (v) => JSON.stringify(v);

const question = { role: "user", parts: [{ type: "text", content: "Why is checkout failing?" }] };
const askLogs = {
  role: "assistant",
  parts: [{ type: "tool_call", id: "call_logs", name: "get_logs", arguments: { service: "checkout" } }],
};
const logs = "payment-db: connection pool exhausted (50/50 in use)";
const result = {
  role: "tool",
  parts: [{ type: "tool_call_response", id: "call_logs", response: logs }],
};
const belief = {
  topic: "root-cause",
  claim: "db-pool-exhausted",
  confidence: 0.8,
  rationale: "the payment database's pool is exhausted",
};

const root = tracer.startSpan(
  "invoke_agent sre-bot",
  {
    kind: SpanKind.INTERNAL,
    startTime: at(0),
    attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "sre-bot" },
  },
);
const inRoot = trace.setSpan(context.active(), root);
const chat = (start, end, input, output) => {
  const span = tracer.startSpan(
    "chat gpt-test",
    {
      kind: SpanKind.CLIENT,
      startTime: at(start),
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.input.messages": json(input),
        "gen_ai.output.messages": json(output),
      },
    },
    inRoot,
  );
  span.end(at(end));
};
const tool = (name, id, start, end, args, out) => {
  const span = tracer.startSpan(
    `execute_tool ${name}`,
    {
      kind: SpanKind.INTERNAL,
      startTime: at(start),
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": id,
        "gen_ai.tool.call.arguments": json(args),
        "gen_ai.tool.call.result": out,
      },
    },
    inRoot,
  );
  span.end(at(end));
};

chat(1, 3, [question], [askLogs]);
tool("get_logs", "call_logs", 3, 5, { service: "checkout" }, logs);
chat(6, 8, [question, askLogs, result], [
  {
    role: "assistant",
    parts: [{ type: "tool_call", id: "call_belief", name: "record_belief", arguments: belief }],
  },
]);
tool("record_belief", "call_belief", 8, 9, belief, "recorded");
root.end(at(10));

const spans = memory.getFinishedSpans();
const send = (exporter, batch) =>
  new Promise((resolve, reject) =>
    exporter.export(batch, (r) =>
      r.code === 0 ? resolve() : reject(r.error ?? new Error(`export failed: ${r.code}`)),
    ),
  );
for (const [exporter, what] of [
  [new JsonExporter({ url: `${jsonBase.replace(/\/$/, "")}/v1/traces` }), "json"],
  [new ProtoExporter({ url: `${protoBase.replace(/\/$/, "")}/v1/traces` }), "protobuf"],
]) {
  for (let i = 0; i < spans.length; i += 3) {
    await send(exporter, spans.slice(i, i + 3));
  }
  await exporter.shutdown();
  console.log(`${spans.length} spans exported as ${what}`);
}
