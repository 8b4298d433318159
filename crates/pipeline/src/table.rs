//! Generated tables as table formats' tables: each table of a run written
//! at `OUTPUT/TABLE` (for a spec of one table, `TABLE` is `OUTPUT/NAME`;
//! in a dataset, the table's own directory), its data files laid out as
//! the table's layout says, its metadata committed once every data file
//! is complete. As an Iceberg table: data files under `data/`, named by
//! the run, committed as version 1 of a new table or a snapshot appended
//! to an existing one ([`strata_table::iceberg::commit`]), and registered
//! in a SQL catalog when one is given. As a Delta table: data files in
//! the table's root, committed as version 0 of a new table
//! ([`strata_table::delta::create`]).

use std::path::{Path, PathBuf};

use strata_parquet::Compression;
use strata_store::FromStore as _;
use strata_table::{
    catalog::SqliteCatalog,
    delta,
    iceberg::{self, Committed, SortField, TableSchema},
    stats::{self, FileFacts},
};

use crate::{
    Error,
    flow::Flow,
    generate::{GenerateConfig, Summary},
};

/// Where each table of a run goes as an Iceberg table.
#[derive(Debug, Clone)]
pub struct IcebergTables {
    /// Each job's table directory (absolute).
    pub dirs: Vec<PathBuf>,
    /// Each job's table schema (of its data files).
    schemas: Vec<TableSchema>,
    /// The SQL catalog the tables are registered in, if any.
    pub catalog: Option<Catalog>,
}

/// Where each table of a run goes as a Delta table.
#[derive(Debug, Clone)]
pub struct DeltaTables {
    /// Each job's table directory (absolute): the table's root, which
    /// holds its data files (in their partition directories) and
    /// `_delta_log/`.
    pub dirs: Vec<PathBuf>,
}

/// A SQL catalog in a SQLite file to register tables in.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// The SQLite file.
    pub path: PathBuf,
    /// The catalog's name (`catalog_name`; pyiceberg's `SqlCatalog(NAME)`).
    pub name: String,
    /// The namespace the tables go in.
    pub namespace: String,
    /// Whether a namespace that does not exist is created.
    pub create_namespace: bool,
}

impl Catalog {
    fn open(&self) -> Result<SqliteCatalog, Error> {
        Ok(SqliteCatalog::open(&self.path, &self.name)?)
    }
}

impl Flow {
    /// Makes each table an Iceberg table: its data files go to
    /// `TABLE/data/` (for a spec of one table, `TABLE` is `OUTPUT/NAME`;
    /// in a dataset, the table's own directory) under names of their
    /// own, and identity partition columns stay in the files. A table
    /// that exists is appended to: its schema and partitioning must be
    /// this run's. With a `catalog`, its namespace must exist unless it is
    /// to be created, and a table it has must be the one in the table's
    /// directory.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for an output in an object store or IPC
    /// files, a namespace that does not exist, or a catalog entry that
    /// is not the directory's table; [`Error::Table`] for a directory
    /// that holds another format or unreadable metadata, a schema or
    /// partitioning that differs from the table's, or a catalog file that
    /// is not a catalog.
    pub fn as_iceberg(&mut self, catalog: Option<Catalog>) -> Result<IcebergTables, Error> {
        let multi = self.is_dataset();
        let open = match &catalog {
            Some(c) => {
                let open = c.open()?;
                if !c.create_namespace && !open.namespace_exists(&c.namespace)? {
                    return Err(Error::InvalidConfig(format!(
                        "namespace `{}` does not exist in catalog `{}` ({}); create it, or pass --create-namespace",
                        c.namespace,
                        c.name,
                        c.path.display()
                    )));
                }
                Some((c, open))
            }
            None => None,
        };
        let run = iceberg::run_id();
        let (mut dirs, mut schemas) = (Vec::new(), Vec::new());
        for (generator, cfg) in self.jobs_mut() {
            let dir = table_dir(cfg, multi, "iceberg")?;
            let name = strata_gen::BatchGenerator::name(generator).to_string();
            // Iceberg reads identity partition columns from the files.
            if let Some(layout) = cfg.layout.as_mut() {
                layout.keep_partition_columns = true;
            }
            let arrow = strata_gen::BatchGenerator::schema(generator);
            let schema = TableSchema::new(&arrow)?;
            let partition = cfg
                .layout
                .as_ref()
                .map(|l| l.fields().to_vec())
                .unwrap_or_default();
            let existing = iceberg::check_target(&dir, &schema, &partition)?;
            if let Some((c, open)) = &open
                && let Some(at) = open.table(&c.namespace, &name)?
                && existing
                    .as_ref()
                    .map(|e| e.path.to_string_lossy().into_owned())
                    != Some(at.clone())
            {
                return Err(Error::InvalidConfig(format!(
                    "catalog `{}` has table {}.{name} at {at}, which is not the current version of {}",
                    c.name,
                    c.namespace,
                    dir.display()
                )));
            }
            cfg.output_dir = dir.join("data");
            cfg.output_filename = format!("{}-{run}", cfg.stem());
            dirs.push(dir);
            schemas.push(schema);
        }
        Ok(IcebergTables {
            dirs,
            schemas,
            catalog,
        })
    }

    /// Commits each table's data files, as `summaries` (one per job, in
    /// order) list them, as a new snapshot of its Iceberg table (version
    /// 1 of a new one), and moves the catalog's entry, if any, to it; a
    /// version another writer committed first is built on.
    ///
    /// # Errors
    /// [`Error::Table`] for a data file whose footer does not read, a
    /// type Iceberg cannot hold, or a commit that fails.
    pub fn commit_iceberg(
        &self,
        tables: &IcebergTables,
        summaries: &[Summary],
    ) -> Result<Vec<Committed>, Error> {
        let mut catalog = match &tables.catalog {
            Some(c) => {
                let open = c.open()?;
                if c.create_namespace {
                    open.create_namespace(&c.namespace)?;
                }
                Some((c, open))
            }
            None => None,
        };
        let mut out = Vec::new();
        for ((((generator, cfg), dir), schema), summary) in self
            .jobs()
            .iter()
            .zip(&tables.dirs)
            .zip(&tables.schemas)
            .zip(summaries)
        {
            let layout = cfg.layout.as_ref();
            let files = data_files(cfg, summary, dir, &dir.join("data"))?;
            let sort: Vec<SortField> = layout
                .map(|l| {
                    l.keys()
                        .iter()
                        .map(|k| SortField {
                            column: k.column.clone(),
                            descending: k.options.descending,
                            nulls_first: k.options.nulls_first,
                        })
                        .collect()
                })
                .unwrap_or_default();
            let partition = layout.map(|l| l.fields().to_vec()).unwrap_or_default();
            let mut properties = std::collections::BTreeMap::new();
            properties.insert(
                "write.parquet.compression-codec".to_string(),
                codec_name(cfg.compression).to_string(),
            );
            properties.insert(
                "schema.name-mapping.default".to_string(),
                schema.name_mapping().to_string(),
            );
            let name = strata_gen::BatchGenerator::name(generator);
            let mut hook = |old: Option<&Path>, new: &Path| -> Result<(), strata_table::Error> {
                match catalog.as_mut() {
                    Some((c, open)) => {
                        let old = old.map(|p| p.to_string_lossy().into_owned());
                        open.swap(&c.namespace, name, old.as_deref(), &new.to_string_lossy())
                    }
                    None => Ok(()),
                }
            };
            out.push(iceberg::commit(
                &iceberg::NewTable {
                    location: dir,
                    schema,
                    arrow: &schema.arrow,
                    partition: &partition,
                    sort: &sort,
                    properties,
                    files: &files,
                },
                Some(&mut hook),
            )?);
        }
        Ok(out)
    }

    /// Makes each table a Delta table: its data files go to `TABLE/`
    /// itself (partition directories below it), identity partition
    /// columns are left out of the files (Delta keeps their values in the
    /// log), and no table may exist there yet.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for an output in an object store or IPC
    /// files;
    /// [`Error::Table`] for a partition field with a transform (Delta
    /// partitions by column values only), a type Delta cannot hold, or a
    /// table directory that already holds a table.
    pub fn as_delta(&mut self) -> Result<DeltaTables, Error> {
        let multi = self.is_dataset();
        let mut dirs = Vec::new();
        for (generator, cfg) in self.jobs_mut() {
            let dir = table_dir(cfg, multi, "delta")?;
            // Refused now, before any row is generated.
            delta::TableSchema::new(&strata_gen::BatchGenerator::schema(generator))?;
            if let Some(layout) = cfg.layout.as_mut() {
                delta::partition_columns(layout.fields())?;
                layout.keep_partition_columns = false;
            }
            delta::check_new(&dir)?;
            cfg.output_dir = dir.clone();
            dirs.push(dir);
        }
        Ok(DeltaTables { dirs })
    }

    /// Commits each table's data files, as `summaries` (one per job, in
    /// order) list them, as version 0 of its Delta table.
    ///
    /// # Errors
    /// [`Error::Table`] for a data file whose footer does not read or
    /// whose path lacks its partition directories, a type Delta cannot
    /// hold, or a commit that fails or conflicts.
    pub fn commit_delta(
        &self,
        tables: &DeltaTables,
        summaries: &[Summary],
    ) -> Result<Vec<delta::Committed>, Error> {
        let mut out = Vec::new();
        for (((generator, cfg), dir), summary) in
            self.jobs().iter().zip(&tables.dirs).zip(summaries)
        {
            // The whole schema: partition columns too, which the files lack.
            let schema = delta::TableSchema::new(&strata_gen::BatchGenerator::schema(generator))?;
            let files = data_files(cfg, summary, dir, dir)?;
            let partition = cfg
                .layout
                .as_ref()
                .map(|l| l.fields().to_vec())
                .unwrap_or_default();
            out.push(delta::create(&delta::NewTable {
                location: dir,
                schema: &schema,
                partition: &partition,
                files: &files,
            })?);
        }
        Ok(out)
    }
}

/// The absolute local directory of a job's table, for `--format
/// {format}`: `OUTPUT/NAME` for a spec of one table (its output file
/// name, whatever the part), the table's own output directory in a
/// dataset.
///
/// # Errors
/// [`Error::InvalidConfig`] for an output in an object store or files
/// other than Parquet.
fn table_dir(cfg: &GenerateConfig, multi: bool, format: &str) -> Result<PathBuf, Error> {
    let out = cfg.output_dir.to_string_lossy().into_owned();
    if out.contains("://") && !out.starts_with("file://") {
        return Err(Error::InvalidConfig(format!(
            "--format {format} writes to a local directory; {out} is not one"
        )));
    }
    if cfg.format != strata_parquet::Format::Parquet {
        return Err(Error::InvalidConfig(format!(
            "--format {format}: its tables hold Parquet files"
        )));
    }
    let base = PathBuf::from(out.strip_prefix("file://").unwrap_or(&out));
    let dir = if multi {
        base
    } else {
        base.join(&cfg.output_filename)
    };
    std::path::absolute(&dir).map_err(|e| Error::io("resolve the table directory", &dir, e))
}

/// The data files `summary` lists for a job, each with its path relative
/// to the table's directory `table` (`/` separated) and its facts from
/// its footer; every file must lie under `data`, the table's data
/// directory.
///
/// # Errors
/// [`Error::InvalidConfig`] for a file outside `data`; [`Error::Table`]
/// for a footer that does not read.
fn data_files(
    cfg: &GenerateConfig,
    summary: &Summary,
    table: &Path,
    data: &Path,
) -> Result<Vec<(String, FileFacts)>, Error> {
    let mut files = Vec::with_capacity(summary.files.len());
    for f in &summary.files {
        let full = if f.path.is_absolute() || f.path.starts_with(&cfg.output_dir) {
            f.path.clone()
        } else {
            cfg.output_dir.join(&f.path)
        };
        let full = std::path::absolute(&full).map_err(|e| Error::io("resolve", &full, e))?;
        let rel = full
            .strip_prefix(table)
            .ok()
            .filter(|_| full.starts_with(data))
            .ok_or_else(|| {
                Error::InvalidConfig(format!(
                    "data file {} is outside the table's data directory {}",
                    full.display(),
                    data.display()
                ))
            })?;
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        files.push((rel.join("/"), stats::read_file(&full)?));
    }
    Ok(files)
}

/// Iceberg's name of a codec (`write.parquet.compression-codec`).
fn codec_name(c: Compression) -> &'static str {
    match c {
        Compression::None => "uncompressed",
        Compression::Snappy => "snappy",
        Compression::Lz4 => "lz4",
        Compression::Zstd(_) => "zstd",
    }
}
