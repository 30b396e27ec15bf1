//! Audit artefacts written from a store: a Markdown report a person can read
//! without the TUI, a self-contained HTML report with a recorded-time slider,
//! and a topic's valid × recorded plane as a standalone SVG.
//! Both are built from the same queries the CLI and TUI use.

pub mod compare;
pub mod findings;
pub mod html;
pub mod markdown;
pub mod provenance;
pub mod summary;
pub mod svg;
pub mod table;

pub use provenance::{Divergence, Origin, Provenance};

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A topic the store does not have (the id, and the store's topics).
    #[error("no topic {0}; the store's topics are: {1}")]
    UnknownTopic(String, String),
    /// An agent that holds no beliefs about the topic (the agent, the topic).
    #[error("no agent {0} holds beliefs about {1}")]
    UnknownAgent(String, String),
    /// The HTML report would not serve (too many events to embed).
    #[error("{0}")]
    Html(String),
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] asof_store::store::StoreError),
}

/// Writes `text` to `path` atomically (a temporary file beside it, renamed
/// over it), with the usual file mode rather than a temporary file's 0600:
/// a report is for sharing.
pub fn write_shared(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => std::path::PathBuf::from("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".asof-export-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut tmp = builder.tempfile_in(&dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
