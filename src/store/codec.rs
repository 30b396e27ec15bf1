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

/// Instants (µs) packed as decimal numbers joined with commas.
pub(crate) fn join_instants(list: &[i64]) -> String {
    let text: Vec<String> = list.iter().map(i64::to_string).collect();
    text.join(",")
}

/// A packed list of instants read back; a malformed one is a damaged store.
pub(crate) fn instants(joined: &str) -> rusqlite::Result<Vec<i64>> {
    joined
        .split(',')
        .map(|t| {
            t.parse().map_err(|_| {
                rusqlite::Error::FromSqlConversionFailure(
                    0,
                    rusqlite::types::Type::Text,
                    format!("not a list of instants: {joined:?}").into(),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn instants_round_trip_and_garbage_is_refused() {
        let list = [-5, 0, 1_767_225_621_000_000];
        assert_eq!(super::instants(&super::join_instants(&list)).unwrap(), list);
        assert!(super::instants("1,x").is_err());
    }
}
