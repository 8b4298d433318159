//! The fuzz harnesses' corpora replayed, and seeded mutations of valid
//! files.
//!
//! One test binary for the whole crate (each module was once a binary of
//! its own): linking one binary instead of several saves build time and disk.

mod corpora;
mod mutations;
