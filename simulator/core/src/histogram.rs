//! Queueing delays as a histogram of bounded relative error, for a link's percentiles.
//!
//! Why not exact: an exact p99 needs every sample (a 10 Gb/s bottleneck queues ~10⁶ packets
//! per simulated second). Why not fixed-width buckets: delays span nanoseconds to seconds.
//! So the buckets are log-spaced as in HdrHistogram: below 128 ns one bucket per nanosecond
//! (exact), above it every power of two is cut into 64 equal buckets. A bucket is then at most
//! 1/64 of its lower bound wide and its midpoint, which a percentile reports, lies within
//! 1/128 (0.79 %) of every value in it. 3,776 buckets cover every `u64` nanosecond.
//!
//! Memory is bounded by those 3,776 counts (30 KB) and in practice far smaller: the counts are
//! kept sparse (a sorted list of the buckets seen) until 64 buckets are in use, and only then
//! as one dense run from the lowest to the highest bucket seen; a bottleneck spanning 1 µs to
//! 1 s holds ~1,300 counts (10 KB). A link allocates one only once a packet waits, and a
//! dumbbell flow's own access links keep none (`net::link`: issue 13's 2 KB per flow).

/// Sub-buckets per power of two: 2^SUB_BITS.
const SUB_BITS: u32 = 6;
const HALF: u64 = 1 << SUB_BITS;
/// Values below this have a bucket each.
const EXACT: u64 = 2 * HALF;
/// Buckets in use before the counts go dense.
const SPARSE_MAX: usize = 64;
/// A sparse entry: bucket in the top 16 bits, count in the low 48.
const COUNT_BITS: u32 = 48;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

/// The bucket holding `v`.
fn bucket_of(v: u64) -> u16 {
    let b = (63 - (v | (EXACT - 1)).leading_zeros()) - SUB_BITS;
    ((b as u64) * HALF + (v >> b)) as u16
}

/// The smallest value in bucket `i` and the bucket's width.
fn bucket_bounds(i: u16) -> (u64, u64) {
    let i = i as u64;
    if i < EXACT {
        return (i, 1);
    }
    let b = (i >> SUB_BITS) - 1;
    ((i - b * HALF) << b, 1 << b)
}

/// The value a percentile reports for bucket `i`: its midpoint (exact below 128).
fn bucket_value(i: u16) -> f64 {
    let (lo, width) = bucket_bounds(i);
    lo as f64 + (width - 1) as f64 / 2.0
}

#[derive(Clone, Debug, PartialEq)]
enum Counts {
    /// Few buckets in use: `bucket << 48 | count`, sorted by bucket.
    Sparse(Vec<u64>),
    /// Many: the count of every bucket from `first` on.
    Dense { first: u16, counts: Vec<u64> },
}

/// Nanosecond delays, counted per bucket (see the module's doc for the error bound).
#[derive(Clone, Debug, PartialEq)]
pub struct DelayHistogram {
    total: u64,
    counts: Counts,
}

impl Default for DelayHistogram {
    fn default() -> Self {
        DelayHistogram {
            total: 0,
            counts: Counts::Sparse(Vec::new()),
        }
    }
}

impl DelayHistogram {
    /// Values recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Inlined where called: the link's fast path calls it for nearly every bottleneck packet.
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        let bucket = bucket_of(v);
        self.total += 1;
        match &mut self.counts {
            Counts::Sparse(entries) => match entries.binary_search_by_key(&bucket, |e| (e >> COUNT_BITS) as u16) {
                Ok(at) if entries[at] & COUNT_MASK < COUNT_MASK => entries[at] += 1,
                Ok(_) => {
                    self.densify();
                    self.add_dense(bucket);
                }
                Err(_) if entries.len() >= SPARSE_MAX => {
                    self.densify();
                    self.add_dense(bucket);
                }
                Err(at) => entries.insert(at, (bucket as u64) << COUNT_BITS | 1),
            },
            Counts::Dense { .. } => self.add_dense(bucket),
        }
    }

    fn densify(&mut self) {
        let Counts::Sparse(entries) = &self.counts else { return };
        let bucket = |e: &u64| (e >> COUNT_BITS) as u16;
        let first = entries.first().map_or(0, bucket);
        let last = entries.last().map_or(0, bucket);
        let mut counts = vec![0; (last - first) as usize + 1];
        for e in entries {
            counts[(bucket(e) - first) as usize] = e & COUNT_MASK;
        }
        self.counts = Counts::Dense { first, counts };
    }

    fn add_dense(&mut self, bucket: u16) {
        let Counts::Dense { first, counts } = &mut self.counts else {
            unreachable!("called once dense")
        };
        if bucket < *first {
            counts.splice(0..0, std::iter::repeat_n(0, (*first - bucket) as usize));
            *first = bucket;
        }
        let at = (bucket - *first) as usize;
        if at >= counts.len() {
            counts.resize(at + 1, 0);
        }
        counts[at] += 1;
    }

    /// (bucket, count) in increasing order of bucket.
    fn buckets(&self) -> Box<dyn Iterator<Item = (u16, u64)> + '_> {
        match &self.counts {
            Counts::Sparse(entries) => Box::new(entries.iter().map(|e| ((e >> COUNT_BITS) as u16, e & COUNT_MASK))),
            Counts::Dense { first, counts } => Box::new(
                counts
                    .iter()
                    .enumerate()
                    .map(move |(i, &c)| (*first + i as u16, c))
                    .filter(|&(_, c)| c > 0),
            ),
        }
    }

    /// The `percent`-th percentile (nearest rank: the ⌈percent·n/100⌉-th smallest value) of the
    /// values recorded and `zeros` more values of 0 counted elsewhere; None when there are none.
    /// Exact below 128, else within 1/128 of the value at that rank.
    pub fn percentile(&self, percent: u32, zeros: u64) -> Option<f64> {
        let n = self.total + zeros;
        if n == 0 {
            return None;
        }
        let rank = (percent.min(100) as u128 * n as u128).div_ceil(100).max(1) as u64;
        if rank <= zeros {
            return Some(0.0);
        }
        let mut seen = zeros;
        for (bucket, count) in self.buckets() {
            seen += count;
            if seen >= rank {
                return Some(bucket_value(bucket));
            }
        }
        unreachable!("the counts add up to the total")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_tile_every_value_without_gaps() {
        let mut next = 0u64;
        for i in 0..=bucket_of(u64::MAX) {
            let (lo, width) = bucket_bounds(i);
            assert_eq!(lo, next, "bucket {i}");
            assert_eq!((bucket_of(lo), bucket_of(lo + (width - 1))), (i, i));
            next = lo.wrapping_add(width);
        }
        assert_eq!(next, 0, "the last bucket ends at u64::MAX");
        assert_eq!(bucket_of(u64::MAX), 3775);
    }

    #[test]
    fn small_delays_give_exact_percentiles() {
        let mut h = DelayHistogram::default();
        for v in (1..=100).rev() {
            h.record(v);
        }
        assert_eq!(h.total(), 100);
        assert_eq!(
            (h.percentile(50, 0), h.percentile(95, 0), h.percentile(99, 0)),
            (Some(50.0), Some(95.0), Some(99.0))
        );
        assert_eq!(h.percentile(100, 0), Some(100.0));
        // 100 zeros more: rank 190 of 200 is the 90th non-zero value.
        assert_eq!((h.percentile(95, 100), h.percentile(50, 100)), (Some(90.0), Some(0.0)));
    }

    #[test]
    fn no_values_give_no_percentile_and_only_zeros_give_zero() {
        let h = DelayHistogram::default();
        assert_eq!(h.percentile(99, 0), None);
        assert_eq!(h.percentile(99, 3), Some(0.0));
    }

    #[test]
    fn millisecond_delays_come_back_within_one_part_in_128() {
        // 1..=1000 ms: p95 is 950 ms, p99 990 ms; 1000 distinct buckets, so dense.
        let mut h = DelayHistogram::default();
        for k in 1..=1000u64 {
            h.record(k * 1_000_000);
        }
        assert!(matches!(h.counts, Counts::Dense { .. }));
        for (p, exact) in [(95, 950e6), (99, 990e6), (1, 10e6)] {
            let got = h.percentile(p, 0).unwrap();
            assert!(
                (got - exact).abs() / exact <= 1.0 / 128.0,
                "p{p}: {got} against {exact}"
            );
        }
    }

    #[test]
    fn a_value_below_the_dense_run_extends_it_at_the_front() {
        let mut h = DelayHistogram::default();
        // 1, 2, ..., 65 µs: a bucket each.
        for k in 1..=SPARSE_MAX as u64 + 1 {
            h.record(k * 1_000);
        }
        assert!(matches!(h.counts, Counts::Dense { .. }));
        h.record(5);
        assert_eq!(h.percentile(1, 0), Some(5.0));
        assert_eq!(h.total(), SPARSE_MAX as u64 + 2);
    }

    proptest! {
        #[test]
        fn any_percentile_is_within_one_part_in_128_of_the_exact_one(
            mut values in prop::collection::vec(prop_oneof![0u64..200, 0u64..10_000_000_000], 1..400),
            percent in 0u32..=100,
            zeros in 0u64..50,
        ) {
            let mut h = DelayHistogram::default();
            for &v in &values {
                h.record(v);
            }
            values.extend(std::iter::repeat_n(0, zeros as usize));
            values.sort_unstable();
            let rank = ((percent as u64 * values.len() as u64).div_ceil(100)).max(1);
            let exact = values[rank as usize - 1] as f64;
            let got = h.percentile(percent, zeros).unwrap();
            prop_assert!((got - exact).abs() <= exact / 128.0, "{got} against {exact}");
        }
    }
}
