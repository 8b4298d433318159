//! Which rows a history changes at each version: a pure function of the
//! seed, the row and the version.
//!
//! A row is its id, the row number the table's generator makes it from.
//! Version 0 holds rows `0..n0`. Version `v` inserts the rows
//! `born_end(v-1)..born_end(v)`, as many as `insert` times the rows
//! expected alive before it (deletes and inserts so far at their
//! rates), so that the ids of every version are known without looking
//! at any row. Each row alive before `v` is deleted at `v` with
//! probability `delete * w`, else updated with probability `update * w`,
//! where `w` is the row's heat: 1 for every row, or with hot keys its
//! Zipf weight `rank^-s` scaled so that the weights average 1 over all
//! the history's rows (rank = the row's place in a fixed permutation of
//! them, so that the hot rows spread over the table). Deletes fall on
//! every row alike (`delete`), so the rows alive at any version keep
//! their share of the heat and the hottest rows are not used up; an
//! update's chance is capped at `1 - delete`, and the scale is found so
//! that the capped chances still add up to the rate. The draw of row
//! `id` at version `v` is `unit(StreamKey(seed, v).first(id))`: no row,
//! version or part depends on another.

use strata_gen::{Changes, dist::unit, rng::StreamKey};

/// What a version does to a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// The row is new (Debezium's `c`).
    Insert,
    /// Its drawn fields are drawn again (`u`).
    Update,
    /// It is gone (`d`).
    Delete,
}

impl Op {
    /// Debezium's letter for the operation.
    pub fn letter(self) -> &'static str {
        match self {
            Op::Insert => "c",
            Op::Update => "u",
            Op::Delete => "d",
        }
    }
}

/// A row at a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Not inserted yet.
    Unborn,
    /// Alive; its drawn fields are those of image `image` (0: as
    /// generated; `u`: as version `u`'s update drew them).
    Alive {
        /// The version whose draws the row holds.
        image: u64,
    },
    /// Deleted at this version.
    Deleted(u64),
}

/// The rows' heat under hot keys.
#[derive(Debug, Clone)]
struct Heat {
    s: f64,
    total: u64,
    step: u64,
    offset: u64,
    /// The weights' scale: a row of rank `k` changes with probability
    /// `min(1, rate * scale * (k + 1)^-s)`, which sums to `rate` times
    /// the rows over them.
    scale: f64,
}

impl Heat {
    /// The heat of `total` rows with exponent `s` for an update rate
    /// `rate` of chances capped at `cap`: the scale found so that the
    /// capped chances still add up to the rate (the rows at the cap take
    /// the hottest ranks).
    fn new(s: f64, total: u64, seed: u64, rate: f64, cap: f64) -> Heat {
        let total = total.max(1);
        let n = total as f64;
        let mut scale = n / harmonic(total, s);
        if rate > 0.0 && cap > 0.0 {
            let mut capped = 0u64;
            for _ in 0..100 {
                let rest = harmonic(total, s) - harmonic(capped, s);
                if rest <= 0.0 {
                    break;
                }
                scale = (rate * n - capped as f64 * cap) / (rate * rest);
                let now = ((rate * scale / cap).powf(1.0 / s).floor() as u64).min(total);
                if now == capped {
                    break;
                }
                capped = now;
            }
        }
        Heat {
            s,
            total,
            step: coprime_step(total),
            offset: StreamKey::new(seed, u64::MAX).first(0) % total,
            scale,
        }
    }

    /// The row's rank (0 the hottest).
    fn rank(&self, id: u64) -> u64 {
        ((u128::from(id % self.total) * u128::from(self.step) + u128::from(self.offset))
            % u128::from(self.total)) as u64
    }

    /// The row's weight: 1 on average before the cap.
    fn weight(&self, id: u64) -> f64 {
        ((self.rank(id) + 1) as f64).powf(-self.s) * self.scale
    }
}

/// A step coprime to `n` near `n` over the golden ratio: `i * step % n`
/// visits every residue once.
fn coprime_step(n: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    let mut step = ((n as f64) * 0.618_033_988_75) as u64;
    step = step.max(1);
    while gcd(step, n) != 1 {
        step += 1;
    }
    step
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `sum_{k=1..n} k^-s`: the first terms summed, the rest by its integral
/// (Euler-Maclaurin's first term; relative error below 1e-9 past them).
fn harmonic(n: u64, s: f64) -> f64 {
    const EXACT: u64 = 100_000;
    let head: f64 = (1..=n.min(EXACT)).map(|k| (k as f64).powf(-s)).sum();
    if n <= EXACT {
        return head;
    }
    let (a, b) = (EXACT as f64 + 0.5, n as f64 + 0.5);
    let tail = if (s - 1.0).abs() < 1e-12 {
        (b / a).ln()
    } else {
        (b.powf(1.0 - s) - a.powf(1.0 - s)) / (1.0 - s)
    };
    head + tail
}

/// A table's history: its versions' inserted rows and each row's fate.
#[derive(Debug, Clone)]
pub struct History {
    versions: u64,
    update: f64,
    delete: f64,
    /// `born_end[v]`: the rows inserted by version `v` (`born_end[0]` is
    /// the table's rows at version 0).
    born_end: Vec<u64>,
    heat: Option<Heat>,
    seed: u64,
    /// Rows never deleted (`keep_parent`: the rows with children), by id.
    protected: Option<std::sync::Arc<Vec<bool>>>,
}

impl History {
    /// The history `changes` writes over a table of `n0` rows at version
    /// 0, for `seed`.
    pub fn new(changes: &Changes, n0: u64, seed: u64) -> History {
        let seed = strata_gen::rng::mix64(seed ^ 0x6368_616e_6765_7321);
        let mut born_end = Vec::with_capacity(changes.versions as usize + 1);
        born_end.push(n0);
        let mut alive = n0 as f64;
        for _ in 0..changes.versions {
            let inserted = (changes.insert * alive).round() as u64;
            let last = *born_end.last().unwrap_or(&n0);
            born_end.push(last.saturating_add(inserted));
            alive = alive * (1.0 - changes.delete) + inserted as f64;
        }
        let total = *born_end.last().unwrap_or(&n0);
        History {
            versions: changes.versions,
            update: changes.update,
            delete: changes.delete,
            heat: changes
                .zipf
                .map(|s| Heat::new(s, total, seed, changes.update, 1.0 - changes.delete)),
            born_end,
            seed,
            protected: None,
        }
    }

    /// Keeps the rows `protected` marks (by id) from ever being deleted:
    /// a version that would delete one leaves it (`keep_parent`, for the
    /// rows that have children).
    pub fn protect(&mut self, protected: Vec<bool>) {
        self.protected = Some(std::sync::Arc::new(protected));
    }

    /// The ids of every version: `0..ids_at(versions())`.
    pub fn total(&self) -> u64 {
        self.ids_at(self.versions)
    }

    /// Versions after version 0.
    pub fn versions(&self) -> u64 {
        self.versions
    }

    /// The ids that exist at version `v` (alive or deleted): `0..end`.
    pub fn ids_at(&self, v: u64) -> u64 {
        self.born_end[v.min(self.versions) as usize]
    }

    /// The version that inserted row `id` (0 for the table's own rows).
    pub fn born(&self, id: u64) -> u64 {
        self.born_end.partition_point(|&end| end <= id) as u64
    }

    /// The probabilities that a version deletes and updates an alive
    /// row `id`.
    pub fn chances(&self, id: u64) -> (f64, f64) {
        // Deletes fall on every row alike, so the rows alive at any
        // version hold their share of the heat; updates follow it.
        let w = self.heat.as_ref().map_or(1.0, |h| h.weight(id));
        (self.delete, (self.update * w).min(1.0 - self.delete))
    }

    /// Whether row `id` is among the hottest `share` of the history's
    /// rows (by its heat's rank; by id order without hot keys).
    pub fn is_hot(&self, id: u64, share: f64) -> bool {
        let total = self.born_end.last().copied().unwrap_or(0).max(1);
        let rank = self.heat.as_ref().map_or(id, |h| h.rank(id));
        (rank as f64) < share * total as f64
    }

    /// What version `v` does to row `id` when it is alive before `v`
    /// (born before `v`); `None`: nothing.
    pub fn op(&self, id: u64, v: u64) -> Option<Op> {
        let (d, u) = self.chances(id);
        let x = unit(StreamKey::new(self.seed, v).first(id));
        if x < d {
            let kept = self
                .protected
                .as_ref()
                .is_some_and(|p| p.get(id as usize).copied().unwrap_or(false));
            (!kept).then_some(Op::Delete)
        } else if x < d + u {
            Some(Op::Update)
        } else {
            None
        }
    }

    /// Row `id` at version `v`.
    pub fn state(&self, id: u64, v: u64) -> State {
        let born = self.born(id);
        if born > v {
            return State::Unborn;
        }
        let mut image = 0;
        for w in born + 1..=v {
            match self.op(id, w) {
                Some(Op::Delete) => return State::Deleted(w),
                Some(Op::Update) => image = w,
                _ => {}
            }
        }
        State::Alive { image }
    }

    /// Row `id`'s history as slowly changing dimension rows: each image
    /// it had, the version from which it held (its insert or update)
    /// and the one at which it stopped (its next update or its delete;
    /// `None` while it holds at the last version).
    pub fn segments(&self, id: u64) -> Vec<(u64, u64, Option<u64>)> {
        let born = self.born(id);
        if born > self.versions {
            return Vec::new();
        }
        let (mut out, mut image, mut from) = (Vec::new(), 0, born);
        for w in born + 1..=self.versions {
            match self.op(id, w) {
                Some(Op::Update) => {
                    out.push((image, from, Some(w)));
                    (image, from) = (w, w);
                }
                Some(Op::Delete) => {
                    out.push((image, from, Some(w)));
                    return out;
                }
                _ => {}
            }
        }
        out.push((image, from, None));
        out
    }

    /// What version `v` (from 1) does to row `id`, with its image before
    /// (`None` for an insert) and after (`None` for a delete); `None`
    /// when nothing happens to it.
    pub fn change(&self, id: u64, v: u64) -> Option<(Op, Option<u64>, Option<u64>)> {
        let born = self.born(id);
        if born == v && v > 0 {
            return Some((Op::Insert, None, Some(0)));
        }
        if born > v || v == 0 {
            return None;
        }
        let State::Alive { image } = self.state(id, v - 1) else {
            return None;
        };
        match self.op(id, v)? {
            Op::Delete => Some((Op::Delete, Some(image), None)),
            Op::Update => Some((Op::Update, Some(image), Some(v))),
            Op::Insert => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use strata_gen::OnDelete;

    use super::*;

    fn changes(insert: f64, update: f64, delete: f64, zipf: Option<f64>) -> Changes {
        Changes {
            line: 1,
            versions: 10,
            insert,
            update,
            delete,
            zipf,
            update_fields: vec!["v".into()],
            on_delete: OnDelete::Cascade,
        }
    }

    #[test]
    fn inserted_rows_follow_the_expected_alive_count() {
        let h = History::new(&changes(0.1, 0.0, 0.05, None), 1000, 7);
        assert_eq!(h.ids_at(0), 1000);
        assert_eq!(h.ids_at(1), 1100);
        // 1000 * 0.95 + 100 = 1050 alive; 105 more.
        assert_eq!(h.ids_at(2), 1205);
        assert_eq!(h.born(999), 0);
        assert_eq!(h.born(1000), 1);
        assert_eq!(h.born(1204), 2);
        assert_eq!(h.state(1100, 1), State::Unborn);
        assert_eq!(h.change(1000, 1), Some((Op::Insert, None, Some(0))));
    }

    #[test]
    fn realised_shares_match_the_rates_and_states_agree_with_changes() {
        let h = History::new(&changes(0.02, 0.05, 0.01, None), 200_000, 42);
        let mut counts = [0u64; 3];
        let mut alive_before = 0u64;
        for id in 0..h.ids_at(1) {
            if h.born(id) == 0 {
                alive_before += 1;
            }
            match h.change(id, 1).map(|c| c.0) {
                Some(Op::Insert) => counts[0] += 1,
                Some(Op::Update) => counts[1] += 1,
                Some(Op::Delete) => counts[2] += 1,
                None => {}
            }
        }
        assert_eq!(counts[0], 4000);
        for (got, p) in [(counts[1], 0.05), (counts[2], 0.01)] {
            let n = alive_before as f64;
            let se = (n * p * (1.0 - p)).sqrt();
            assert!((got as f64 - n * p).abs() < 5.0 * se, "{got} vs {}", n * p);
        }
        // A row's state walks its changes.
        for id in (0..h.ids_at(10)).step_by(97) {
            let mut state = if h.born(id) == 0 {
                State::Alive { image: 0 }
            } else {
                State::Unborn
            };
            for v in 1..=10 {
                match h.change(id, v) {
                    Some((Op::Insert, _, _)) => state = State::Alive { image: 0 },
                    Some((Op::Update, _, _)) => state = State::Alive { image: v },
                    Some((Op::Delete, _, _)) => state = State::Deleted(v),
                    None => {}
                }
                assert_eq!(h.state(id, v), state, "row {id} at {v}");
            }
        }
    }

    #[test]
    fn hot_keys_change_more_often_and_the_mean_rate_holds() {
        let h = History::new(&changes(0.0, 0.05, 0.0, Some(1.1)), 100_000, 3);
        let hot = h.heat.as_ref().unwrap();
        // The ranks are a permutation.
        let mut seen = vec![false; 100_000];
        for id in 0..100_000 {
            seen[hot.rank(id) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        // The capped chances add up to the rate.
        let expected: f64 = (0..100_000).map(|id| h.chances(id).1).sum();
        assert!((expected - 5000.0).abs() < 1.0, "{expected}");
        let hottest = (0..100_000).find(|&id| hot.rank(id) == 0).unwrap();
        assert_eq!(h.chances(hottest).1, 1.0);
        let updates = (0..100_000)
            .filter(|&id| h.op(id, 1) == Some(Op::Update))
            .count() as f64;
        let se = (5000.0f64 * 0.95).sqrt();
        assert!((updates - 5000.0).abs() < 5.0 * se, "{updates}");
        assert_eq!(h.op(hottest, 1), Some(Op::Update));
        // The hottest 500 rows (0.5% of them) all change: 10% of the
        // updates, 20 times their share.
        let hot_updates = (0..100_000)
            .filter(|&id| hot.rank(id) < 500 && h.op(id, 1) == Some(Op::Update))
            .count() as f64;
        assert_eq!(hot_updates, 500.0);
        assert!(hot_updates > 0.08 * updates, "{hot_updates} of {updates}");
    }

    #[test]
    fn the_harmonic_tail_is_close() {
        let exact: f64 = (1..=300_000u64).map(|k| (k as f64).powf(-1.1)).sum();
        assert!((harmonic(300_000, 1.1) - exact).abs() / exact < 1e-9);
        let exact: f64 = (1..=300_000u64).map(|k| 1.0 / k as f64).sum();
        assert!((harmonic(300_000, 1.0) - exact).abs() / exact < 1e-9);
    }
}
