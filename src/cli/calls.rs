//! `asof calls SOURCE`: a trace's model calls in order — when each started,
//! the evidence first in front of the model at it, what its output said and
//! the tool calls it made (design.md §5). "What had the model read before its
//! third call?" is the `read_new` of calls 1 and 2.

use super::{CliError, FormatArg, OutputFormat, SourceArg};
use crate::export::table::Table;
use crate::model::ModelCall;
use crate::time;
use clap::Args;
use std::io::Write;

#[derive(Debug, Args)]
pub struct CallsArgs {
    #[command(flatten)]
    pub source: SourceArg,
    #[command(flatten)]
    pub format: FormatArg,
}

pub fn run(args: CallsArgs, out: &mut impl Write) -> Result<(), CliError> {
    let store = args.source.open_snapshot()?;
    let calls = match crate::query::model_calls(&store)? {
        Some(calls) => calls,
        None => {
            return Err(CliError::Input(format!(
                "{}: has no model calls: it was not read from an OpenTelemetry trace (`asof calls` takes a trace, or a store `asof import otlp` wrote)",
                store.label()
            )));
        }
    };
    match args.format.format {
        OutputFormat::Json => {
            let calls: Vec<serde_json::Value> = calls.iter().map(call_json).collect();
            let v = serde_json::json!({"source": store.label(), "calls": calls});
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&v).map_err(|e| CliError::Runtime(e.to_string()))?
            )?;
            Ok(())
        }
        format => {
            let several = calls
                .iter()
                .any(|c| calls.first().is_some_and(|f| f.agent != c.agent));
            // The agent column only when calls of several agents are listed.
            let mut head = vec!["N", "STARTED", "TOOK"];
            if several {
                head.push("AGENT");
            }
            head.extend(["MODEL", "READ NEW", "SAID", "TOOL CALLS"]);
            let mut t = Table::new(head);
            for c in &calls {
                let mut row = vec![
                    c.n.to_string(),
                    time::format(c.started),
                    time::format_duration(c.ended - c.started),
                ];
                if several {
                    row.push(c.agent.clone());
                }
                row.extend([
                    c.model.clone().unwrap_or_else(|| "-".into()),
                    list(&c.read_new),
                    list(&c.said),
                    if c.tool_calls.is_empty() {
                        "-".into()
                    } else {
                        c.tool_calls
                            .iter()
                            .map(|t| match &t.evidence {
                                Some(e) => format!("{} → {e}", t.name),
                                None => t.name.clone(),
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                ]);
                t.row(row);
            }
            let md = format == OutputFormat::Md;
            writeln!(
                out,
                "{}{} — {} model call(s) in order; READ NEW: the evidence first in front of the model at that call",
                if md { "## " } else { "" },
                store.label(),
                calls.len()
            )?;
            if md {
                writeln!(out)?;
            }
            write!(out, "{}", if md { t.markdown() } else { t.text() })?;
            Ok(())
        }
    }
}

fn list(ids: &[String]) -> String {
    if ids.is_empty() {
        "-".into()
    } else {
        ids.join(",")
    }
}

/// One call as `asof calls --format json` gives it.
fn call_json(c: &ModelCall) -> serde_json::Value {
    serde_json::json!({
        "n": c.n,
        "agent": c.agent,
        "trace": c.trace,
        "span": c.span,
        "started": time::format(c.started),
        "ended": time::format(c.ended),
        "model": c.model,
        "read_new": c.read_new,
        "said": c.said,
        "tool_calls": c.tool_calls.iter().map(|t| serde_json::json!({
            "id": t.id,
            "name": t.name,
            "evidence": t.evidence,
        })).collect::<Vec<_>>(),
    })
}
