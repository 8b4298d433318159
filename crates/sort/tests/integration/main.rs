//! The k-way merge against brute force, and corrupt inputs.
//!
//! One test binary for the whole crate (each module was once a binary of
//! its own): linking one binary instead of several saves build time and disk.

mod corrupt;
mod merge;
