//! The suites: each builds its cases (inputs generated with fixed seeds)
//! at the configured size.

mod common;
pub mod compact;
pub mod infer;
pub mod parquet_column;
pub mod pipeline;
pub mod report;
pub mod row;
pub mod scan;
pub mod sort;

use crate::{Case, Config, Suite};

impl Suite {
    /// The suite's cases at `cfg`'s size.
    pub fn cases(self, cfg: &Config) -> Result<Vec<Case>, crate::Error> {
        match self {
            Suite::Pipeline => pipeline::cases(cfg),
            Suite::Row => row::cases(cfg),
            Suite::Scan => scan::cases(cfg),
            Suite::Compact => compact::cases(cfg),
            Suite::ParquetColumn => parquet_column::cases(cfg),
            Suite::Sort => sort::cases(cfg),
            Suite::Infer => infer::cases(cfg),
            Suite::Report => report::cases(cfg),
        }
    }
}
