//! The core's one sort, shared by every element type.
//!
//! `slice::sort*` is compiled once per element type, and each copy (driftsort
//! or ipnsort with their small-sort networks and merges) is ~4 KB of the
//! `.wasm`. Here the sorting itself is one non-generic merge sort over
//! positions; a caller adds only its comparison and the move of its elements
//! into the sorted order.

use std::cmp::Ordering;

/// Sorts `v` stably by `cmp`, exactly as `v.sort_by(cmp)` would: equal
/// elements keep their order. `O(n log n)` comparisons; fine for the lists the
/// core sorts (tool calls, cited paths, rows), up to many thousands.
pub fn sort_by<T>(v: &mut Vec<T>, mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let order = {
        let items: &[T] = v;
        positions(items.len(), &mut |a, b| match (items.get(a), items.get(b)) {
            (Some(x), Some(y)) => cmp(x, y) == Ordering::Greater,
            _ => false,
        })
    };
    let mut slots: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(order.into_iter().filter_map(|i| slots.get_mut(i).and_then(Option::take)));
}

/// The positions `0..n` sorted stably by `cmp` of two positions: for a
/// caller that sorts indexes into its own lists (the report's `largest_first`).
pub fn sorted_positions(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    positions(n, &mut |a, b| cmp(a, b) == Ordering::Greater)
}

/// The positions `0..n` in stable sorted order, given `greater(a, b)`: the
/// element at `a` sorts strictly after the one at `b`. A bottom-up merge sort:
/// the left run's element is taken unless the right one is strictly smaller,
/// which keeps equal elements in their order.
fn positions(n: usize, greater: &mut dyn FnMut(usize, usize) -> bool) -> Vec<usize> {
    let mut from: Vec<usize> = (0..n).collect();
    let mut to: Vec<usize> = Vec::with_capacity(n);
    let mut width = 1usize;
    while width < n {
        to.clear();
        let mut start = 0;
        while start < n {
            let mid = start.saturating_add(width).min(n);
            let end = mid.saturating_add(width).min(n);
            let (left, right) = (&from[start..mid], &from[mid..end]);
            let (mut i, mut j) = (0, 0);
            while i < left.len() && j < right.len() {
                if greater(left[i], right[j]) {
                    to.push(right[j]);
                    j += 1;
                } else {
                    to.push(left[i]);
                    i += 1;
                }
            }
            to.extend_from_slice(&left[i..]);
            to.extend_from_slice(&right[j..]);
            start = end;
        }
        std::mem::swap(&mut from, &mut to);
        width = width.saturating_mul(2);
    }
    from
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (no `rand` in the core's dependencies).
    fn numbers(n: usize, seed: u64, modulo: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) % modulo
            })
            .collect()
    }

    #[test]
    fn sorts_as_the_standard_stable_sort() {
        for n in [0, 1, 2, 3, 7, 8, 9, 31, 64, 100, 1000, 4097] {
            for modulo in [1, 3, 50, 1 << 30] {
                // Keys with many ties; the second field tells equal keys apart.
                let v: Vec<(u64, usize)> =
                    numbers(n, n as u64 + modulo, modulo).into_iter().enumerate().map(|(i, k)| (k, i)).collect();
                let mut expected = v.clone();
                expected.sort_by_key(|a| a.0);
                let mut got = v;
                sort_by(&mut got, |a, b| a.0.cmp(&b.0));
                assert_eq!(got, expected, "n={n} modulo={modulo}");
            }
        }
    }

    #[test]
    fn positions_sort_stably() {
        let keys = [1u64, 5, 3, 5, 0];
        let desc = sorted_positions(keys.len(), &mut |a, b| keys[b].cmp(&keys[a]));
        assert_eq!(desc, [1, 3, 2, 0, 4]);
        assert!(sorted_positions(0, &mut |_, _| Ordering::Equal).is_empty());
    }

    #[test]
    fn reversed_and_sorted_inputs() {
        let mut v: Vec<String> = (0..300).rev().map(|i| format!("{i:05}")).collect();
        sort_by(&mut v, |a, b| a.cmp(b));
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        sort_by(&mut v, |a, b| b.cmp(a));
        assert_eq!(v.first().map(String::as_str), Some("00299"));
        assert_eq!(v.len(), 300);
    }
}
