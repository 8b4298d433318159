//! The fuzz harnesses' corpora replayed, and seeded mutations of valid
//! files.
//!
//! One test binary for the whole crate (each module was once a binary of
//! its own): linking one binary instead of several saves build time and disk.

mod corpora;
mod mutations;

/// The guard counts the decoder panics it catches in one process-wide
/// counter, and the mutation tests reach such panics on purpose; every test
/// that reads the counter holds this lock, so that one test never counts
/// another's.
static GUARD_COUNTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds [`GUARD_COUNTER`] (a test that failed while holding it does not
/// poison it for the others).
fn guard_counter() -> std::sync::MutexGuard<'static, ()> {
    GUARD_COUNTER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
