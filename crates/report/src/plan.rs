//! A compaction plan's key ranges, before and after: the page
//! `strata compact plan --report` writes.
//!
//! The files before are drawn as they are; after the plan, the files it
//! does not pick stay, and each group of picked files whose ranges
//! overlap (or touch) becomes one merged output covering their union. So
//! the overlap the plan removes is what the two drawings differ by.

use crate::model::{KeyRange, PlanFile, PlanReport};

/// One file a plan was made over: its name, size and key bounds as
/// byte-comparable keys.
#[derive(Debug, Clone)]
pub struct PlannedFile {
    /// Its name.
    pub name: String,
    /// Its size.
    pub bytes: u64,
    /// Its smallest key (byte-comparable).
    pub min_key: Vec<u8>,
    /// Its largest key (byte-comparable).
    pub max_key: Vec<u8>,
}

/// The plan's page data: `files` before, with `picked` (indices into
/// `files`) marked, and the files after. `label` writes a key as text.
pub fn plan_report(
    name: &str,
    key: &str,
    files: &[PlannedFile],
    picked: &[usize],
    notes: Vec<String>,
    label: impl Fn(&[u8]) -> String,
) -> PlanReport {
    let is_picked = |i: usize| picked.contains(&i);
    // Merged groups: picked files sorted by their smallest key, joined
    // while the next one starts at or before the group's largest key.
    let mut order: Vec<usize> = picked
        .iter()
        .copied()
        .filter(|&i| i < files.len())
        .collect();
    order.sort_by(|&a, &b| files[a].min_key.cmp(&files[b].min_key));
    order.dedup();
    let mut groups: Vec<(Vec<u8>, Vec<u8>, u64, usize)> = Vec::new();
    for i in order {
        let f = &files[i];
        match groups.last_mut() {
            Some(g) if f.min_key <= g.1 => {
                if f.max_key > g.1 {
                    g.1.clone_from(&f.max_key);
                }
                g.2 += f.bytes;
                g.3 += 1;
            }
            _ => groups.push((f.min_key.clone(), f.max_key.clone(), f.bytes, 1)),
        }
    }
    // One axis for both drawings: every bound, ranked.
    let mut ranges: Vec<(&[u8], &[u8])> = files
        .iter()
        .map(|f| (f.min_key.as_slice(), f.max_key.as_slice()))
        .collect();
    ranges.extend(groups.iter().map(|g| (g.0.as_slice(), g.1.as_slice())));
    let placed = KeyRange::ranked(&ranges);
    let range = |i: usize, lo: &[u8], hi: &[u8]| KeyRange {
        lo: placed[i].0,
        hi: placed[i].1,
        lo_label: label(lo),
        hi_label: label(hi),
    };
    let before: Vec<PlanFile> = files
        .iter()
        .enumerate()
        .map(|(i, f)| PlanFile {
            name: f.name.clone(),
            bytes: f.bytes,
            range: range(i, &f.min_key, &f.max_key),
            picked: is_picked(i),
        })
        .collect();
    let mut after: Vec<PlanFile> = before.iter().filter(|f| !f.picked).cloned().collect();
    for (j, g) in groups.iter().enumerate() {
        after.push(PlanFile {
            name: format!("merged {} ({} files)", j + 1, g.3),
            bytes: g.2,
            range: range(files.len() + j, &g.0, &g.1),
            picked: true,
        });
    }
    after.sort_by(|a, b| a.range.lo.total_cmp(&b.range.lo));
    PlanReport {
        name: name.to_string(),
        key: key.to_string(),
        before,
        after,
        notes,
    }
}

/// A key's bytes as text: printable ASCII as is, other bytes as `\xNN`,
/// at most `max` characters (then `…`).
pub fn escape_key(bytes: &[u8], max: usize) -> String {
    let mut out = String::new();
    for &b in bytes {
        if out.chars().count() >= max {
            out.push('…');
            break;
        }
        if b.is_ascii_graphic() || b == b' ' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, lo: &str, hi: &str) -> PlannedFile {
        PlannedFile {
            name: name.into(),
            bytes: 10,
            min_key: lo.as_bytes().to_vec(),
            max_key: hi.as_bytes().to_vec(),
        }
    }

    #[test]
    fn picked_overlapping_files_become_one_output_per_group() {
        let files = [
            file("a", "b", "f"),
            file("b", "d", "h"),
            file("c", "g", "k"),
            file("d", "m", "p"),
            file("e", "n", "q"),
        ];
        // a, b, c chain into one group; d and e overlap into another.
        let r = plan_report("ds", "id", &files, &[0, 1, 2, 4, 3], vec![], |k| {
            escape_key(k, 8)
        });
        assert_eq!(r.before.iter().filter(|f| f.picked).count(), 5);
        assert_eq!(r.after.len(), 2);
        assert_eq!(r.after[0].range.lo_label, "b");
        assert_eq!(r.after[0].range.hi_label, "k");
        assert_eq!(r.after[0].bytes, 30);
        assert_eq!(r.after[1].range.lo_label, "m");
        assert_eq!(r.after[1].range.hi_label, "q");
        // The axis is shared: the first output starts where file a does.
        assert_eq!(r.after[0].range.lo, r.before[0].range.lo);
        assert_eq!(r.after[1].range.hi, r.before[4].range.hi);
    }

    #[test]
    fn unpicked_files_stay_and_nothing_picked_changes_nothing() {
        let files = [file("a", "a", "c"), file("b", "b", "d")];
        let r = plan_report("ds", "id", &files, &[], vec![], |k| escape_key(k, 8));
        assert_eq!(r.after.len(), 2);
        assert!(r.after.iter().all(|f| !f.picked));
        // An index past the files is ignored, not a panic.
        let r = plan_report("ds", "id", &files, &[7], vec![], |k| escape_key(k, 8));
        assert_eq!(r.after.len(), 2);
    }

    #[test]
    fn keys_are_escaped_and_cut() {
        assert_eq!(escape_key(&[b'a', 0, 0xff], 10), "a\\x00\\xff");
        assert_eq!(escape_key(b"abcdef", 3), "abc…");
    }
}
