//! [`SortField`]: one column of a row encoding (type, order, nullability),
//! and the checks and byte constants every column encoder shares.

use arrow_schema::{DataType, SortOptions};

use crate::Error;

/// One column of a row encoding: its data type, its [`SortOptions`] and
/// whether it may hold nulls.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortField {
    pub(crate) data_type: DataType,
    pub(crate) options: SortOptions,
    pub(crate) non_nullable: bool,
}

impl SortField {
    /// A field sorted ascending with nulls first (the [`SortOptions`]
    /// default).
    pub fn new(data_type: DataType) -> Self {
        SortField {
            data_type,
            options: SortOptions::default(),
            non_nullable: false,
        }
    }

    /// Sets the sort options.
    pub fn with_options(mut self, options: SortOptions) -> Self {
        self.options = options;
        self
    }

    /// Declares that the column never holds nulls. Fixed-width fields
    /// (primitives, booleans, fixed-size binary) then drop their validity
    /// byte, and structs and fixed-size lists theirs: the byte would be the
    /// same in every row, so order is kept. Encoding an array with nulls in
    /// such a field is an error. Other types encode as before; the promise
    /// is still checked. The bytes then differ from arrow-row's.
    pub fn non_nullable(mut self) -> Self {
        self.non_nullable = true;
        self
    }

    /// The data type.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// The sort options.
    pub fn options(&self) -> SortOptions {
        self.options
    }

    /// Whether the field was declared non-nullable.
    pub fn is_non_nullable(&self) -> bool {
        self.non_nullable
    }
}

/// Checks that `columns` match `types` in number, length and type, and
/// returns the number of rows.
pub(crate) fn check_columns<'a>(
    columns: &[arrow_array::ArrayRef],
    types: impl ExactSizeIterator<Item = &'a DataType>,
) -> Result<usize, Error> {
    if columns.len() != types.len() {
        return Err(Error::InvalidArgument(format!(
            "expected {} columns, got {}",
            types.len(),
            columns.len()
        )));
    }
    let n = columns.first().map_or(0, |c| c.len());
    for (i, (col, t)) in columns.iter().zip(types).enumerate() {
        if col.len() != n {
            return Err(Error::InvalidArgument(format!(
                "column {i} has {} rows, column 0 has {n}",
                col.len()
            )));
        }
        if !col.data_type().equals_datatype(t) {
            return Err(Error::InvalidArgument(format!(
                "column {i} is {}, the field is {t}",
                col.data_type()
            )));
        }
    }
    Ok(n)
}

/// The byte a null starts with: 0x00 when nulls sort first, else 0xFF.
#[inline]
pub(crate) fn null_sentinel(options: SortOptions) -> u8 {
    if options.nulls_first { 0x00 } else { 0xFF }
}

/// 0xFF when descending (value bytes are inverted), else 0x00.
#[inline]
pub(crate) fn invert_mask(options: SortOptions) -> u8 {
    if options.descending { 0xFF } else { 0x00 }
}
