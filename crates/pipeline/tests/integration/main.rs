//! Generating files and verifying them, through the public API.
//!
//! One test binary for the whole crate (each module was once a binary of
//! its own): linking one binary instead of several saves build time and disk.

mod flow;
mod generate;
mod layout;
mod verify;
