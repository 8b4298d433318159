//! Row encoding and decoding, strata-row against arrow-row 60, on the
//! cases of `crates/row/benches` (8192 rows: 50 u64 columns with and
//! without nulls, 10 mixed columns, 8 string columns). Each case is checked
//! to produce arrow-row's bytes before it is timed; a timed iteration
//! repeats the call to about 20 ms, and samples are per call.

use std::hint::black_box;
use std::sync::Arc;

#[path = "../../../row/benches/support/cases.rs"]
#[allow(dead_code, missing_docs)]
mod shared;

use super::common::repeated;
use crate::{Case, Config, Error, Unit, case_err};

/// Each timed iteration repeats a case's call until it takes about this
/// long (one call is about a millisecond).
const MIN_ITERATION_S: f64 = 0.02;

/// The cases.
pub fn cases(cfg: &Config) -> Result<Vec<Case>, Error> {
    let mut out = vec![];
    let case = |name: String, subject: &str, f: Box<dyn FnMut() -> Result<(), Error>>| {
        repeated(
            cfg,
            &name,
            subject,
            Unit::Rows,
            shared::ROWS as f64,
            MIN_ITERATION_S,
            f,
        )
    };
    for (name, cols) in shared::cases() {
        let (theirs, ours) = shared::encoders(&cols);
        let (theirs, ours, cols) = (Arc::new(theirs), Arc::new(ours), Arc::new(cols));
        let encoded_theirs = theirs.convert_columns(&cols).map_err(case_err)?;
        let encoded_ours = ours.encode(&cols).map_err(case_err)?;
        {
            let (cols, theirs) = (cols.clone(), theirs.clone());
            out.push(case(
                format!("encode/{name}"),
                "arrow-row",
                Box::new(move || {
                    black_box(theirs.convert_columns(black_box(&cols)).map_err(case_err)?);
                    Ok(())
                }),
            )?);
        }
        {
            let (cols, ours) = (cols.clone(), ours.clone());
            out.push(case(
                format!("encode/{name}"),
                "strata",
                Box::new(move || {
                    black_box(ours.encode(black_box(&cols)).map_err(case_err)?);
                    Ok(())
                }),
            )?);
        }
        out.push(case(
            format!("decode/{name}"),
            "arrow-row",
            Box::new(move || {
                black_box(theirs.convert_rows(&encoded_theirs).map_err(case_err)?);
                Ok(())
            }),
        )?);
        out.push(case(
            format!("decode/{name}"),
            "strata",
            Box::new(move || {
                black_box(ours.decode(&encoded_ours).map_err(case_err)?);
                Ok(())
            }),
        )?);
    }
    Ok(out)
}
