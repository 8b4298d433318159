//! The same planner over a deliberately wide array-of-structs layout, for
//! cache comparisons: one 112-byte [`FatRowset`] per rowset with the hot
//! fields where Kudu's pre-2017 `RowSetInfo` kept them (`size_mb` at 12,
//! `cdf_min` at 88, `cdf_max` at 96, `density` at 104) and the cold keys and
//! sizes in between, so every hot access drags a mostly cold cache line
//! along. [`plan`] gives exactly the plan [`super::plan`] gives.

use super::{
    Plan, PlannerOptions,
    cdf::{self, Order},
};
use crate::rowsets::RowsetInput;

/// One rowset, hot and cold data together (112 bytes on 64-bit targets).
#[derive(Debug, Clone, PartialEq)]
#[repr(C)]
pub struct FatRowset {
    /// Input index.
    pub id: u32,
    /// 1 when the rowset has key bounds (always, here).
    pub has_bounds: u32,
    /// Unused; keeps `size_mb` at Kudu's offset 12.
    pub reserved: u32,
    /// Knapsack weight, MB (offset 12).
    pub size_mb: u32,
    /// On-disk size in bytes.
    pub size_bytes: u64,
    /// Smallest key (owned copy).
    pub min_key: Vec<u8>,
    /// Largest key (owned copy).
    pub max_key: Vec<u8>,
    /// Knapsack value.
    pub value: f64,
    /// Normalised width, `cdf_max - cdf_min`.
    pub width: f64,
    /// CDF at the min key (offset 88).
    pub cdf_min: f64,
    /// CDF at the max key (offset 96).
    pub cdf_max: f64,
    /// Value per MB (offset 104).
    pub density: f64,
}

/// One sorted order as a vector of [`FatRowset`].
struct FatOrder(Vec<FatRowset>);

impl Order for FatOrder {
    #[inline]
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn cdf_min(&self, i: usize) -> f64 {
        self.0[i].cdf_min
    }
    #[inline]
    fn cdf_max(&self, i: usize) -> f64 {
        self.0[i].cdf_max
    }
    #[inline]
    fn value(&self, i: usize) -> f64 {
        self.0[i].value
    }
    #[inline]
    fn density(&self, i: usize) -> f64 {
        self.0[i].density
    }
    #[inline]
    fn size_mb(&self, i: usize) -> u32 {
        self.0[i].size_mb
    }
    #[inline]
    fn id(&self, i: usize) -> u32 {
        self.0[i].id
    }
}

fn fatten(inputs: &[RowsetInput], s: &cdf::Soa) -> FatOrder {
    FatOrder(
        (0..s.id.len())
            .map(|k| {
                let r = &inputs[s.id[k] as usize];
                FatRowset {
                    id: s.id[k],
                    has_bounds: 1,
                    reserved: 0,
                    size_mb: s.size_mb[k],
                    size_bytes: r.size_bytes,
                    min_key: r.min_key.clone(),
                    max_key: r.max_key.clone(),
                    value: s.value[k],
                    width: s.cdf_max[k] - s.cdf_min[k],
                    cdf_min: s.cdf_min[k],
                    cdf_max: s.cdf_max[k],
                    density: s.density[k],
                }
            })
            .collect(),
    )
}

/// [`super::plan`] over the fat layout; the result is identical.
pub fn plan(inputs: &[RowsetInput], opts: &PlannerOptions) -> Plan {
    let prepared = cdf::prepare(inputs, &opts.rules);
    let (quality, picked) = if inputs.len() < 2 {
        (0.0, Vec::new())
    } else {
        let by_min = fatten(inputs, &prepared.by_min);
        let by_max = fatten(inputs, &prepared.by_max);
        super::run(&by_min, &by_max, opts, super::Scan::Pruned)
    };
    super::finish(inputs, &prepared, quality, picked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[cfg(target_pointer_width = "64")]
    #[test]
    fn layout_matches_kudus_offsets() {
        assert_eq!(size_of::<FatRowset>(), 112);
        assert_eq!(offset_of!(FatRowset, size_mb), 12);
        assert_eq!(offset_of!(FatRowset, cdf_min), 88);
        assert_eq!(offset_of!(FatRowset, cdf_max), 96);
        assert_eq!(offset_of!(FatRowset, density), 104);
    }
}
