//! Drawing a [`Report`] as one self-contained HTML page: see the crate
//! docs.

use crate::model::Report;

/// The page.
pub fn render(report: &Report) -> String {
    format!("<!DOCTYPE html><title>{}</title>", report.title)
}
