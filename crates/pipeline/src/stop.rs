//! How the workers of a run stop together: the first error is kept, and
//! every worker sees that the run failed or was interrupted.

use std::sync::{
    Mutex, MutexGuard,
    atomic::{AtomicBool, Ordering},
};

use crate::Error;

/// Locks `m`. A worker that panicked cannot leave the data half-updated
/// in a way that matters: the run is reported failed either way.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A run's failure and interrupt, shared by its workers.
pub(crate) struct Stop<'a> {
    failed: AtomicBool,
    error: Mutex<Option<Error>>,
    interrupt: Option<&'a AtomicBool>,
}

impl<'a> Stop<'a> {
    /// Not failed; interrupted when `interrupt` is set.
    pub(crate) fn new(interrupt: Option<&'a AtomicBool>) -> Self {
        Stop {
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
            interrupt,
        }
    }

    /// Fails the run with `e`, unless it failed already.
    pub(crate) fn fail(&self, e: Error) {
        let mut slot = lock(&self.error);
        if slot.is_none() {
            *slot = Some(e);
        }
        self.failed.store(true, Ordering::Relaxed);
    }

    /// Whether some worker failed.
    pub(crate) fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Marks the run failed without an error of its own (the error is
    /// returned to the caller instead).
    pub(crate) fn mark_failed(&self) {
        self.failed.store(true, Ordering::Relaxed);
    }

    /// Whether the run's interrupt flag is set.
    pub(crate) fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|i| i.load(Ordering::Relaxed))
    }

    /// Whether a worker goes on to its next task: not once the run
    /// failed, nor once it is interrupted (which fails it).
    pub(crate) fn go_on(&self) -> bool {
        if self.failed() {
            return false;
        }
        if self.interrupted() {
            self.fail(Error::Interrupted);
            return false;
        }
        true
    }

    /// The error the run failed with, if any.
    pub(crate) fn take(&self) -> Option<Error> {
        lock(&self.error).take()
    }
}
