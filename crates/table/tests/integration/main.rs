//! Integration tests of strata-table, one module per area.

// Iceberg commits that change rows: position deletes, copy-on-write
// rewrites and compaction, read back by `live_files` and by pyiceberg.
mod iceberg_changes;
