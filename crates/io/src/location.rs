//! Paths and URLs to object stores.
