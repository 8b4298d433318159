//! Generated tables as table formats' tables: each table of a run written
//! at `OUTPUT/TABLE` (for a spec of one table, `TABLE` is `OUTPUT/NAME`;
//! in a dataset, the table's own directory), its data files laid out as
//! the table's layout says, its metadata committed once every data file
//! is complete. As an Iceberg table: data files under `data/`, named by
//! the run, committed as version 1 of a new table or a snapshot appended
//! to an existing one ([`strata_table::iceberg::commit`]), and registered
//! in a SQL catalog when one is given. As a Delta table: data files in
//! the table's root, committed as version 0 of a new table or appended
//! as the next version ([`strata_table::delta::create`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use strata_parquet::Compression;
use strata_store::{FromStore as _, location::StoreConfig};
use strata_table::{
    catalog::SqliteCatalog,
    delta,
    iceberg::{self, Committed, SortField, TableSchema},
    stats,
};

pub use strata_table::{
    delta::Committed as DeltaCommitted, dir::TableDir, iceberg::Committed as IcebergCommitted,
};

use crate::{
    Error,
    flow::Flow,
    generate::{GenerateConfig, Summary},
};

/// Where each table of a run goes as an Iceberg table.
#[derive(Debug, Clone)]
pub struct IcebergTables {
    /// Each job's table: a local directory (absolute) or an object-store
    /// prefix.
    pub dirs: Vec<TableDir>,
    /// Each job's table schema (of its data files).
    pub(crate) schemas: Vec<TableSchema>,
    /// The SQL catalog the tables are registered in, if any.
    pub catalog: Option<Catalog>,
}

/// Where each table of a run goes as a Delta table.
#[derive(Debug, Clone)]
pub struct DeltaTables {
    /// Each job's table root (a local directory, absolute, or an
    /// object-store prefix), which holds its data files (in their
    /// partition directories) and `_delta_log/`.
    pub dirs: Vec<TableDir>,
    /// Properties of a new table (`delta.enableChangeDataFeed`,
    /// `delta.enableDeletionVectors`); an existing table must have them.
    pub configuration: std::collections::BTreeMap<String, String>,
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

    /// The catalog, open, once its namespace is known to exist or to be
    /// created.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for a namespace that does not exist and is
    /// not to be created; [`Error::Table`] for a file that is not a
    /// catalog.
    fn open_checked(&self) -> Result<SqliteCatalog, Error> {
        let open = self.open()?;
        if !self.create_namespace && !open.namespace_exists(&self.namespace)? {
            return Err(Error::InvalidConfig(format!(
                "namespace `{}` does not exist in catalog `{}` ({}); create it, or pass --create-namespace",
                self.namespace,
                self.name,
                self.path.display()
            )));
        }
        Ok(open)
    }

    /// The catalog, open for a commit: its namespace exists, or is
    /// created now when asked.
    ///
    /// # Errors
    /// As [`Catalog::open_checked`]; a namespace that cannot be created.
    fn open_for_commit(&self) -> Result<SqliteCatalog, Error> {
        let open = self.open_checked()?;
        if self.create_namespace {
            open.create_namespace(&self.namespace)?;
        }
        Ok(open)
    }
}

/// Commits `t` as a snapshot of its table and moves the catalog's entry
/// for table `name`, if there is a catalog, to the new version (a writer
/// that moved it first makes the commit build on its version).
fn commit_with_catalog(
    t: &iceberg::NewTable<'_>,
    catalog: Option<&mut (&Catalog, SqliteCatalog)>,
    name: &str,
) -> Result<Committed, Error> {
    with_catalog(catalog, name, |hook| iceberg::commit(t, hook))
}

/// Runs `commit` with the hook that moves the catalog's entry for table
/// `name`, if there is a catalog, to the new version.
fn with_catalog(
    catalog: Option<&mut (&Catalog, SqliteCatalog)>,
    name: &str,
    commit: impl FnOnce(Option<iceberg::CatalogHook<'_>>) -> Result<Committed, strata_table::Error>,
) -> Result<Committed, Error> {
    let Some((c, open)) = catalog else {
        return Ok(commit(None)?);
    };
    let mut hook = |old: Option<&Path>, new: &Path| -> Result<(), strata_table::Error> {
        let old = old.map(|p| p.to_string_lossy().into_owned());
        open.swap(&c.namespace, name, old.as_deref(), &new.to_string_lossy())
    };
    Ok(commit(Some(&mut hook))?)
}

/// Commits change `c` of table `name` as a snapshot, and moves the
/// catalog's entry, if any, to it.
pub(crate) fn commit_change_with_catalog(
    c: &iceberg::Change<'_>,
    catalog: Option<&Catalog>,
    name: &str,
) -> Result<Committed, Error> {
    let mut open = match catalog {
        Some(cat) => Some((cat, cat.open_for_commit()?)),
        None => None,
    };
    with_catalog(open.as_mut(), name, |hook| iceberg::commit_change(c, hook))
}

/// The partition fields of a job's layout (none without one).
pub(crate) fn partition_fields(cfg: &GenerateConfig) -> Vec<strata_layout::PartitionField> {
    cfg.layout
        .as_ref()
        .map(|l| l.fields().to_vec())
        .unwrap_or_default()
}

/// The sort keys of a job's layout as a table's sort order.
pub(crate) fn sort_fields(cfg: &GenerateConfig) -> Vec<SortField> {
    cfg.layout
        .as_ref()
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
        .unwrap_or_default()
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
    /// [`Error::InvalidConfig`] for IPC files, a layout in an object
    /// store, a namespace that does not exist, or a catalog entry that
    /// is not the directory's table; [`Error::Table`] for a directory
    /// that holds another format or unreadable metadata, a schema or
    /// partitioning that differs from the table's, or a catalog file that
    /// is not a catalog.
    pub fn as_iceberg(
        &mut self,
        catalog: Option<Catalog>,
        store: &StoreConfig,
    ) -> Result<IcebergTables, Error> {
        let multi = self.is_dataset();
        let open = match &catalog {
            Some(c) => Some((c, c.open_checked()?)),
            None => None,
        };
        let run = strata_table::run_id();
        let (mut dirs, mut schemas) = (Vec::new(), Vec::new());
        for (generator, cfg) in self.jobs_mut() {
            let dir = table_dir(cfg, multi, "iceberg", store)?;
            let name = strata_gen::BatchGenerator::name(generator).to_string();
            // Iceberg reads identity partition columns from the files.
            if let Some(layout) = cfg.layout.as_mut() {
                layout.keep_partition_columns = true;
            }
            let arrow = strata_gen::BatchGenerator::schema(generator);
            let schema = TableSchema::new(&arrow)?;
            // The data files carry the field ids, so readers need no name
            // mapping to find their columns.
            cfg.field_ids = Some(schema.arrow.clone());
            let existing = iceberg::check_target(&dir, &schema, &partition_fields(cfg))?;
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
                    dir.root().display()
                )));
            }
            cfg.output_dir = dir.at("data");
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
            Some(c) => Some((c, c.open_for_commit()?)),
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
            let files = with_facts(dir, data_paths(cfg, summary, dir, "data")?)?;
            let table = iceberg::NewTable {
                location: dir,
                schema,
                arrow: &schema.arrow,
                partition: &partition_fields(cfg),
                sort: &sort_fields(cfg),
                properties: table_properties(cfg, schema),
                files: &files,
            };
            out.push(commit_with_catalog(
                &table,
                catalog.as_mut(),
                strata_gen::BatchGenerator::name(generator),
            )?);
        }
        Ok(out)
    }

    /// Makes each table a Delta table: its data files go to `TABLE/`
    /// itself (partition directories below it), identity partition
    /// columns are left out of the files (Delta keeps their values in the
    /// log), and a table that exists is appended to: its schema and
    /// partition columns must be this run's.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for IPC files or a layout in an object
    /// store;
    /// [`Error::Table`] for a partition field with a transform (Delta
    /// partitions by column values only), a type Delta cannot hold, or a
    /// table directory that holds an Iceberg table or a Delta table of
    /// another schema or partitioning.
    pub fn as_delta(&mut self, store: &StoreConfig) -> Result<DeltaTables, Error> {
        let multi = self.is_dataset();
        let run = strata_table::run_id();
        let mut dirs = Vec::new();
        for (generator, cfg) in self.jobs_mut() {
            let dir = table_dir(cfg, multi, "delta", store)?;
            // Refused now, before any row is generated.
            let schema = delta::TableSchema::new(&strata_gen::BatchGenerator::schema(generator))?;
            if let Some(layout) = cfg.layout.as_mut() {
                delta::partition_columns(layout.fields())?;
                layout.keep_partition_columns = false;
            }
            // A table there is appended to (same schema and partitions).
            delta::check_target(&dir, &schema, &partition_fields(cfg))?;
            cfg.output_dir = dir.root();
            cfg.output_filename = format!("{}-{run}", cfg.stem());
            dirs.push(dir);
        }
        Ok(DeltaTables {
            dirs,
            configuration: std::collections::BTreeMap::new(),
        })
    }

    /// Commits each table's data files, as `summaries` (one per job, in
    /// order) list them, as version 0 of a new Delta table or the next
    /// version of an existing one.
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
            let files = with_facts(dir, data_paths(cfg, summary, dir, "")?)?;
            out.push(delta::create_with(
                &delta::NewTable {
                    location: dir,
                    schema: &schema,
                    partition: &partition_fields(cfg),
                    files: &files,
                },
                &tables.configuration,
            )?);
        }
        Ok(out)
    }
}

/// The table of a job, for `--format {format}`: `OUTPUT/NAME` for a
/// spec of one table (its output file name, whatever the part), the
/// table's own output directory in a dataset; a local directory (made
/// absolute) or an object-store prefix (`s3://bucket/prefix/NAME`).
///
/// # Errors
/// [`Error::InvalidConfig`] for files other than Parquet, or a layout
/// (partitions, a sort order, file sizes) in an object store;
/// [`Error::Table`] for a URL that does not parse.
fn table_dir(
    cfg: &GenerateConfig,
    multi: bool,
    format: &str,
    store: &StoreConfig,
) -> Result<TableDir, Error> {
    if cfg.format != strata_parquet::Format::Parquet {
        return Err(Error::InvalidConfig(format!(
            "--format {format}: its tables hold Parquet files"
        )));
    }
    let out = cfg.output_dir.to_string_lossy().into_owned();
    let remote = out.contains("://") && !out.starts_with("file://");
    if remote && cfg.layout.is_some() {
        return Err(Error::InvalidConfig(format!(
            "--format {format} in an object store ({out}) writes tables without a layout: \
             partitions, a sort order and file sizes are written to a local directory (write \
             the table there and copy it, or leave out --partition-by, --sort-by and \
             --target-file-size)"
        )));
    }
    let base = out.trim_end_matches('/');
    let location = if multi {
        base.to_string()
    } else {
        format!("{base}/{}", cfg.output_filename)
    };
    Ok(TableDir::open(&location, store)?)
}

/// The data files `summary` lists for a job, each as its path relative
/// to the table's root (`/` separated); every file must lie under
/// directory `data` of the table (the whole table when empty).
///
/// # Errors
/// [`Error::InvalidConfig`] for a file outside it.
pub(crate) fn data_paths(
    cfg: &GenerateConfig,
    summary: &Summary,
    table: &TableDir,
    data: &str,
) -> Result<Vec<String>, Error> {
    let mut files = Vec::with_capacity(summary.files.len());
    for f in &summary.files {
        let full = if f.path.is_absolute() || f.path.starts_with(&cfg.output_dir) {
            f.path.clone()
        } else {
            cfg.output_dir.join(&f.path)
        };
        let full = if table.is_remote() {
            full.to_string_lossy().into_owned()
        } else {
            std::path::absolute(&full)
                .map_err(|e| Error::io("resolve", &full, e))?
                .to_string_lossy()
                .into_owned()
        };
        let rel = table
            .relative(&full)
            .filter(|r| data.is_empty() || r.starts_with(&format!("{data}/")))
            .ok_or_else(|| {
                Error::InvalidConfig(format!(
                    "data file {full} is outside the table's data directory {}",
                    table.at(data).display()
                ))
            })?;
        files.push(rel);
    }
    Ok(files)
}

/// Data files `rels` of `table` (paths relative to it), each with its
/// facts from its footer.
///
/// # Errors
/// [`Error::Table`] for a footer that does not read.
fn with_facts(
    table: &TableDir,
    rels: Vec<String>,
) -> Result<Vec<(String, stats::FileFacts)>, Error> {
    rels.into_iter()
        .map(|rel| {
            let facts = table.facts(&rel)?;
            Ok((rel, facts))
        })
        .collect()
}

/// The directory in a table where parts stage their commit fragments.
pub const STAGING_DIR: &str = "_strata_parts";

/// What one part of a run leaves for the table's commit: its data files
/// and what the commit needs to know of the table.
#[derive(Debug, Serialize, Deserialize)]
struct Fragment {
    /// The table format: `iceberg` or `delta`.
    #[serde(default = "iceberg_format")]
    format: String,
    /// The table's name (its catalog entry's).
    table: String,
    /// This part, from 1.
    part: u64,
    /// Parts of the run.
    parts: u64,
    /// The table schema (Iceberg's JSON, or Delta's schema string).
    schema: serde_json::Value,
    /// Partition fields, as written.
    partition_by: Vec<String>,
    /// The sort order.
    sort_by: Vec<SortField>,
    /// Properties of a new table.
    properties: std::collections::BTreeMap<String, String>,
    /// The part's data files, relative to the table.
    files: Vec<String>,
}

/// The format of fragments written before Delta tables had parts.
fn iceberg_format() -> String {
    "iceberg".into()
}

/// Stages `fragment` (part `part`) in table `dir`: created only if
/// absent.
fn stage(dir: &TableDir, fragment: &Fragment) -> Result<PathBuf, Error> {
    let rel = format!(
        "{STAGING_DIR}/part-{}-of-{}.json",
        fragment.part, fragment.parts
    );
    let body =
        serde_json::to_vec_pretty(fragment).map_err(|e| Error::InvalidConfig(e.to_string()))?;
    match dir.put_new(&rel, &body) {
        Ok(()) => Ok(dir.at(&rel)),
        Err(strata_table::Error::Store(strata_store::Error::OutputExists { .. })) => {
            Err(Error::InvalidConfig(format!(
                "part {} of {} of {} is already staged ({}); each part is written once",
                fragment.part,
                fragment.parts,
                dir,
                dir.at(&rel).display()
            )))
        }
        Err(e) => Err(e.into()),
    }
}

impl Flow {
    /// Stages the data files of part `part` of each Iceberg table (as
    /// `summaries` list them) for one commit of all parts: a fragment
    /// `TABLE/_strata_parts/part-I-of-P.json`, created only if absent.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] when that part is already staged; IO
    /// errors.
    pub fn stage_iceberg(
        &self,
        tables: &IcebergTables,
        summaries: &[Summary],
        part: crate::generate::Part,
    ) -> Result<Vec<PathBuf>, Error> {
        let mut out = Vec::new();
        for ((((generator, cfg), dir), schema), summary) in self
            .jobs()
            .iter()
            .zip(&tables.dirs)
            .zip(&tables.schemas)
            .zip(summaries)
        {
            out.push(stage(
                dir,
                &Fragment {
                    format: "iceberg".into(),
                    table: strata_gen::BatchGenerator::name(generator).to_string(),
                    part: part.index,
                    parts: part.count,
                    schema: schema.json.clone(),
                    partition_by: partition_fields(cfg).into_iter().map(|f| f.text).collect(),
                    sort_by: sort_fields(cfg),
                    properties: table_properties(cfg, schema),
                    files: data_paths(cfg, summary, dir, "data")?,
                },
            )?);
        }
        Ok(out)
    }

    /// Stages the data files of part `part` of each Delta table, as
    /// [`Flow::stage_iceberg`] does.
    ///
    /// # Errors
    /// As [`Flow::stage_iceberg`]; a type Delta cannot hold.
    pub fn stage_delta(
        &self,
        tables: &DeltaTables,
        summaries: &[Summary],
        part: crate::generate::Part,
    ) -> Result<Vec<PathBuf>, Error> {
        let mut out = Vec::new();
        for (((generator, cfg), dir), summary) in
            self.jobs().iter().zip(&tables.dirs).zip(summaries)
        {
            let schema = delta::TableSchema::new(&strata_gen::BatchGenerator::schema(generator))?;
            out.push(stage(
                dir,
                &Fragment {
                    format: "delta".into(),
                    table: strata_gen::BatchGenerator::name(generator).to_string(),
                    part: part.index,
                    parts: part.count,
                    schema: serde_json::Value::String(schema.json()),
                    partition_by: partition_fields(cfg).into_iter().map(|f| f.text).collect(),
                    sort_by: sort_fields(cfg),
                    properties: std::collections::BTreeMap::new(),
                    files: data_paths(cfg, summary, dir, "")?,
                },
            )?);
        }
        Ok(out)
    }
}

/// The fragments staged in table `dir`, each with its path relative to
/// the table; `None` when nothing is staged.
///
/// # Errors
/// [`Error::InvalidConfig`] for a fragment that does not read; IO or
/// store errors.
fn read_fragments(dir: &TableDir) -> Result<Option<Vec<(String, Fragment)>>, Error> {
    let Some(names) = dir.list(STAGING_DIR)? else {
        return Ok(None);
    };
    let mut fragments = Vec::new();
    for name in names.iter().filter(|n| n.ends_with(".json")) {
        let rel = format!("{STAGING_DIR}/{name}");
        let path = dir.at(&rel);
        let text = dir
            .read(&rel)?
            .ok_or_else(|| Error::InvalidConfig(format!("{}: gone", path.display())))?;
        let f: Fragment = serde_json::from_slice(&text).map_err(|e| {
            Error::InvalidConfig(format!("{}: not a staged part: {e}", path.display()))
        })?;
        fragments.push((rel, f));
    }
    Ok(Some(fragments))
}

/// The files of table `dir` that nothing references: written by runs
/// that were killed or failed before their commit
/// ([`strata_table::clean::find`]), older than `min_age_ms` (a run in
/// flight has files no version names yet). The files of staged parts
/// are kept.
///
/// # Errors
/// [`Error::Table`] for a location that holds no table or metadata that
/// does not read; [`Error::InvalidConfig`] for a staged fragment that
/// does not read.
pub fn find_orphans(dir: &TableDir, min_age_ms: i64) -> Result<strata_table::clean::Found, Error> {
    let staged: std::collections::BTreeSet<String> = read_fragments(dir)?
        .unwrap_or_default()
        .into_iter()
        .flat_map(|(_, f)| f.files)
        .collect();
    Ok(strata_table::clean::find(dir, &staged, min_age_ms)?)
}

/// Removes `orphans` (found by [`find_orphans`]) from table `dir`.
///
/// # Errors
/// IO or store errors (the files before the failing one are gone).
pub fn remove_orphans(
    dir: &TableDir,
    orphans: &[strata_table::clean::Orphan],
) -> Result<(), Error> {
    Ok(strata_table::clean::remove(dir, orphans)?)
}

/// The rows the table at `dir` holds: the current snapshot's
/// `total-records` of an Iceberg table, the live files' `numRecords` of a
/// Delta table; 0 when there is no table yet.
///
/// # Errors
/// [`Error::Table`] for metadata that does not read.
pub fn table_rows(dir: &TableDir) -> Result<u64, Error> {
    if dir.has_dir(delta::LOG_DIR)? {
        return Ok(delta::current(dir)?.map_or(0, |s| s.rows()));
    }
    let Some(cur) = iceberg::current(dir)? else {
        return Ok(0);
    };
    let m = &cur.metadata;
    let id = m["current-snapshot-id"].as_i64();
    Ok(m["snapshots"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["snapshot-id"].as_i64() == id)
        .and_then(|s| s["summary"]["total-records"].as_str())
        .and_then(|t| t.parse().ok())
        .unwrap_or(0))
}

/// What [`commit_staged`] committed.
#[derive(Debug, Clone)]
pub enum StagedCommit {
    /// A snapshot of an Iceberg table.
    Iceberg(Committed),
    /// A version of a Delta table.
    Delta(delta::Committed),
}

/// Commits every part staged in table `dir` (by `--parts P --part i`
/// runs) as one snapshot of an Iceberg table (registered in `catalog`, if
/// any) or one version of a Delta table, and removes the fragments.
///
/// # Errors
/// [`Error::InvalidConfig`] when no part is staged, a part is missing,
/// the parts disagree on their format, count, schema or layout, or a
/// catalog is given for a Delta table; the commit's errors.
pub fn commit_staged(dir: &TableDir, catalog: Option<&Catalog>) -> Result<StagedCommit, Error> {
    let staging = dir.at(STAGING_DIR);
    let mut fragments = read_fragments(dir)?.ok_or_else(|| {
        Error::InvalidConfig(format!(
            "{}: no staged parts; write them with --format iceberg|delta --parts P --part I",
            staging.display()
        ))
    })?;
    fragments.sort_by_key(|(_, f)| f.part);
    let Some((_, first)) = fragments.first() else {
        return Err(Error::InvalidConfig(format!(
            "{}: no staged parts",
            staging.display()
        )));
    };
    let parts = first.parts;
    for (rel, f) in &fragments {
        if f.parts != parts
            || f.format != first.format
            || f.schema != first.schema
            || f.partition_by != first.partition_by
            || f.sort_by != first.sort_by
            || f.table != first.table
        {
            return Err(Error::InvalidConfig(format!(
                "{}: part {} of {} does not belong with part {} of {} (another run's format, count, schema or layout)",
                dir.at(rel).display(),
                f.part,
                f.parts,
                first.part,
                parts
            )));
        }
    }
    let have: Vec<u64> = fragments.iter().map(|(_, f)| f.part).collect();
    let missing: Vec<String> = (1..=parts)
        .filter(|p| !have.contains(p))
        .map(|p| p.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(Error::InvalidConfig(format!(
            "{}: part(s) {} of {parts} are not staged; write them before the commit",
            dir,
            missing.join(", ")
        )));
    }
    let partition = first
        .partition_by
        .iter()
        .map(|t| {
            strata_layout::PartitionField::parse(t).map_err(|e| Error::InvalidConfig(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let files = with_facts(
        dir,
        fragments
            .iter()
            .flat_map(|(_, f)| f.files.clone())
            .collect(),
    )?;
    let committed = match first.format.as_str() {
        "iceberg" => {
            let schema = TableSchema::from_json(&first.schema)?;
            let mut open = match catalog {
                Some(c) => Some((c, c.open_for_commit()?)),
                None => None,
            };
            let table = iceberg::NewTable {
                location: dir,
                schema: &schema,
                arrow: &schema.arrow,
                partition: &partition,
                sort: &first.sort_by,
                properties: first.properties.clone(),
                files: &files,
            };
            StagedCommit::Iceberg(commit_with_catalog(&table, open.as_mut(), &first.table)?)
        }
        "delta" => {
            if catalog.is_some() {
                return Err(Error::InvalidConfig(
                    "a catalog registers Iceberg tables; this table's parts are Delta".into(),
                ));
            }
            let text = first.schema.as_str().unwrap_or_default();
            let schema = delta::TableSchema::from_json(text)?;
            StagedCommit::Delta(delta::create(&delta::NewTable {
                location: dir,
                schema: &schema,
                partition: &partition,
                files: &files,
            })?)
        }
        other => {
            return Err(Error::InvalidConfig(format!(
                "{}: staged parts of an unknown format `{other}`",
                staging.display()
            )));
        }
    };
    for (rel, _) in &fragments {
        let _ = dir.remove(rel);
    }
    dir.remove_empty_dir(STAGING_DIR);
    Ok(committed)
}

/// A new table's properties: its codec, and the name mapping by which
/// readers find the files' columns.
pub(crate) fn table_properties(
    cfg: &GenerateConfig,
    schema: &TableSchema,
) -> std::collections::BTreeMap<String, String> {
    let mut properties = std::collections::BTreeMap::new();
    properties.insert(
        "write.parquet.compression-codec".to_string(),
        codec_name(cfg.compression).to_string(),
    );
    properties.insert(
        "schema.name-mapping.default".to_string(),
        schema.name_mapping().to_string(),
    );
    properties
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
