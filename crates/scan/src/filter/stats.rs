//! A column's Parquet statistics over a list of row groups, read once as
//! Arrow arrays by parquet's [`StatisticsConverter`] (one converter, one
//! call per statistic for all the row groups), for pruning row groups.
//!
//! [`ColumnStats::read`] settles the row groups whose statistics alone
//! decide (empty, all null, or without usable statistics) and keeps the
//! min/max bounds of the others, which each comparison on the column
//! then compares with its literal in one pass.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, cast::AsArray, new_null_array, types::Float64Type,
};
use arrow_schema::{DataType, Field};
use parquet::{
    arrow::arrow_reader::statistics::StatisticsConverter, file::metadata::RowGroupMetaData,
};

/// What the statistics of one column say about each of a list of row
/// groups.
pub(super) struct ColumnStats {
    /// Per row group, the answer when the statistics alone give it: false
    /// for an empty or all-null row group, true where they cannot prove
    /// anything. True too for the row groups in [`Bounds::groups`], whose
    /// answer the bounds give.
    pub(super) verdict: Vec<bool>,
    /// The bounds of the row groups that a comparison decides.
    pub(super) bounds: Option<Bounds>,
}

/// Min/max bounds of some row groups, one element per row group.
pub(super) struct Bounds {
    /// The row groups' positions in the list read.
    pub(super) groups: Vec<usize>,
    /// Their minimums, never null (floats as `Float64`).
    pub(super) min: ArrayRef,
    /// Their maximums, never null (floats as `Float64`).
    pub(super) max: ArrayRef,
    /// Whether both bounds are values that occur (not widened by
    /// truncation).
    pub(super) exact: Vec<bool>,
}

impl ColumnStats {
    /// The statistics of Parquet leaf column `leaf` (of top-level column
    /// `column`, whose Arrow type is `data_type`) in `row_groups`.
    ///
    /// Conservative: missing or unreadable statistics, a leaf index out of
    /// range, old-style statistics (other than of signed integers),
    /// `INT96` timestamps, and float columns that may hold NaN leave the
    /// row group's answer true.
    pub(super) fn read(
        row_groups: &[&RowGroupMetaData],
        column: &str,
        leaf: usize,
        data_type: &DataType,
    ) -> ColumnStats {
        let mut verdict = vec![true; row_groups.len()];
        let values = match data_type {
            DataType::Dictionary(_, v) => v.as_ref(),
            t => t,
        };
        let signed_int = matches!(
            values,
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
        );
        let mut groups = Vec::with_capacity(row_groups.len());
        for (i, rg) in row_groups.iter().enumerate() {
            if rg.num_rows() <= 0 {
                verdict[i] = false;
                continue;
            }
            match rg.columns().get(leaf).and_then(|c| c.statistics()) {
                Some(stats) if signed_int || !stats.is_min_max_deprecated() => groups.push(i),
                _ => {}
            }
        }
        let unbounded = |verdict| ColumnStats {
            verdict,
            bounds: None,
        };
        let Some(&first) = groups.first() else {
            return unbounded(verdict);
        };
        let field = Field::new(column, data_type.clone(), true);
        let descr = row_groups[first].schema_descr();
        let Ok(conv) = StatisticsConverter::from_column_index(leaf, &field, descr) else {
            return unbounded(verdict);
        };
        let conv = conv.with_missing_null_counts_as_zero(false);
        let of = |groups: &[usize]| groups.iter().map(|&i| row_groups[i]).collect::<Vec<_>>();
        if descr.column(leaf).max_rep_level() == 0
            && let Ok(nulls) = conv.row_group_null_counts(of(&groups))
        {
            let mut k = 0;
            groups.retain(|&i| {
                let all_null =
                    nulls.is_valid(k) && nulls.value(k) >= row_groups[i].num_rows() as u64;
                k += 1;
                if all_null {
                    verdict[i] = false;
                }
                !all_null
            });
        }
        if groups.is_empty() {
            return unbounded(verdict);
        }
        let rgs = of(&groups);
        let (Some(mut min), Some(mut max)) = (
            per_group(&rgs, |g| conv.row_group_mins(g.iter().copied())),
            per_group(&rgs, |g| conv.row_group_maxes(g.iter().copied())),
        ) else {
            return unbounded(verdict);
        };
        let mut keep: Vec<bool> = (0..groups.len())
            .map(|k| min.is_valid(k) && max.is_valid(k))
            .collect();
        if matches!(
            values,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        ) {
            // Writers leave NaN out of min/max; only a count of zero NaNs
            // makes the range cover every value.
            let nans = conv.row_group_nan_counts(rgs.iter().copied()).ok();
            let no_nan = |k: usize| {
                nans.as_ref()
                    .is_some_and(|n| n.is_valid(k) && n.value(k) == 0)
            };
            let as_f64 = |a: &ArrayRef| arrow_cast::cast(a, &DataType::Float64).ok();
            let (Some(lo), Some(hi)) = (as_f64(&min), as_f64(&max)) else {
                return unbounded(verdict);
            };
            let (lo, hi) = (
                lo.as_primitive::<Float64Type>(),
                hi.as_primitive::<Float64Type>(),
            );
            let mut los = Vec::with_capacity(groups.len());
            let mut his = Vec::with_capacity(groups.len());
            for (k, keep) in keep.iter_mut().enumerate() {
                let (l, h) = (lo.value(k), hi.value(k));
                *keep = *keep
                    && no_nan(k)
                    && lo.is_valid(k)
                    && hi.is_valid(k)
                    && !l.is_nan()
                    && !h.is_nan();
                // Writers may record either zero for a range touching zero.
                los.push(if l == 0.0 { -0.0 } else { l });
                his.push(if h == 0.0 { 0.0 } else { h });
            }
            min = Arc::new(Float64Array::from(los));
            max = Arc::new(Float64Array::from(his));
        }
        let flags = |r: parquet::errors::Result<BooleanArray>| r.ok();
        let (min_exact, max_exact) = (
            flags(conv.row_group_is_min_value_exact(rgs.iter().copied())),
            flags(conv.row_group_is_max_value_exact(rgs.iter().copied())),
        );
        let exact_at = |e: &Option<BooleanArray>, k: usize| {
            e.as_ref().is_some_and(|e| e.is_valid(k) && e.value(k))
        };
        let exact: Vec<bool> = (0..groups.len())
            .filter(|&k| keep[k])
            .map(|k| exact_at(&min_exact, k) && exact_at(&max_exact, k))
            .collect();
        if keep.iter().any(|k| !k) {
            let mask = BooleanArray::from(keep.clone());
            let (Ok(lo), Ok(hi)) = (
                arrow_select::filter::filter(&min, &mask),
                arrow_select::filter::filter(&max, &mask),
            ) else {
                return unbounded(verdict);
            };
            (min, max) = (lo, hi);
            let mut k = 0;
            groups.retain(|_| {
                k += 1;
                keep[k - 1]
            });
        }
        ColumnStats {
            verdict,
            bounds: Some(Bounds {
                groups,
                min,
                max,
                exact,
            }),
        }
    }
}

/// `read` over all of `row_groups` in one call; where that fails, one
/// call per row group, a failed one giving a null (an unknown bound).
/// `None` when every call fails.
fn per_group<'a>(
    row_groups: &[&'a RowGroupMetaData],
    read: impl Fn(&[&'a RowGroupMetaData]) -> parquet::errors::Result<ArrayRef>,
) -> Option<ArrayRef> {
    if let Ok(all) = read(row_groups) {
        return Some(all);
    }
    let ones: Vec<Option<ArrayRef>> = row_groups
        .iter()
        .map(|rg| read(std::slice::from_ref(rg)).ok())
        .collect();
    let data_type = ones.iter().flatten().next()?.data_type().clone();
    let parts: Vec<ArrayRef> = ones
        .into_iter()
        .map(|a| a.unwrap_or_else(|| new_null_array(&data_type, 1)))
        .collect();
    let parts: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
    arrow_select::concat::concat(&parts).ok()
}
