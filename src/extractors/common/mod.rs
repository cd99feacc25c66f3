//! What several extractors share: scratch growth, edge reflection, option
//! tables, the float extractors' filter stages (CPU, GPU and kernels), and
//! the error a frame an extractor cannot score gives.

pub mod adm_csf;
pub mod adm_scores;
pub mod float_filter;
pub(crate) mod float_filter_gpu;
pub mod float_picture;
pub mod motion_temporal;
pub mod options;
pub mod prescale;
pub(crate) mod prescale_gpu;

/// Make scratch `v` at least `n` long. Never shrinks: a smaller scale uses
/// the front part, so after the first frame nothing is allocated or cleared.
pub(crate) fn grow<T: Copy + Default>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::default());
    }
}

/// Test data: `n` values in `lo..=hi` from a fixed-seed LCG, a quarter of
/// them at one end or the other.
#[cfg(test)]
pub(crate) fn test_samples(n: usize, lo: i32, hi: i32, seed: u64) -> Vec<i32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (s >> 33) as i64;
            match r % 8 {
                0 => lo,
                1 => hi,
                _ => (i64::from(lo) + r % (i64::from(hi) - i64::from(lo) + 1)) as i32,
            }
        })
        .collect()
}

/// Reflect without repeating the edge: −k reads k, n−1+k reads n−1−k.
#[inline]
pub fn mirror_r101(i: isize, n: usize) -> usize {
    let n = n as isize;
    if i < 0 {
        (-i) as usize
    } else if i >= n {
        (2 * n - 2 - i) as usize
    } else {
        i as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_reflects_without_repeating() {
        assert_eq!(mirror_r101(-1, 10), 1);
        assert_eq!(mirror_r101(-3, 10), 3);
        assert_eq!(mirror_r101(10, 10), 8);
        assert_eq!(mirror_r101(12, 10), 6);
        assert_eq!(mirror_r101(4, 10), 4);
    }
}
