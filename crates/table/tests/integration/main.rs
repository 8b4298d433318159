//! strata-table's integration tests: one binary (every test binary links
//! all the crate's dependencies), a module per area.

// Delta tables changed copy-on-write (deletes, updates, compaction) with
// their change data feed, conflicts and checkpoints: read back by
// strata's replay and, given a Python with `deltalake`, by delta-rs.
mod delta_changes;
// Iceberg commits that change rows: position deletes, copy-on-write
// rewrites and compaction, read back by `live_files` and by pyiceberg.
mod iceberg_changes;
