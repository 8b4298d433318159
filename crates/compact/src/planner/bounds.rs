//! Step 3's incremental fractional-knapsack bounds (Kudu's
//! `BoundCalculator`): a min-heap on density of `u32` positions in the
//! by-max order, holding exactly "one item too heavy".

use super::cdf::Order;

/// Running greedy solution over the items added since the last
/// [`clear`](BoundCalculator::clear).
///
/// The heap mirrors libstdc++'s `push_heap`/`pop_heap` so that items of
/// equal density leave it in the order they leave Kudu's.
#[derive(Debug)]
pub(crate) struct BoundCalculator {
    heap: Vec<u32>,
    weight: i64,
    value: f64,
    max_weight: i64,
    /// Density of the heap's top after the last push; not reset by
    /// `clear`, as in Kudu.
    top_density: f64,
}

impl BoundCalculator {
    pub(crate) fn new(max_weight: i64) -> Self {
        Self {
            heap: Vec::new(),
            weight: 0,
            value: 0.0,
            max_weight,
            top_density: f64::MIN_POSITIVE,
        }
    }

    pub(crate) fn clear(&mut self) {
        self.heap.clear();
        self.weight = 0;
        self.value = 0.0;
    }

    /// Adds item `j` of `order`. Items heavier than the whole budget are
    /// ignored: no feasible pick can hold them (Kudu keeps them, which can
    /// make its "top alone" lower bound exceed the budget).
    pub(crate) fn add<O: Order + ?Sized>(&mut self, order: &O, j: usize) {
        let size = i64::from(order.size_mb(j));
        if size > self.max_weight {
            return;
        }
        let density = order.density(j);
        if self.weight >= self.max_weight && density <= self.top_density {
            return;
        }
        self.heap.push(j as u32);
        push_heap(&mut self.heap, order);
        self.weight += size;
        self.value += order.value(j);
        let mut top = self.heap[0] as usize;
        while self.weight - i64::from(order.size_mb(top)) > self.max_weight {
            self.weight -= i64::from(order.size_mb(top));
            self.value -= order.value(top);
            pop_heap(&mut self.heap, order);
            self.heap.pop();
            top = self.heap[0] as usize;
        }
        self.top_density = order.density(top);
    }

    /// (lower, upper) bounds on the best knapsack value of the items so far.
    pub(crate) fn bounds<O: Order + ?Sized>(&self, order: &O) -> (f64, f64) {
        let excess = self.weight - self.max_weight;
        if excess <= 0 {
            return (self.value, self.value);
        }
        let top = self.heap[0] as usize;
        let top_value = order.value(top);
        let lower = (self.value - top_value).max(top_value);
        let upper = self.value - excess as f64 * order.density(top);
        (lower, upper)
    }

    /// Writes into `out` the ids of the set behind the lower bound.
    pub(crate) fn lower_solution<O: Order + ?Sized>(&self, order: &O, out: &mut Vec<u32>) {
        out.clear();
        if self.weight - self.max_weight <= 0 {
            out.extend(self.heap.iter().map(|&j| order.id(j as usize)));
            return;
        }
        let top = self.heap[0] as usize;
        if self.value - order.value(top) > order.value(top) {
            out.extend(self.heap[1..].iter().map(|&j| order.id(j as usize)));
        } else {
            out.push(order.id(top));
        }
    }
}

/// `comp(a, b)`: `a` is denser than `b`, so the heap's front is the least
/// dense item.
fn denser<O: Order + ?Sized>(order: &O, a: u32, b: u32) -> bool {
    order.density(a as usize) > order.density(b as usize)
}

/// Sifts `value` up from `hole` towards `top`.
fn sift_up<O: Order + ?Sized>(h: &mut [u32], mut hole: usize, top: usize, value: u32, order: &O) {
    while hole > top {
        let parent = (hole - 1) / 2;
        if !denser(order, h[parent], value) {
            break;
        }
        h[hole] = h[parent];
        hole = parent;
    }
    h[hole] = value;
}

/// libstdc++ `push_heap`: the last element joins the heap.
fn push_heap<O: Order + ?Sized>(h: &mut [u32], order: &O) {
    if let Some(&value) = h.last() {
        sift_up(h, h.len() - 1, 0, value, order);
    }
}

/// libstdc++ `pop_heap`: moves the front to the back and re-heaps the rest
/// (hole sifted to a leaf along the larger child, then the old back sifted
/// up).
fn pop_heap<O: Order + ?Sized>(h: &mut [u32], order: &O) {
    let len = h.len();
    if len < 2 {
        return;
    }
    let value = h[len - 1];
    h[len - 1] = h[0];
    let len = len - 1;
    let mut hole = 0;
    let mut child = 0;
    while child < (len.saturating_sub(1)) / 2 {
        child = 2 * (child + 1);
        if denser(order, h[child], h[child - 1]) {
            child -= 1;
        }
        h[hole] = h[child];
        hole = child;
    }
    if len.is_multiple_of(2) && len >= 2 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        h[hole] = h[child - 1];
        hole = child - 1;
    }
    sift_up(h, hole, 0, value, order);
}
