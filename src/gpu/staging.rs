//! Host planes into the pinned staging buffer the GPU's DMA reads: strided
//! rows packed, with streaming stores, by as many threads as the device's
//! live streams leave cores for.

#![forbid(unsafe_code)]

/// This process's usable cores, asked once (the answer reads the affinity
/// mask and cgroup limits: not something to repeat for every frame).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Packs strided planes into pinned staging memory. Large frames are copied
/// by several threads (one core's copy rate would cap a 1080p stream below
/// the GPU's), as many as the cores shared among the
/// `backends` live on the device allow (at most 4): with one stream per core
/// each copies on its own thread, as spawning helpers then only oversubscribes.
pub(super) fn stage_copy(
    jobs: Vec<(&mut [u8], &[u8], usize, usize)>,
    total: usize,
    backends: usize,
) {
    // Streaming stores: the staging buffer is read next by the DMA engine,
    // not by this CPU (docs/PERFORMANCE.md, host memory bandwidth).
    let copy_rows = |dst: &mut [u8], src: &[u8], pitch: usize, row: usize| {
        for (y, d) in dst.chunks_exact_mut(row).enumerate() {
            crate::core::isa::stream_copy(d, &src[y * pitch..y * pitch + row]);
        }
        crate::core::isa::stream_fence();
    };
    let threads = (cores() / backends.max(1)).clamp(1, 4);
    if total < (1 << 20) || threads < 2 {
        for (dst, src, pitch, row) in jobs {
            copy_rows(dst, src, pitch, row);
        }
        return;
    }
    // Every plane split into `threads` row bands; worker k copies band k of
    // each plane, so the shares are equal, and this thread is worker 0:
    // threads − 1 spawns a frame, not one per band.
    let mut shares: Vec<Vec<(&mut [u8], &[u8], usize, usize)>> =
        (0..threads).map(|_| Vec::new()).collect();
    for (dst, src, pitch, row) in jobs {
        let band = (dst.len() / row).div_ceil(threads).max(1);
        for (k, d) in dst.chunks_mut(band * row).enumerate() {
            shares[k].push((d, &src[k * band * pitch..], pitch, row));
        }
    }
    let mut shares = shares.into_iter();
    let own = shares.next().unwrap_or_default();
    std::thread::scope(|scope| {
        for share in shares {
            scope.spawn(move || {
                for (d, s, pitch, row) in share {
                    copy_rows(d, s, pitch, row);
                }
            });
        }
        for (d, s, pitch, row) in own {
            copy_rows(d, s, pitch, row);
        }
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
