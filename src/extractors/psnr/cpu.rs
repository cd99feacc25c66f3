//! PSNR per plane, libvmaf `feature/integer_psnr.c` (default options).

/// `psnr_max = 6·bpc + 12` dB when no `min_sse` is set.
pub fn psnr_max(bpc: u8) -> f64 {
    6.0 * f64::from(bpc) + 12.0
}

/// PSNR of one plane (`w`x`h`, packed rows): 10·log10(peak²/mse), capped.
pub fn psnr_plane(r: &[u16], d: &[u16], w: usize, h: usize, bpc: u8) -> f64 {
    psnr_from_sse(sse_plane(r, d, w, h), w, h, bpc)
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

/// 10·log10(peak²/mse), capped at [`psnr_max`].
pub fn psnr_from_sse(sse: u64, w: usize, h: usize, bpc: u8) -> f64 {
    let peak = if bpc == 8 {
        255.0
    } else {
        f64::from((1u32 << bpc) - 1)
    };
    let mse = sse as f64 / (w * h) as f64;
    let v = 10.0 * (peak * peak / mse.max(1e-16)).log10();
    v.min(psnr_max(bpc))
}
