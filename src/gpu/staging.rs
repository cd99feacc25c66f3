//! Host planes copied with their rows packed, by as many threads as the
//! streams sharing the cores leave: into the pinned staging buffer the
//! GPU's DMA reads (streaming stores), and into the failover's host copies.

#![forbid(unsafe_code)]

/// This process's usable cores, asked once (the answer reads the affinity
/// mask and cgroup limits: not something to repeat for every frame).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A strided plane's copy: (destination rows packed, source, source pitch,
/// row length), in samples.
pub(super) type RowsJob<'a, T> = (&'a mut [T], &'a [T], usize, usize);

/// How many threads copy `bytes` for one of `streams` streams sharing the
/// cores: several for a large frame (one core's copy rate would cap a 1080p
/// stream below the GPU's), as many as the cores shared among the streams
/// allow, at most 4; one with a stream per core, as helpers then only
/// oversubscribe.
pub(super) fn copy_threads(bytes: usize, streams: usize) -> usize {
    if bytes < (1 << 20) {
        return 1;
    }
    (cores() / streams.max(1)).clamp(1, 4)
}

/// Packs strided planes into pinned staging memory on
/// [`copy_threads`] threads, with streaming stores: the staging buffer is
/// read next by the DMA engine, not by this CPU (docs/PERFORMANCE.md, host
/// memory bandwidth).
pub(super) fn stage_copy(jobs: Vec<RowsJob<'_, u8>>, total: usize, backends: usize) {
    copy_bands(jobs, copy_threads(total, backends), |d, s| {
        crate::core::isa::stream_copy(d, s)
    });
    crate::core::isa::stream_fence();
}

/// Copies every job's rows with `copy_row` on `threads` threads: each plane
/// split into `threads` row bands, worker k copying band k of each plane
/// (equal shares), this thread worker 0, so a frame costs threads − 1
/// spawns. Each helper fences its own streaming stores before it ends.
pub(super) fn copy_bands<T: Copy + Send + Sync>(
    jobs: Vec<RowsJob<'_, T>>,
    threads: usize,
    copy_row: impl Fn(&mut [T], &[T]) + Sync,
) {
    let copy_rows = |share: Vec<RowsJob<'_, T>>| {
        for (dst, src, pitch, row) in share {
            for (y, d) in dst.chunks_exact_mut(row).enumerate() {
                copy_row(d, &src[y * pitch..y * pitch + row]);
            }
        }
        crate::core::isa::stream_fence();
    };
    if threads < 2 {
        return copy_rows(jobs);
    }
    let mut shares: Vec<Vec<RowsJob<'_, T>>> = (0..threads).map(|_| Vec::new()).collect();
    for (dst, src, pitch, row) in jobs {
        let band = (dst.len() / row.max(1)).div_ceil(threads).max(1);
        for (k, d) in dst.chunks_mut(band * row.max(1)).enumerate() {
            shares[k].push((d, &src[k * band * pitch..], pitch, row));
        }
    }
    let mut shares = shares.into_iter();
    let own = shares.next().unwrap_or_default();
    let copy_rows = &copy_rows;
    std::thread::scope(|scope| {
        for share in shares {
            scope.spawn(move || copy_rows(share));
        }
        copy_rows(own);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bands cut anywhere (rows not a multiple of the threads, pitch above
    /// the row, planes of one row) land where a plain copy puts them.
    #[test]
    fn staged_planes_equal_a_plain_copy() {
        let sizes = [
            (1920usize, 1080usize, 1920usize),
            (960, 541, 1024),
            (7, 1, 7),
            (333, 3, 340),
        ];
        let srcs: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &(_, h, pitch))| (0..pitch * h).map(|k| (k * 31 + i * 7) as u8).collect())
            .collect();
        for backends in [1, 2, 64] {
            let mut dsts: Vec<Vec<u8>> = sizes.iter().map(|&(w, h, _)| vec![0u8; w * h]).collect();
            let total = dsts.iter().map(Vec::len).sum();
            let jobs = dsts
                .iter_mut()
                .zip(&srcs)
                .zip(sizes)
                .map(|((d, s), (w, _, pitch))| (d.as_mut_slice(), s.as_slice(), pitch, w))
                .collect();
            stage_copy(jobs, total, backends);
            for ((d, s), (w, h, pitch)) in dsts.iter().zip(&srcs).zip(sizes) {
                for y in 0..h {
                    assert_eq!(
                        &d[y * w..(y + 1) * w],
                        &s[y * pitch..y * pitch + w],
                        "{w}x{h} row {y}"
                    );
                }
            }
        }
    }
}
