//! How lists are packed into one text column: ids joined with the unit
//! separator (U+001F), which no id may contain. Shared by the writers and the
//! queries.

/// The separator between the ids of a packed list.
pub(crate) const SEP: char = '\u{1f}';

/// A packed list read back (`NULL`: empty).
pub(crate) fn split(joined: Option<String>) -> Vec<String> {
    joined
        .map(|s| s.split(SEP).map(str::to_owned).collect())
        .unwrap_or_default()
}
