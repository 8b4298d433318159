//! Projected Parquet reads.
