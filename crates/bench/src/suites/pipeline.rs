//! `strata generate` end to end: the `contacts` preset into Parquet and
//! into Arrow IPC files in a temporary directory, every core, the CLI's
//! defaults otherwise. The peer is the previous baseline
//! (`benches/generate_vs_reference.py` runs the reference program).

use std::path::PathBuf;
use std::sync::Arc;

use strata_parquet::Compression;
use strata_parquet::Format;
use strata_pipeline::generate::{GenerateConfig, ParquetEncoder, Part, generate};

use crate::{Case, Config, Error, Size, Unit, case_err};

/// The cases.
pub fn cases(cfg: &Config) -> Result<Vec<Case>, Error> {
    let rows: u64 = match cfg.size {
        Size::Tiny => 20_000,
        Size::Full => 2_000_000,
    };
    let dir = Arc::new(tempfile::tempdir().map_err(case_err)?);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let generator = Arc::new(strata_gen::contacts(42));
    let mut out = vec![];
    for (label, format) in [("parquet", Format::Parquet), ("ipc", Format::Ipc)] {
        let gen_cfg = GenerateConfig {
            target_records: rows,
            record_batch_size: 8192,
            num_writers: 4,
            threads,
            row_group_rows: 1 << 20,
            format,
            compression: Compression::None,
            output_dir: PathBuf::from(dir.path()).join(label),
            output_filename: "contacts".into(),
            overwrite: true,
            seed: 42,
            encoder: ParquetEncoder::Auto,
            part: Part::default(),
        };
        let (generator, dir) = (generator.clone(), dir.clone());
        out.push(Case::new(
            format!("generate contacts {rows} rows/{label}"),
            "strata",
            Unit::Rows,
            rows as f64,
            move || {
                let _keep = &dir;
                generate(&*generator, &gen_cfg, &|_| {}).map_err(case_err)?;
                Ok(())
            },
        ));
    }
    Ok(out)
}
