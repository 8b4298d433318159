//! Projected Arrow IPC file reads.
