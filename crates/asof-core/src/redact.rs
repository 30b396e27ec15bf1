//! Redaction before sharing (docs/review.md): secrets and personal data in
//! an agent's record — tool outputs, prompts, claims — replaced by
//! `[redacted:KIND]` in everything an export writes. Built-in kinds:
//!
//! | kind | what |
//! |---|---|
//! | `private-key` | a PEM private key block (to its END line, or to the end of a text cut short) |
//! | `bearer` | `Bearer TOKEN` (an HTTP authorization value) |
//! | `jwt` | a JSON Web Token (`eyJ….eyJ….…`) |
//! | `api-key` | OpenAI/Anthropic-style keys (`sk-…`, `sk-proj-…`, `sk-ant-…`) |
//! | `github-token` | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` tokens and `github_pat_…` |
//! | `aws-key` | AWS access key ids (`AKIA…`, `ASIA…`) |
//! | `email` | e-mail addresses |
//! | `ip` | IPv4 and IPv6 addresses (each checked as an address, so a clock time is not one) |
//!
//! plus any regular expression given (`pattern`). What is not detected (AWS
//! secret access keys, passwords in free text, other vendors' keys, names)
//! is said in docs/review.md: redaction narrows what leaks, it does not
//! prove nothing does.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// A kind of secret, as `[redacted:KIND]` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A PEM private key block.
    PrivateKey,
    /// An `Authorization: Bearer` token.
    Bearer,
    /// A JSON Web Token.
    Jwt,
    /// An API key in the `sk-…` form (OpenAI, Anthropic and others).
    ApiKey,
    /// A GitHub token (`ghp_…` and the like).
    GithubToken,
    /// An AWS access key id.
    AwsKey,
    /// An e-mail address.
    Email,
    /// An IPv4 or IPv6 address.
    Ip,
    /// A `--redact-pattern`.
    Pattern,
}

impl Kind {
    /// The kinds `--redact` replaces, in the order they are tried.
    pub const BUILT_IN: [Kind; 8] = [
        Kind::PrivateKey,
        Kind::Bearer,
        Kind::Jwt,
        Kind::ApiKey,
        Kind::GithubToken,
        Kind::AwsKey,
        Kind::Email,
        Kind::Ip,
    ];

    /// The kind as `[redacted:KIND]` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::PrivateKey => "private-key",
            Kind::Bearer => "bearer",
            Kind::Jwt => "jwt",
            Kind::ApiKey => "api-key",
            Kind::GithubToken => "github-token",
            Kind::AwsKey => "aws-key",
            Kind::Email => "email",
            Kind::Ip => "ip",
            Kind::Pattern => "pattern",
        }
    }

    fn pattern(self) -> &'static str {
        match self {
            Kind::PrivateKey => {
                r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)"
            }
            Kind::Bearer => r"\b[Bb]earer\s+[A-Za-z0-9\-._~+/]+=*",
            Kind::Jwt => r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
            Kind::ApiKey => r"\bsk-[A-Za-z0-9][A-Za-z0-9_-]{19,}",
            Kind::GithubToken => r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
            Kind::AwsKey => r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            Kind::Email => {
                r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}\b"
            }
            // Candidates, each then checked as an address ([`is_ip`]).
            Kind::Ip => r"[0-9A-Fa-f:.]*[:.][0-9A-Fa-f:.]*",
            Kind::Pattern => "",
        }
    }
}

/// Replaces secrets with `[redacted:KIND]` and counts the distinct values
/// it replaced, by kind. Shared by reference across the threads of an
/// export (the counts are behind a lock).
#[derive(Debug)]
pub struct Redactor {
    detectors: Vec<(Kind, Regex)>,
    /// The patterns as given, for the provenance.
    patterns: Vec<String>,
    seen: Mutex<BTreeMap<Kind, BTreeSet<String>>>,
}

impl Redactor {
    /// The built-in detectors (when `built_in`) and then `patterns` (regular
    /// expressions); an invalid pattern is refused in one sentence.
    pub fn new(built_in: bool, patterns: &[String]) -> Result<Redactor, String> {
        let mut detectors = Vec::new();
        if built_in {
            for kind in Kind::BUILT_IN {
                let re = Regex::new(kind.pattern())
                    .map_err(|e| format!("built-in detector {}: {e}", kind.as_str()))?;
                detectors.push((kind, re));
            }
        }
        for p in patterns {
            if p.is_empty() {
                return Err("--redact-pattern is empty".into());
            }
            let re = Regex::new(p).map_err(|e| {
                let first = e.to_string();
                let first = first.lines().last().unwrap_or_default().trim().to_owned();
                format!("--redact-pattern `{p}` is not a regular expression: {first}")
            })?;
            detectors.push((Kind::Pattern, re));
        }
        Ok(Redactor {
            detectors,
            patterns: patterns.to_vec(),
            seen: Mutex::new(BTreeMap::new()),
        })
    }

    /// `text` with every secret replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = std::borrow::Cow::Borrowed(text);
        for (kind, re) in &self.detectors {
            if !re.is_match(&out) {
                continue;
            }
            let source = out.clone().into_owned();
            let mut found: Vec<String> = Vec::new();
            let replaced = re.replace_all(&source, |caps: &regex::Captures| {
                let Some(m) = caps.get(0) else {
                    return String::new();
                };
                let hit = match kind {
                    Kind::Ip => ip_in(&source, m.start(), m.end()),
                    Kind::Bearer => bearer(m.as_str()).then(|| (m.start(), m.end())),
                    _ => (!m.as_str().is_empty()).then(|| (m.start(), m.end())),
                };
                match hit {
                    Some((from, to)) => {
                        found.push(source[from..to].to_owned());
                        format!(
                            "{}[redacted:{}]{}",
                            &source[m.start()..from],
                            kind.as_str(),
                            &source[to..m.end()]
                        )
                    }
                    None => m.as_str().to_owned(),
                }
            });
            if !found.is_empty() {
                if let Ok(mut seen) = self.seen.lock() {
                    seen.entry(*kind).or_default().extend(found);
                }
                out = std::borrow::Cow::Owned(replaced.into_owned());
            }
        }
        out.into_owned()
    }

    /// How many distinct values of each kind were replaced so far, by kind.
    pub fn counts(&self) -> Vec<(&'static str, usize)> {
        let seen = match self.seen.lock() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        seen.iter().map(|(k, v)| (k.as_str(), v.len())).collect()
    }

    /// The patterns given besides the built-in detectors.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// What a provenance says: the counts by kind, and that the source's
    /// hash is of the unredacted input.
    pub fn provenance_line(&self) -> String {
        let counts = self.counts();
        let said = if counts.is_empty() {
            "nothing found".to_owned()
        } else {
            counts
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let patterns = match self.patterns.len() {
            0 => String::new(),
            n => format!(" ({n} --redact-pattern given)"),
        };
        format!(
            "redacted (distinct values, each shown as [redacted:KIND]): {said}{patterns}; the source's SHA-256 is of the unredacted input"
        )
    }

    /// [`Redactor::provenance_line`] as JSON: `{"counts": {kind: n}, "patterns": n, "note"}`.
    pub fn provenance_json(&self) -> serde_json::Value {
        let counts: serde_json::Map<String, serde_json::Value> = self
            .counts()
            .into_iter()
            .map(|(k, n)| (k.to_owned(), serde_json::json!(n)))
            .collect();
        serde_json::json!({
            "counts": counts,
            "patterns": self.patterns.len(),
            "note": "distinct values replaced by [redacted:KIND]; the source's SHA-256 is of the unredacted input",
        })
    }
}

/// A `Bearer` match is a token, not prose ("the bearer of"): it has a digit
/// or is long.
fn bearer(hit: &str) -> bool {
    let token = hit.split_whitespace().nth(1).unwrap_or_default();
    token.len() >= 20 || (token.len() >= 8 && token.bytes().any(|b| b.is_ascii_digit()))
}

/// The IP address in the candidate `text[from..to]`, if it is one: standing
/// alone (no letter or digit beside it), trailing punctuation left out, and
/// parsing as an IPv4 or IPv6 address (so `12:10:00` and `1.2.3` are not).
fn ip_in(text: &str, from: usize, to: usize) -> Option<(usize, usize)> {
    let alone = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() && c != '_');
    let before = text[..from].chars().next_back();
    let after = text[to..].chars().next();
    if !alone(before) || !alone(after) {
        return None;
    }
    let cand = &text[from..to];
    let trimmed = cand.trim_end_matches(['.', ':']);
    let lead = trimmed.len() - trimmed.trim_start_matches('.').len();
    let addr = &trimmed[lead..];
    if !addr.bytes().any(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let ok = if addr.contains(':') {
        addr.parse::<std::net::Ipv6Addr>().is_ok()
    } else {
        addr.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && addr.parse::<std::net::Ipv4Addr>().is_ok()
    };
    ok.then(|| (from + lead, from + lead + addr.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One secret of each built-in kind (made up, in each kind's shape).
    pub const SECRETS: [(&str, &str); 9] = [
        ("api-key", "sk-proj-4f9Qb2LmZx8RtY6uVw3N"),
        ("api-key", "sk-ant-api03-Zk2Lq9Xv7Bn4Mw1Pr6Ty"),
        ("aws-key", "AKIAIOSFODNN7EXAMPLE"),
        ("github-token", "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"),
        (
            "jwt",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.c2lnbmF0dXJlLWhlcmU",
        ),
        ("email", "ana.oncall@example.com"),
        ("ip", "10.20.30.40"),
        ("ip", "2001:db8::8a2e:370:7334"),
        (
            "private-key",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\n-----END RSA PRIVATE KEY-----",
        ),
    ];

    #[test]
    fn each_built_in_kind_is_replaced_by_its_name() {
        let r = Redactor::new(true, &[]).expect("built-ins compile");
        for (kind, secret) in SECRETS {
            let text = format!("before {secret} after");
            let out = r.redact(&text);
            assert_eq!(out, format!("before [redacted:{kind}] after"), "{secret}");
        }
        let text = "Authorization: Bearer abc123def456ghi789";
        assert_eq!(r.redact(text), "Authorization: [redacted:bearer]");
        let counts: BTreeMap<&str, usize> = r.counts().into_iter().collect();
        assert_eq!(counts.get("api-key"), Some(&2));
        assert_eq!(counts.get("ip"), Some(&2));
        assert_eq!(counts.get("bearer"), Some(&1));
    }

    #[test]
    fn times_versions_and_prose_are_left_alone() {
        let r = Redactor::new(true, &[]).expect("built-ins compile");
        for text in [
            "2026-03-03T12:10:00Z",
            "at 12:10:00 the rollback ran",
            "checkout-service v4.12 and 1.2.3",
            "std::fs::read and Foo::bar",
            "the bearer of bad news",
            "version 1.2.3.4.5 of the chart",
            "a ratio of 3:1",
        ] {
            assert_eq!(r.redact(text), text);
        }
        assert!(r.counts().is_empty());
    }

    #[test]
    fn a_private_key_cut_short_is_redacted_to_the_end() {
        let r = Redactor::new(true, &[]).expect("built-ins compile");
        let text = "key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA…";
        assert_eq!(r.redact(text), "key: [redacted:private-key]");
    }

    #[test]
    fn a_pattern_is_its_own_kind_and_a_bad_one_is_one_sentence() {
        let r = Redactor::new(false, &["cust-[0-9]{6}".into()]).expect("compiles");
        assert_eq!(
            r.redact("for cust-123456 only"),
            "for [redacted:pattern] only"
        );
        assert_eq!(r.redact("ana@example.com"), "ana@example.com");
        let e = Redactor::new(false, &["(unclosed".into()]).expect_err("refused");
        assert!(
            e.starts_with("--redact-pattern `(unclosed` is not a regular expression"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }
}
