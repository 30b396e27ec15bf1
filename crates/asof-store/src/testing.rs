//! Stores of generated logs for the unit tests (`asof_synth` writes the logs).

use asof_synth::{GenConfig, log_of};

/// A store in memory of the log `asof_synth::generate` writes for `config`.
pub(crate) fn store_of(config: GenConfig) -> crate::store::Store {
    let (log, replay) = log_of(config);
    crate::store::Store::in_memory("gen", &log, &replay).expect("store")
}
