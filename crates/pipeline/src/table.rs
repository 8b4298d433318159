//! Generated tables as table formats' tables: each table of a run written
//! as an Iceberg table at `OUTPUT/TABLE` (its data files under `data/`,
//! laid out as the table's layout says), its metadata committed once
//! every data file is complete ([`strata_table::iceberg::create`]).

use std::path::{Path, PathBuf};

use strata_parquet::Compression;
use strata_store::FromStore as _;
use strata_table::{
    catalog::SqliteCatalog,
    iceberg::{self, Committed, SortField, TableSchema},
    stats,
};

use crate::{Error, flow::Flow, generate::Summary};

/// Where each table of a run goes as an Iceberg table.
#[derive(Debug, Clone)]
pub struct IcebergTables {
    /// Each job's table directory (absolute).
    pub dirs: Vec<PathBuf>,
    /// The SQL catalog the tables are registered in, if any.
    pub catalog: Option<Catalog>,
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
    /// `TABLE/data/` (for a spec of one table, `TABLE` is
    /// `OUTPUT/NAME`; in a dataset, the table's own directory), identity
    /// partition columns stay in the files, and no table may exist there
    /// yet, in its directory nor, with a `catalog`, in the catalog (whose
    /// namespace must exist unless it is to be created).
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for an output in an object store or IPC
    /// files, or a namespace that does not exist;
    /// [`Error::Table`] when a table directory already holds a table, a
    /// catalog already has one of the tables, or the catalog file is not
    /// a catalog.
    pub fn as_iceberg(&mut self, catalog: Option<Catalog>) -> Result<IcebergTables, Error> {
        let multi = self.is_dataset();
        let mut dirs = Vec::new();
        if let Some(c) = &catalog {
            let open = c.open()?;
            if !c.create_namespace && !open.namespace_exists(&c.namespace)? {
                return Err(Error::InvalidConfig(format!(
                    "namespace `{}` does not exist in catalog `{}` ({}); create it, or pass --create-namespace",
                    c.namespace,
                    c.name,
                    c.path.display()
                )));
            }
            for (g, _) in self.jobs() {
                let name = strata_gen::BatchGenerator::name(g);
                if let Some(at) = open.table(&c.namespace, name)? {
                    return Err(Error::InvalidConfig(format!(
                        "catalog `{}` already has table {}.{name} (at {at}); appending to a table is not supported yet",
                        c.name, c.namespace
                    )));
                }
            }
        }
        for (_, cfg) in self.jobs_mut() {
            let out = cfg.output_dir.to_string_lossy().into_owned();
            if out.contains("://") && !out.starts_with("file://") {
                return Err(Error::InvalidConfig(format!(
                    "--format iceberg writes to a local directory; {out} is not one"
                )));
            }
            if cfg.format != strata_parquet::Format::Parquet {
                return Err(Error::InvalidConfig(
                    "Iceberg tables hold Parquet files".into(),
                ));
            }
            let base = PathBuf::from(out.strip_prefix("file://").unwrap_or(&out));
            let dir = if multi { base } else { base.join(cfg.stem()) };
            let dir = std::path::absolute(&dir)
                .map_err(|e| Error::io("resolve the table directory", &dir, e))?;
            iceberg::check_new(&dir)?;
            // Iceberg reads identity partition columns from the files.
            if let Some(layout) = cfg.layout.as_mut() {
                layout.keep_partition_columns = true;
            }
            cfg.output_dir = dir.join("data");
            dirs.push(dir);
        }
        Ok(IcebergTables { dirs, catalog })
    }

    /// Commits each table's data files, as `summaries` (one per job, in
    /// order) list them, as version 1 of its Iceberg table, and registers
    /// it in the catalog, if any (a table another writer registered
    /// meanwhile loses its new metadata and is an error).
    ///
    /// # Errors
    /// [`Error::Table`] for a data file whose footer does not read, a
    /// type Iceberg cannot hold, or a commit that fails or conflicts.
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
        for (((generator, cfg), dir), summary) in
            self.jobs().iter().zip(&tables.dirs).zip(summaries)
        {
            let arrow = strata_gen::BatchGenerator::schema(generator);
            let layout = cfg.layout.as_ref();
            let file_schema = match layout {
                Some(l) => std::sync::Arc::new(arrow.project(&l.file_columns(&arrow))?),
                None => arrow.clone(),
            };
            let schema = TableSchema::new(&file_schema)?;
            let data = dir.join("data");
            let mut files = Vec::with_capacity(summary.files.len());
            for f in &summary.files {
                let full = if f.path.is_absolute() || f.path.starts_with(&cfg.output_dir) {
                    f.path.clone()
                } else {
                    cfg.output_dir.join(&f.path)
                };
                let full =
                    std::path::absolute(&full).map_err(|e| Error::io("resolve", &full, e))?;
                let rel = full
                    .strip_prefix(&data)
                    .map(|r| Path::new("data").join(r))
                    .map_err(|_| {
                        Error::InvalidConfig(format!(
                            "data file {} is outside the table's data directory {}",
                            full.display(),
                            data.display()
                        ))
                    })?;
                files.push((rel.to_string_lossy().into_owned(), stats::read_file(&full)?));
            }
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
            let committed = iceberg::create(&iceberg::NewTable {
                location: dir,
                schema: &schema,
                arrow: &file_schema,
                partition: &partition,
                sort: &sort,
                properties,
                files: &files,
            })?;
            if let Some((c, open)) = catalog.as_mut() {
                let name = strata_gen::BatchGenerator::name(generator);
                let location = committed.metadata.to_string_lossy().into_owned();
                if let Err(e) = open.register(&c.namespace, name, &location) {
                    // Not the catalog's table: its version goes.
                    iceberg::withdraw(&committed);
                    return Err(e.into());
                }
            }
            out.push(committed);
        }
        Ok(out)
    }
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
