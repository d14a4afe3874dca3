//! A cooperative stop for a run in progress: the service cancels a run, or a worker shuts
//! down, from another thread while the core simulates without the GIL. The run checks the
//! signal every few thousand events (`sim::STOP_CHECK_EVERY`), so a stop takes effect within
//! milliseconds at ordinary event costs, and costs one relaxed load per check otherwise.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag shared between the run and whoever may stop it. Clones share the flag.
#[derive(Clone, Debug, Default)]
pub struct StopSignal(Arc<AtomicBool>);

impl StopSignal {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every run holding this signal to stop at its next check. Idempotent.
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_sees_the_stop_of_the_original() {
        let signal = StopSignal::new();
        let held_by_the_run = signal.clone();
        assert!(!held_by_the_run.is_stopped());
        signal.stop();
        signal.stop();
        assert!(held_by_the_run.is_stopped());
    }
}
