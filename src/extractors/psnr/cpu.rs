//! PSNR per plane, libvmaf `feature/integer_psnr.c`, with its options
//! `enable_chroma`, `enable_mse`, `reduced_hbd_peak` and `min_sse`.

/// What turns a plane's sum of squared errors into decibels: the peak
/// sample value and each plane's cap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Peaks {
    pub peak: f64,
    pub max: [f64; 3],
}

impl Peaks {
    /// libvmaf's `init`: peak `2^bpc − 1` (255 at 8 bits), or with
    /// `reduced_hbd_peak` 255 scaled to the depth; the cap `6·bpc + 12` dB,
    /// or with `min_sse` the PSNR of that error over each plane, rounded
    /// up, the chroma planes' sizes taken as half the luma's (integer
    /// division) where subsampled (`sub`: horizontally, vertically).
    pub fn new(
        bpc: u8,
        luma: (usize, usize),
        sub: (bool, bool),
        reduced: bool,
        min_sse: f64,
    ) -> Self {
        // libvmaf's 8-bit path hard-codes 255, which both forms give at 8 bits.
        let peak = f64::from(if reduced {
            255u32 << (bpc - 8)
        } else {
            (1u32 << bpc) - 1
        });
        let max = std::array::from_fn(|i| {
            if min_sse == 0.0 {
                return 6.0 * f64::from(bpc) + 12.0;
            }
            let w = if i > 0 && sub.0 { luma.0 / 2 } else { luma.0 };
            let h = if i > 0 && sub.1 { luma.1 / 2 } else { luma.1 };
            let mse = min_sse / (w * h) as f64;
            (10.0 * (peak * peak / mse).log10()).ceil()
        });
        Peaks { peak, max }
    }

    /// The defaults' peaks for a `bpc`-bit stream.
    pub fn default_for(bpc: u8) -> Self {
        Self::new(bpc, (1, 1), (false, false), false, 0.0)
    }
}

/// PSNR of one plane (`w`x`h`, packed rows) with the default options.
pub fn psnr_plane(r: &[u16], d: &[u16], w: usize, h: usize, bpc: u8) -> f64 {
    psnr_from_sse(sse_plane(r, d, w, h), w, h, &Peaks::default_for(bpc), 0)
}

/// Σ(r − d)² over one plane; the CPU twin of `psnr_sse.hip`.
pub fn sse_plane(r: &[u16], d: &[u16], w: usize, h: usize) -> u64 {
    let mut sse = 0u64;
    for y in 0..h {
        // libvmaf sums each 8-bit row in uint32 (exact for w < 66051).
        let mut row = 0u64;
        for x in 0..w {
            let e = i64::from(r[y * w + x]) - i64::from(d[y * w + x]);
            row += (e * e) as u64;
        }
        sse += row;
    }
    sse
}

/// The mean squared error of a plane.
pub fn mse_from_sse(sse: u64, w: usize, h: usize) -> f64 {
    sse as f64 / (w * h) as f64
}

/// 10·log10(peak²/mse) of plane `plane`, capped.
pub fn psnr_from_sse(sse: u64, w: usize, h: usize, peaks: &Peaks, plane: usize) -> f64 {
    let mse = mse_from_sse(sse, w, h);
    let v = 10.0 * (peaks.peak * peaks.peak / mse.max(1e-16)).log10();
    v.min(peaks.max[plane])
}
