//! `--rules RULES.yaml`: assertions read from the prose of agents that state
//! their hypotheses only in text (design.md §7).
//!
//! ```yaml
//! rules:
//!   - topic: root-cause
//!     in: [assistant, reasoning]        # assistant text, reasoning parts, tool_args, final
//!     pattern: "root cause (?:is|:) (?P<claim>[a-z0-9-]+)"
//!     confidence: 0.5                   # or a named group `confidence`
//! ```
//!
//! Patterns are Rust `regex` syntax: linear-time matching, so a hostile
//! pattern cannot hang an import.

use asof_core::dataset::{DatasetError, DatasetErrors, Location};
use regex::Regex;
use serde::Deserialize;

/// Where in a model call's output a rule looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Within {
    /// The assistant's text parts.
    Assistant,
    /// Reasoning (thinking) parts.
    Reasoning,
    /// The arguments of the tool calls it makes.
    ToolArgs,
    /// The assistant's text in a call that makes no tool call: an answer.
    Final,
    /// What the agent wrote to its memory (`create_memory`, `update_memory`,
    /// `upsert_memory` spans' records).
    Memory,
}

impl Within {
    /// Where the rule looks, as a rules file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Within::Assistant => "assistant text",
            Within::Reasoning => "reasoning",
            Within::ToolArgs => "tool arguments",
            Within::Final => "final answer",
            Within::Memory => "memory write",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRules {
    rules: Vec<RawRule>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    topic: String,
    #[serde(rename = "in", default)]
    within: Option<Vec<Within>>,
    pattern: String,
    #[serde(default)]
    confidence: Option<f64>,
}

/// A match's named group `confidence`: 0–1, or a percentage.
pub fn confidence_of(caps: &regex::Captures) -> Option<f64> {
    caps.name("confidence")
        .and_then(|c| c.as_str().trim().trim_end_matches('%').parse::<f64>().ok())
        .map(|c| if c > 1.0 { c / 100.0 } else { c })
        .filter(|c| (0.0..=1.0).contains(c))
}

/// One rule, compiled.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The topic the claims it finds answer.
    pub topic: String,
    /// Where it looks.
    pub within: Vec<Within>,
    /// The pattern; its named group `claim` is the claim, and a group `confidence` its
    /// confidence.
    pub regex: Regex,
    /// The confidence of what it finds, when the match has no `confidence` group; when
    /// neither says, the confidence is assumed (and marked so).
    pub confidence: Option<f64>,
}

/// Reads a rules file; every error names the file and the rule.
pub fn parse(file: &str, text: &str) -> Result<Vec<Rule>, DatasetErrors> {
    let raw: RawRules = serde_yaml::from_str(text).map_err(|e| {
        let location = e.location().map(|l| Location::at(l.line(), l.column()));
        DatasetErrors(vec![DatasetError {
            file: file.to_owned(),
            location,
            event: None,
            message: e.to_string(),
        }])
    })?;
    let mut errors = Vec::new();
    let mut rules = Vec::new();
    for (i, r) in raw.rules.into_iter().enumerate() {
        let at = Some(Location::record("rule", i + 1));
        let mut bad = |message: String| {
            errors.push(DatasetError {
                file: file.to_owned(),
                location: at,
                event: None,
                message,
            })
        };
        if r.topic.trim().is_empty() {
            bad("topic is empty".into());
            continue;
        }
        let regex = match Regex::new(&r.pattern) {
            Ok(re) => re,
            Err(e) => {
                bad(format!("pattern does not compile: {e}"));
                continue;
            }
        };
        if !regex.capture_names().any(|n| n == Some("claim")) {
            bad("pattern has no named group `claim` (write `(?P<claim>…)`)".into());
            continue;
        }
        if let Some(c) = r.confidence
            && !(0.0..=1.0).contains(&c)
        {
            bad(format!("confidence {c} is not in [0, 1]"));
            continue;
        }
        rules.push(Rule {
            topic: r.topic,
            within: r.within.unwrap_or_else(|| vec![Within::Assistant]),
            regex,
            confidence: r.confidence,
        });
    }
    if errors.is_empty() {
        Ok(rules)
    } else {
        Err(DatasetErrors(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_compile_and_refuse_with_their_location() {
        let ok = parse(
            "r.yaml",
            "rules:\n  - topic: rc\n    in: [assistant, final]\n    pattern: 'cause is (?P<claim>\\w+)'\n",
        )
        .unwrap();
        assert_eq!(ok[0].within, vec![Within::Assistant, Within::Final]);
        let bad = parse(
            "r.yaml",
            "rules:\n  - topic: rc\n    pattern: '(unclosed'\n  - topic: rc\n    pattern: 'no group'\n  - topic: rc\n    pattern: '(?P<claim>x)'\n    confidence: 2\n",
        )
        .unwrap_err();
        let text = bad.to_string();
        assert!(
            text.contains("r.yaml rule 1: pattern does not compile"),
            "{text}"
        );
        assert!(
            text.contains("r.yaml rule 2: pattern has no named group `claim`"),
            "{text}"
        );
        assert!(
            text.contains("r.yaml rule 3: confidence 2 is not in [0, 1]"),
            "{text}"
        );
        let unknown = parse(
            "r.yaml",
            "rules:\n  - topic: rc\n    in: [prose]\n    pattern: x\n",
        )
        .unwrap_err()
        .to_string();
        assert!(unknown.contains("r.yaml:3:"), "{unknown}");
    }
}
