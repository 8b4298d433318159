//! Foreign keys counted exactly: every value of the child column against
//! every key of the parent's, both sorted and merged (no hashing, no
//! sampling): orphans, parents referenced, children per parent.

use arrow_array::cast::AsArray as _;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

use crate::model::ReferenceReport;

/// The widest fan-out counted on its own; more is one last bin.
pub(crate) const FANOUT_BINS: u64 = 50;

/// Every non-null value of one column, as integers or as bytes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Keys {
    ints: Vec<i128>,
    bytes: Vec<Box<[u8]>>,
    /// Values of a type keys are not counted for.
    pub unsupported: bool,
}

impl Keys {
    /// Adds the values of column `name` of `batch` (nothing when absent).
    pub(crate) fn add_column(&mut self, batch: &RecordBatch, name: &str) {
        if let Some(a) = batch.column_by_name(name) {
            self.add(a.as_ref());
        }
    }

    fn add(&mut self, a: &dyn Array) {
        use DataType as D;
        macro_rules! ints {
            ($t:ty) => {
                self.ints
                    .extend(a.as_primitive::<$t>().iter().flatten().map(|v| v as i128))
            };
        }
        match a.data_type() {
            D::Int8 => ints!(Int8Type),
            D::Int16 => ints!(Int16Type),
            D::Int32 => ints!(Int32Type),
            D::Int64 => ints!(Int64Type),
            D::UInt8 => ints!(UInt8Type),
            D::UInt16 => ints!(UInt16Type),
            D::UInt32 => ints!(UInt32Type),
            D::UInt64 => ints!(UInt64Type),
            D::Date32 => ints!(Date32Type),
            D::Decimal128(..) => ints!(Decimal128Type),
            D::Utf8 => self.bytes.extend(
                a.as_string::<i32>()
                    .iter()
                    .flatten()
                    .map(|s| s.as_bytes().into()),
            ),
            D::LargeUtf8 => self.bytes.extend(
                a.as_string::<i64>()
                    .iter()
                    .flatten()
                    .map(|s| s.as_bytes().into()),
            ),
            D::Utf8View => self.bytes.extend(
                a.as_string_view()
                    .iter()
                    .flatten()
                    .map(|s| s.as_bytes().into()),
            ),
            D::Binary => self
                .bytes
                .extend(a.as_binary::<i32>().iter().flatten().map(Into::into)),
            D::FixedSizeBinary(_) => self
                .bytes
                .extend(a.as_fixed_size_binary().iter().flatten().map(Into::into)),
            D::Dictionary(_, v) => {
                if let Ok(plain) = arrow_cast::cast(a, v) {
                    self.add(plain.as_ref());
                } else {
                    self.unsupported = true;
                }
            }
            _ => self.unsupported = true,
        }
    }
}

/// A reference's counts: child values checked, orphans among them,
/// parent keys referenced, and the fan-out.
pub(crate) type Counted = (u64, u64, u64, Vec<(u64, u64)>);

/// Counts `child`'s values against `parent`'s keys (`parent_rows` rows).
pub(crate) fn count(child: Keys, parent: Keys, parent_rows: u64) -> Option<Counted> {
    if child.unsupported || parent.unsupported {
        return None;
    }
    // Integers against integers, bytes against bytes; a child of one kind
    // and a parent of the other has no parent for any value.
    let ints = merge(child.ints, parent.ints);
    let bytes = merge(child.bytes, parent.bytes);
    let checked = ints.checked + bytes.checked;
    let orphans = ints.orphans + bytes.orphans;
    let referenced = ints.referenced + bytes.referenced;
    let mut fanout = vec![0u64; FANOUT_BINS as usize + 2];
    for (k, n) in ints.fanout.into_iter().chain(bytes.fanout) {
        fanout[k.min(FANOUT_BINS + 1) as usize] += n;
    }
    // Parent rows whose key is null or repeated are parents of nothing
    // counted here: rows beyond the distinct keys count as zero.
    let keyed: u64 = fanout.iter().sum();
    fanout[0] += parent_rows.saturating_sub(keyed);
    let last = fanout.iter().rposition(|&n| n > 0).unwrap_or(0);
    let fanout = fanout[..=last]
        .iter()
        .enumerate()
        .map(|(k, &n)| (k as u64, n))
        .collect();
    Some((checked, orphans, referenced, fanout))
}

struct Merged {
    checked: u64,
    orphans: u64,
    referenced: u64,
    /// (children, distinct parent keys with that many).
    fanout: Vec<(u64, u64)>,
}

fn merge<T: Ord>(mut child: Vec<T>, mut parent: Vec<T>) -> Merged {
    child.sort_unstable();
    parent.sort_unstable();
    parent.dedup();
    let mut out = Merged {
        checked: child.len() as u64,
        orphans: 0,
        referenced: 0,
        fanout: Vec::new(),
    };
    let mut by: std::collections::BTreeMap<u64, u64> = Default::default();
    let mut i = 0;
    for p in &parent {
        while i < child.len() && child[i] < *p {
            out.orphans += 1;
            i += 1;
        }
        let start = i;
        while i < child.len() && child[i] == *p {
            i += 1;
        }
        let n = (i - start) as u64;
        if n > 0 {
            out.referenced += 1;
        }
        *by.entry(n).or_insert(0) += 1;
    }
    out.orphans += (child.len() - i) as u64;
    out.fanout = by.into_iter().collect();
    out
}

/// A reference's report from its counts.
pub(crate) fn report(
    column: &str,
    parent: &str,
    parent_column: &str,
    source: &str,
    counted: Counted,
    parent_rows: u64,
) -> ReferenceReport {
    let (checked, orphans, referenced, fanout) = counted;
    ReferenceReport {
        column: column.to_string(),
        parent: parent.to_string(),
        parent_column: parent_column.to_string(),
        checked,
        orphans,
        parent_rows,
        referenced,
        fanout,
        source: source.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_counts_orphans_and_fanout() {
        let child = vec![1i128, 1, 3, 9, 9, 9, -4];
        let parent = vec![1i128, 2, 3, 4];
        let m = merge(child, parent);
        assert_eq!((m.checked, m.orphans, m.referenced), (7, 4, 2));
        assert_eq!(m.fanout, vec![(0, 2), (1, 1), (2, 1)]);
    }

    #[test]
    fn fanout_past_fifty_is_one_bin() {
        let child = Keys {
            ints: std::iter::repeat_n(1i128, 70).chain([2]).collect(),
            ..Keys::default()
        };
        let parent = Keys {
            ints: vec![1, 2, 3],
            ..Keys::default()
        };
        let (checked, orphans, referenced, fanout) = count(child, parent, 4).unwrap();
        assert_eq!((checked, orphans, referenced), (71, 0, 2));
        assert_eq!(fanout.first(), Some(&(0, 2)));
        assert_eq!(fanout.last(), Some(&(51, 1)));
        assert_eq!(fanout.iter().map(|f| f.1).sum::<u64>(), 4);
    }
}
