//! Row encoding and decoding, strata-row against arrow-row 60, on the
//! cases of `crates/row/benches` (8192 rows: 50 u64 columns with and
//! without nulls, 10 mixed columns, 8 string columns). Each case is checked
//! to produce arrow-row's bytes before it is timed.

use std::hint::black_box;
use std::sync::Arc;

#[path = "../../../row/benches/support/cases.rs"]
#[allow(dead_code, missing_docs)]
mod shared;

use crate::{Case, Config, Error, Unit, case_err};

/// The cases.
pub fn cases(_cfg: &Config) -> Result<Vec<Case>, Error> {
    let mut out = vec![];
    for (name, cols) in shared::cases() {
        let rows = shared::ROWS as f64;
        let (theirs, ours) = shared::encoders(&cols);
        let (theirs, ours, cols) = (Arc::new(theirs), Arc::new(ours), Arc::new(cols));
        let encoded_theirs = theirs.convert_columns(&cols).map_err(case_err)?;
        let encoded_ours = ours.encode(&cols).map_err(case_err)?;
        {
            let (cols, theirs) = (cols.clone(), theirs.clone());
            out.push(Case::new(
                format!("encode/{name}"),
                "arrow-row",
                Unit::Rows,
                rows,
                move || {
                    black_box(theirs.convert_columns(black_box(&cols)).map_err(case_err)?);
                    Ok(())
                },
            ));
        }
        {
            let (cols, ours) = (cols.clone(), ours.clone());
            out.push(Case::new(
                format!("encode/{name}"),
                "strata",
                Unit::Rows,
                rows,
                move || {
                    black_box(ours.encode(black_box(&cols)).map_err(case_err)?);
                    Ok(())
                },
            ));
        }
        out.push(Case::new(
            format!("decode/{name}"),
            "arrow-row",
            Unit::Rows,
            rows,
            move || {
                black_box(theirs.convert_rows(&encoded_theirs).map_err(case_err)?);
                Ok(())
            },
        ));
        out.push(Case::new(
            format!("decode/{name}"),
            "strata",
            Unit::Rows,
            rows,
            move || {
                black_box(ours.decode(&encoded_ours).map_err(case_err)?);
                Ok(())
            },
        ));
    }
    Ok(out)
}
