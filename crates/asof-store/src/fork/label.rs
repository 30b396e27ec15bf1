//! What a fork store says it is (design.md §8): every output made from one carries
//! the banner `WHAT-IF — replay of PARENT without E15 (policy …), not the
//! record` and its lineage, so a what-if is never mistaken for the record.

use crate::store::{Store, StoreError};
use serde::Serialize;

/// How a fork's lineage names the review that chose what it removed:
/// `FILE (SHA-256 HEX)`.
pub fn review_named(name: &str, sha256: &str) -> String {
    format!("{name} (SHA-256 {sha256})")
}

/// The review's name alone, from [`review_named`]'s words (a banner's).
pub fn review_name(named: &str) -> &str {
    named.split(" (SHA-256 ").next().unwrap_or(named)
}

/// A fork's lineage as its store records it (see [`super::lineage`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WhatIf {
    /// The parent as the user named it (a path, or the bundled demo).
    pub parent: String,
    /// The parent's SHA-256 when the fork was made.
    pub parent_sha256: String,
    /// The evidence the replay went without.
    pub removed: Vec<String>,
    /// The fork policy's full text.
    pub policy: String,
    /// When the fork was made (RFC 3339), when the store says.
    pub created_at: Option<String>,
    /// The review whose rejections chose the evidence removed, when one did.
    pub review: Option<String>,
}

impl WhatIf {
    /// The lineage of `store`, or `None` when it is not a fork.
    pub fn of(store: &Store) -> Result<Option<WhatIf>, StoreError> {
        let Some(parent) = store.meta("fork_parent")? else {
            return Ok(None);
        };
        let removed = store
            .meta("fork_removed")?
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        Ok(Some(WhatIf {
            parent,
            parent_sha256: store.meta("fork_parent_sha256")?.unwrap_or_default(),
            removed,
            policy: store.meta("fork_policy")?.unwrap_or_default(),
            created_at: store.meta("fork_created_at")?,
            review: store.meta("fork_review")?,
        }))
    }

    /// The policy's short name: `asof-fork/1`.
    pub fn policy_name(&self) -> &str {
        self.policy
            .split_once(':')
            .map_or(self.policy.as_str(), |(name, _)| name)
    }

    /// `WHAT-IF — replay of PARENT without E15 (policy asof-fork/1), not the record`.
    pub fn banner(&self) -> String {
        // A what-if of a review names the review (its hash is in the lineage).
        let (of, why) = match &self.review {
            Some(review) => (
                format!(" of review {}", review_name(review)),
                "what the review rejected; ",
            ),
            None => (String::new(), ""),
        };
        format!(
            "WHAT-IF{of} — replay of {} without {} ({why}policy {}), not the record",
            self.parent,
            self.removed.join(", "),
            self.policy_name()
        )
    }

    /// `parent SHA-256 9f…, removed E15, made 2026-03-20T10:00:00Z`.
    pub fn lineage(&self) -> String {
        let sha = if self.parent_sha256.is_empty() {
            "unknown"
        } else {
            &self.parent_sha256
        };
        let mut line = format!(
            "parent {} (SHA-256 {sha}), removed {}",
            self.parent,
            self.removed.join(", ")
        );
        if let Some(at) = &self.created_at {
            line.push_str(&format!(", made {at}"));
        }
        if let Some(review) = &self.review {
            line.push_str(&format!(", chosen by review {review}"));
        }
        line
    }

    /// The `what_if` object of a JSON output: the lineage and the banner.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "banner": self.banner(),
            "parent": self.parent,
            "parent_sha256": self.parent_sha256,
            "removed": self.removed,
            "policy": self.policy,
            "created_at": self.created_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::WhatIf;

    #[test]
    fn the_banner_names_parent_removed_and_policy() {
        let w = WhatIf {
            parent: "outage.db".into(),
            parent_sha256: "ab12".into(),
            removed: vec!["E15".into(), "E21".into()],
            policy: super::super::POLICY.into(),
            created_at: Some("2026-03-20T10:00:00Z".into()),
            review: None,
        };
        assert_eq!(
            w.banner(),
            "WHAT-IF — replay of outage.db without E15, E21 (policy asof-fork/1), not the record"
        );
        assert_eq!(
            w.lineage(),
            "parent outage.db (SHA-256 ab12), removed E15, E21, made 2026-03-20T10:00:00Z"
        );
        // A what-if of a review names the review; its hash is in the lineage.
        let of_review = WhatIf {
            review: Some("ana.review.jsonl (SHA-256 cd34)".into()),
            ..w.clone()
        };
        assert_eq!(
            of_review.banner(),
            "WHAT-IF of review ana.review.jsonl — replay of outage.db without E15, E21 (what the review rejected; policy asof-fork/1), not the record"
        );
        assert!(
            of_review
                .lineage()
                .ends_with(", chosen by review ana.review.jsonl (SHA-256 cd34)")
        );
        assert_eq!(w.json()["removed"][1], "E21");
    }
}
