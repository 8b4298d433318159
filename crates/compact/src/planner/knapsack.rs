//! Step 5's solver: an incremental exact 0-1 knapsack over integer MB
//! weights, one item at a time, with a bit matrix for the traceback
//! (Kudu's `KnapsackSolver`).

/// Dynamic program over capacities `0..=cap`. After each
/// [`process`](Knapsack::process) call, [`solution`](Knapsack::solution) is
/// the best subset of the items so far.
#[derive(Debug, Default)]
pub(crate) struct Knapsack {
    cap: usize,
    stride: usize,
    max_value: Vec<f64>,
    taken: Vec<u64>,
    weights: Vec<usize>,
    best_weight: usize,
    best_value: f64,
}

impl Knapsack {
    /// Starts over with capacity `cap` for at most `items` items.
    pub(crate) fn reset(&mut self, cap: usize, items: usize) {
        self.cap = cap;
        self.stride = cap / 64 + 1;
        self.max_value.clear();
        self.max_value.resize(cap + 1, 0.0);
        self.taken.clear();
        self.taken.resize(items * self.stride, 0);
        self.weights.clear();
        self.best_weight = 0;
        self.best_value = 0.0;
    }

    /// Adds the next item.
    pub(crate) fn process(&mut self, weight: u32, value: f64) {
        let k = self.weights.len();
        let w = weight as usize;
        self.weights.push(w);
        if w > self.cap {
            return;
        }
        let row = k * self.stride;
        if self.taken.len() < row + self.stride {
            self.taken.resize(row + self.stride, 0);
        }
        for j in (w..=self.cap).rev() {
            let with = self.max_value[j - w] + value;
            if with > self.max_value[j] {
                self.max_value[j] = with;
                self.taken[row + j / 64] |= 1 << (j % 64);
                if with > self.best_value {
                    self.best_value = with;
                    self.best_weight = j;
                }
            }
        }
    }

    /// The best (weight, value) over the items so far.
    pub(crate) fn solution(&self) -> (usize, f64) {
        (self.best_weight, self.best_value)
    }

    /// Writes into `out` the indices (in processing order, descending) of
    /// the items making up the best solution of weight `weight`.
    pub(crate) fn trace(&self, mut weight: usize, out: &mut Vec<usize>) {
        out.clear();
        for k in (0..self.weights.len()).rev() {
            let row = k * self.stride;
            let bit = self
                .taken
                .get(row + weight / 64)
                .is_some_and(|w| w & (1 << (weight % 64)) != 0);
            if bit {
                out.push(k);
                weight -= self.weights[k];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_instance() {
        // weights 1,3,4,5 values 1,4,5,7, cap 7: best 9 = items 1+2.
        let mut k = Knapsack::default();
        k.reset(7, 4);
        for (w, v) in [(1, 1.0), (3, 4.0), (4, 5.0), (5, 7.0)] {
            k.process(w, v);
        }
        let (w, v) = k.solution();
        assert_eq!(v, 9.0);
        let mut out = Vec::new();
        k.trace(w, &mut out);
        out.sort_unstable();
        assert_eq!(out, vec![1, 2]);
    }

    #[test]
    fn oversized_items_are_never_taken() {
        let mut k = Knapsack::default();
        k.reset(2, 2);
        k.process(3, 10.0);
        k.process(2, 1.0);
        assert_eq!(k.solution(), (2, 1.0));
    }
}
