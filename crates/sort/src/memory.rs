//! What a sort needs in memory: the in-memory size of batches, the
//! process's resident set, and the floor a sort of given inputs cannot go
//! below whatever its limit ([`memory_floor`]).

use std::fs;
use strata_store::FromStore as _;

use arrow_array::RecordBatch;
use strata_parquet::{Compression, Format};

use crate::{
    config::{SortConfig, expand_inputs},
    error::Error,
    external::ZSTD_CONTEXT_BYTES,
};

/// The in-memory size of `batches`.
pub(crate) fn memory(batches: &[RecordBatch]) -> u64 {
    batches
        .iter()
        .map(|b| b.get_array_memory_size() as u64)
        .sum()
}

/// The least memory a sort of given inputs can keep to, and what it is
/// made of ([`memory_floor`]). A `--memory-limit` below it is not kept:
/// the sort still runs, and uses about this much.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryFloor {
    /// The process's resident memory before the sort: its code, stacks and
    /// allocator.
    pub process: u64,
    /// Reading: the largest Parquet row group of the inputs is decoded
    /// whole, and its batches and the decoder's pages are held together
    /// (taken as twice its Arrow size, itself about twice the footer's
    /// uncompressed size).
    pub read: u64,
    /// Writing a Parquet output (or a run): three 1 MiB buffers, and a
    /// zstd context per leaf column when the codec is zstd.
    pub write: u64,
}

impl MemoryFloor {
    /// The floor: all three.
    pub fn total(&self) -> u64 {
        self.process
            .saturating_add(self.read)
            .saturating_add(self.write)
    }
}

/// What a sort of `cfg.inputs` needs whatever its limit ([`MemoryFloor`]),
/// from the inputs' footers and the process's resident memory now. IPC
/// inputs are read a batch at a time and add nothing to the reading part.
/// Measured peak RSS at a 2 MiB limit, 2 threads (a debug build, whose
/// process part is 25 MiB): 250,000 `events` rows in one row group, floor
/// 87.5 MiB, peak 83 MiB; 200,000 `lineitem` rows in four, floor 54.5
/// MiB, peak 62 MiB; 12,000 `wide-u64` rows (50 columns), floor 65.3 MiB,
/// peak 55 MiB.
///
/// # Errors
/// As reading the inputs' footers ([`Error::Read`], [`Error::Store`],
/// [`Error::InvalidConfig`]).
pub fn memory_floor(cfg: &SortConfig) -> Result<MemoryFloor, Error> {
    let mut largest_group = 0u64;
    let mut leaves = 0usize;
    for path in expand_inputs(&cfg.inputs)? {
        match Format::detect(&path).map_err(Error::from_format)? {
            Format::Parquet => {
                let file = fs::File::open(&path).map_err(|e| Error::io("open", &path, e))?;
                let builder = strata_parquet::read::open(
                    file,
                    parquet::arrow::arrow_reader::ArrowReaderOptions::new(),
                )
                .map_err(|e| Error::reading(&path, Error::Invalid(e.to_string())))?;
                let md = builder.metadata();
                leaves = leaves.max(md.file_metadata().schema_descr().num_columns());
                for g in md.row_groups() {
                    largest_group = largest_group.max(g.total_byte_size().max(0) as u64);
                }
            }
            Format::Ipc => {}
        }
    }
    let zstd = matches!(cfg.compression, Compression::Zstd(_));
    let write = strata_store::direct::memory_bytes(1 << 20) as u64
        + if zstd {
            (leaves as f64 * ZSTD_CONTEXT_BYTES) as u64
        } else {
            0
        };
    Ok(MemoryFloor {
        process: current_rss().unwrap_or(0),
        read: largest_group.saturating_mul(4),
        write,
    })
}

/// The process's resident set size now (Linux: `VmRSS`).
fn current_rss() -> Option<u64> {
    proc_status_kb("VmRSS:").map(|kb| kb * 1024)
}

/// A `kB` line of `/proc/self/status`.
fn proc_status_kb(key: &str) -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The process's peak resident set size (Linux: `VmHWM`).
pub(crate) fn peak_rss() -> Option<u64> {
    proc_status_kb("VmHWM:").map(|kb| kb * 1024)
}
