//! Audit artefacts written from a store: a Markdown report a person can read
//! without the TUI, a self-contained HTML report with a recorded-time slider,
//! and a topic's valid × recorded plane as a standalone SVG.
//! Both are built from the same queries the CLI and TUI use.

pub mod html;
pub mod markdown;
pub mod summary;
pub mod svg;
pub mod table;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("no topic {0}; the store's topics are: {1}")]
    UnknownTopic(String, String),
    #[error("no agent {0} holds beliefs about {1}")]
    UnknownAgent(String, String),
    /// The HTML report would not serve (too many events to embed).
    #[error("{0}")]
    Html(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl From<rusqlite::Error> for ExportError {
    fn from(e: rusqlite::Error) -> Self {
        ExportError::Store(e.into())
    }
}
