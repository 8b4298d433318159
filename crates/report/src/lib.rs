//! `strata report`: a self-contained HTML page that shows a dataset.
//!
//! (Crate docs: what it owns, data flow, guarantees, example; to be
//! written with the crate.)

mod error;

pub mod collect;
pub mod html;
pub mod model;
pub mod plan;

pub use collect::{Options, collect, collect_comparison};
pub use error::Error;
pub use model::Report;

/// Writes `report` to `path` as HTML, whole or not at all (through a
/// temporary renamed when complete); an existing file is an error unless
/// `overwrite`.
pub fn write_html(report: &Report, path: &std::path::Path, overwrite: bool) -> Result<(), Error> {
    strata_store::output::write_atomically(
        path,
        html::render(report).as_bytes(),
        overwrite,
        false,
    )?;
    Ok(())
}
