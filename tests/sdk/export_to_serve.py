"""Exports the bundled SRE run to `asof serve` with the real OpenTelemetry
Python SDK's OTLP/HTTP span exporter (protobuf), as an instrumented agent's
BatchSpanProcessor would: batches of 12 spans, in the order they ended.

    python tests/sdk/export_to_serve.py http://127.0.0.1:PORT

The spans are the ones datasets/make-otlp.py writes to
datasets/sre-agent.otlp.jsonl (same ids, same times), made by its sre_run().
"""

import importlib.util
import os
import sys

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("make_otlp", os.path.join(ROOT, "datasets", "make-otlp.py"))
make_otlp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_otlp)

endpoint = sys.argv[1].rstrip("/") + "/v1/traces"
exporter = OTLPSpanExporter(endpoint=endpoint, timeout=30)
spans = make_otlp.sre_run()
for i in range(0, len(spans), 12):
    result = exporter.export(spans[i : i + 12])
    if result != SpanExportResult.SUCCESS:
        sys.exit(f"batch {i // 12 + 1}: {result}")
exporter.shutdown()
print(len(spans), "spans exported")
