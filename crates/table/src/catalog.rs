//! Iceberg's SQL catalog in a SQLite file: the tables and columns of
//! Iceberg's JDBC catalog (`iceberg_tables`, `iceberg_namespace_properties`),
//! which pyiceberg's `SqlCatalog` and Java's `JdbcCatalog` open. A table
//! is registered in one transaction that inserts its row only if no row
//! of that name exists; a namespace exists when it has properties or
//! tables. A new catalog has the current schema (with `iceberg_type`);
//! one made without that column is written as it is.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::Error;

/// The two tables of Iceberg's JDBC catalog, as it creates them.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS iceberg_tables (
    catalog_name VARCHAR(255) NOT NULL,
    table_namespace VARCHAR(255) NOT NULL,
    table_name VARCHAR(255) NOT NULL,
    metadata_location VARCHAR(1000),
    previous_metadata_location VARCHAR(1000),
    iceberg_type VARCHAR(5),
    PRIMARY KEY (catalog_name, table_namespace, table_name)
);
CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
    catalog_name VARCHAR(255) NOT NULL,
    namespace VARCHAR(255) NOT NULL,
    property_key VARCHAR(255),
    property_value VARCHAR(1000),
    PRIMARY KEY (catalog_name, namespace, property_key)
);
";

/// A SQL catalog in a SQLite file.
pub struct SqliteCatalog {
    conn: Connection,
    name: String,
    path: PathBuf,
}

fn bad(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::BadTable {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

impl SqliteCatalog {
    /// Opens the catalog `name` in the SQLite file at `path`, creating the
    /// file and the catalog's tables when the file is new or empty.
    ///
    /// # Errors
    /// [`Error::BadTable`] when the file is not a SQLite database, or is
    /// one with tables of its own but not a catalog's.
    pub fn open(path: &Path, name: &str) -> Result<SqliteCatalog, Error> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io("create the catalog's directory", parent, e))?;
        }
        let conn = Connection::open(path).map_err(|e| bad(path, format!("cannot open: {e}")))?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(|e| bad(path, e))?;
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .and_then(|mut s| {
                s.query_map([], |r| r.get::<_, String>(0))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| bad(path, format!("not a SQLite catalog: {e}")))?;
        if !tables.is_empty() && !tables.iter().any(|t| t == "iceberg_tables") {
            return Err(bad(
                path,
                format!(
                    "not an Iceberg SQL catalog: its tables are {} (no iceberg_tables)",
                    tables.join(", ")
                ),
            ));
        }
        conn.execute_batch(SCHEMA)
            .map_err(|e| bad(path, format!("cannot set up the catalog's tables: {e}")))?;
        Ok(SqliteCatalog {
            conn,
            name: name.to_string(),
            path: path.to_path_buf(),
        })
    }

    /// Whether namespace `ns` exists (it has properties or tables).
    ///
    /// # Errors
    /// [`Error::BadTable`] when the catalog cannot be read.
    pub fn namespace_exists(&self, ns: &str) -> Result<bool, Error> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT (SELECT count(*) FROM iceberg_namespace_properties
                         WHERE catalog_name = ?1 AND namespace = ?2)
                      + (SELECT count(*) FROM iceberg_tables
                         WHERE catalog_name = ?1 AND table_namespace = ?2)",
                params![self.name, ns],
                |r| r.get(0),
            )
            .map_err(|e| bad(&self.path, e))?;
        Ok(n > 0)
    }

    /// Creates namespace `ns` (its `exists` property, as pyiceberg marks
    /// one), if it does not exist.
    ///
    /// # Errors
    /// [`Error::BadTable`] when the catalog cannot be written.
    pub fn create_namespace(&self, ns: &str) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO iceberg_namespace_properties
                 (catalog_name, namespace, property_key, property_value)
                 VALUES (?1, ?2, 'exists', 'true')",
                params![self.name, ns],
            )
            .map_err(|e| bad(&self.path, e))?;
        Ok(())
    }

    /// The metadata location of table `ns.table`, if it is registered.
    ///
    /// # Errors
    /// [`Error::BadTable`] when the catalog cannot be read.
    pub fn table(&self, ns: &str, table: &str) -> Result<Option<String>, Error> {
        self.conn
            .query_row(
                "SELECT metadata_location FROM iceberg_tables
                 WHERE catalog_name = ?1 AND table_namespace = ?2 AND table_name = ?3",
                params![self.name, ns, table],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()
            .map(Option::flatten)
            .map_err(|e| bad(&self.path, e))
    }

    /// Registers table `ns.table` at `metadata_location`, in one
    /// transaction that fails if the table is registered already.
    ///
    /// # Errors
    /// [`Error::Conflict`] when another writer registered it first;
    /// [`Error::BadTable`] when the catalog cannot be written.
    pub fn register(
        &mut self,
        ns: &str,
        table: &str,
        metadata_location: &str,
    ) -> Result<(), Error> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| bad(&self.path, e))?;
        let exists: Option<i64> = tx
            .query_row(
                "SELECT 1 FROM iceberg_tables
                 WHERE catalog_name = ?1 AND table_namespace = ?2 AND table_name = ?3",
                params![self.name, ns, table],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| bad(&self.path, e))?;
        if exists.is_some() {
            return Err(Error::Conflict {
                path: self.path.join(format!("{ns}.{table}")),
                version: 1,
            });
        }
        let typed: i64 = tx
            .query_row(
                "SELECT count(*) FROM pragma_table_info('iceberg_tables') WHERE name = 'iceberg_type'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| bad(&self.path, e))?;
        let insert = if typed > 0 {
            "INSERT INTO iceberg_tables
             (catalog_name, table_namespace, table_name, metadata_location,
              previous_metadata_location, iceberg_type)
             VALUES (?1, ?2, ?3, ?4, NULL, 'TABLE')"
        } else {
            "INSERT INTO iceberg_tables
             (catalog_name, table_namespace, table_name, metadata_location,
              previous_metadata_location)
             VALUES (?1, ?2, ?3, ?4, NULL)"
        };
        tx.execute(insert, params![self.name, ns, table, metadata_location])
            .map_err(|e| bad(&self.path, e))?;
        tx.commit().map_err(|e| bad(&self.path, e))
    }
}

impl SqliteCatalog {
    /// Moves table `ns.table` from metadata `old` to `new` in one
    /// transaction that changes the row only if it still names `old`
    /// (compare and swap); with no `old`, registers the table.
    ///
    /// # Errors
    /// [`Error::Conflict`] when another writer moved or registered the
    /// table first; [`Error::BadTable`] when the catalog cannot be
    /// written.
    pub fn swap(
        &mut self,
        ns: &str,
        table: &str,
        old: Option<&str>,
        new: &str,
    ) -> Result<(), Error> {
        let Some(old) = old else {
            return self.register(ns, table, new);
        };
        let changed = self
            .conn
            .execute(
                "UPDATE iceberg_tables
                 SET metadata_location = ?4, previous_metadata_location = ?5
                 WHERE catalog_name = ?1 AND table_namespace = ?2 AND table_name = ?3
                   AND metadata_location = ?5",
                params![self.name, ns, table, new, old],
            )
            .map_err(|e| bad(&self.path, e))?;
        if changed == 1 {
            Ok(())
        } else {
            Err(Error::Conflict {
                path: self.path.join(format!("{ns}.{table}")),
                version: 0,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SqliteCatalog;
    use crate::Error;

    #[test]
    fn a_table_registers_once_and_namespaces_exist_by_their_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.db");
        let mut c = SqliteCatalog::open(&path, "default").unwrap();
        assert!(!c.namespace_exists("bench").unwrap());
        c.create_namespace("bench").unwrap();
        assert!(c.namespace_exists("bench").unwrap());
        assert_eq!(c.table("bench", "t").unwrap(), None);
        c.register("bench", "t", "/w/t/metadata/v1.metadata.json")
            .unwrap();
        assert_eq!(
            c.table("bench", "t").unwrap().as_deref(),
            Some("/w/t/metadata/v1.metadata.json")
        );
        // A second writer of the same table loses, and the first stays.
        let mut other = SqliteCatalog::open(&path, "default").unwrap();
        assert!(matches!(
            other.register("bench", "t", "/elsewhere.json"),
            Err(Error::Conflict { .. })
        ));
        // A swap moves the table only from the version it names.
        c.swap(
            "bench",
            "t",
            Some("/w/t/metadata/v1.metadata.json"),
            "/w/t/metadata/v2.metadata.json",
        )
        .unwrap();
        assert!(matches!(
            other.swap(
                "bench",
                "t",
                Some("/w/t/metadata/v1.metadata.json"),
                "/x.json"
            ),
            Err(Error::Conflict { .. })
        ));
        assert_eq!(
            c.table("bench", "t").unwrap().as_deref(),
            Some("/w/t/metadata/v2.metadata.json")
        );
        // Another catalog name in the same file sees nothing.
        let third = SqliteCatalog::open(&path, "other").unwrap();
        assert!(!third.namespace_exists("bench").unwrap());
    }

    #[test]
    fn files_that_are_not_catalogs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, vec![b'x'; 4096]).unwrap();
        assert!(matches!(
            SqliteCatalog::open(&text, "default"),
            Err(Error::BadTable { .. })
        ));
        let db = dir.path().join("app.db");
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch("CREATE TABLE users (id INTEGER)")
            .unwrap();
        let e = SqliteCatalog::open(&db, "default")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not an Iceberg SQL catalog"), "{e}");
    }
}
