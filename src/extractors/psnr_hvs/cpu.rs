//! libvmaf's `psnr_hvs` (Xiph's `psnr_hvs.c`, as libvmaf carries it): per
//! plane, 8×8 blocks every 7 samples, each block's integer DCT (Daala's
//! `od_bin_fdct8x8`) of both pictures, errors below the contrast masking
//! threshold dropped, the rest weighted by a CSF table and summed in float;
//! `psnr_hvs_y`, `_cb`, `_cr`, and `psnr_hvs` from 0.8·Y + 0.1·(Cb + Cr).
//! Integer and float steps as libvmaf's C does them (f32 sums, i32 DCT
//! that wraps where C's `int` would).

use crate::core::FrameError;
use crate::core::PixelFormat;
use crate::core::picture::{Frame, OwnedPlane};

/// `OD_DCT_RSHIFT`: a right shift rounding towards zero.
fn rshift(a: i32, b: u32) -> i32 {
    (((a as u32) >> (32 - b)) as i32).wrapping_add(a) >> b
}

/// `(t * m + r) >> s`, in C's (wrapping) `int`.
fn mul_shift(t: i32, m: i32, r: i32, s: u32) -> i32 {
    t.wrapping_mul(m).wrapping_add(r) >> s
}

/// Daala's 8-point integer DCT (`od_bin_fdct8`), `x` read with `stride`.
fn fdct8(x: &[i32], at: usize, stride: usize) -> [i32; 8] {
    let g = |k: usize| x[at + k * stride];
    let (mut t0, mut t4, mut t2, mut t6) = (g(0), g(1), g(2), g(3));
    let (mut t7, mut t3, mut t5, mut t1) = (g(4), g(5), g(6), g(7));
    t1 = t0.wrapping_sub(t1);
    let t1h = rshift(t1, 1);
    t0 = t0.wrapping_sub(t1h);
    t4 = t4.wrapping_add(t5);
    let t4h = rshift(t4, 1);
    t5 = t5.wrapping_sub(t4h);
    t3 = t2.wrapping_sub(t3);
    t2 = t2.wrapping_sub(rshift(t3, 1));
    t6 = t6.wrapping_add(t7);
    let t6h = rshift(t6, 1);
    t7 = t6h.wrapping_sub(t7);
    t0 = t0.wrapping_add(t6h);
    t6 = t0.wrapping_sub(t6);
    t2 = t4h.wrapping_sub(t2);
    t4 = t2.wrapping_sub(t4);
    t0 = t0.wrapping_sub(mul_shift(t4, 13573, 16384, 15));
    t4 = t4.wrapping_add(mul_shift(t0, 11585, 8192, 14));
    t0 = t0.wrapping_sub(mul_shift(t4, 13573, 16384, 15));
    t6 = t6.wrapping_sub(mul_shift(t2, 21895, 16384, 15));
    t2 = t2.wrapping_add(mul_shift(t6, 15137, 8192, 14));
    t6 = t6.wrapping_sub(mul_shift(t2, 21895, 16384, 15));
    t3 = t3.wrapping_add(mul_shift(t5, 19195, 16384, 15));
    t5 = t5.wrapping_add(mul_shift(t3, 11585, 8192, 14));
    t3 = t3.wrapping_sub(mul_shift(t5, 7489, 4096, 13));
    t7 = rshift(t5, 1).wrapping_sub(t7);
    t5 = t5.wrapping_sub(t7);
    t3 = t1h.wrapping_sub(t3);
    t1 = t1.wrapping_sub(t3);
    t7 = t7.wrapping_add(mul_shift(t1, 3227, 16384, 15));
    t1 = t1.wrapping_sub(mul_shift(t7, 6393, 16384, 15));
    t7 = t7.wrapping_add(mul_shift(t1, 3227, 16384, 15));
    t5 = t5.wrapping_add(mul_shift(t3, 2485, 4096, 13));
    t3 = t3.wrapping_sub(mul_shift(t5, 18205, 16384, 15));
    t5 = t5.wrapping_add(mul_shift(t3, 2485, 4096, 13));
    [t0, t1, t2, t3, t4, t5, t6, t7]
}

/// `od_bin_fdct8x8`: columns, then columns of the result, row-major out.
fn fdct8x8(block: &mut [i32; 64]) {
    let mut z = [0i32; 64];
    for i in 0..8 {
        z[8 * i..8 * i + 8].copy_from_slice(&fdct8(block, i, 8));
    }
    for i in 0..8 {
        block[8 * i..8 * i + 8].copy_from_slice(&fdct8(&z, i, 8));
    }
}

/// The CSF tables (normalized inverse quantization at transparency), as
/// libvmaf writes them: decimal literals rounded to its `float` tables.
#[allow(clippy::excessive_precision)]
const CSF_Y: [[f32; 8]; 8] = [
    [
        1.6193873005,
        2.2901594831,
        2.08509755623,
        1.48366094411,
        1.00227514334,
        0.678296995242,
        0.466224900598,
        0.3265091542,
    ],
    [
        2.2901594831,
        1.94321815382,
        2.04793073064,
        1.68731108984,
        1.2305666963,
        0.868920337363,
        0.61280991668,
        0.436405793551,
    ],
    [
        2.08509755623,
        2.04793073064,
        1.34329019223,
        1.09205635862,
        0.875748795257,
        0.670882927016,
        0.501731932449,
        0.372504254596,
    ],
    [
        1.48366094411,
        1.68731108984,
        1.09205635862,
        0.772819797575,
        0.605636379554,
        0.48309405692,
        0.380429446972,
        0.295774038565,
    ],
    [
        1.00227514334,
        1.2305666963,
        0.875748795257,
        0.605636379554,
        0.448996256676,
        0.352889268808,
        0.283006984131,
        0.226951348204,
    ],
    [
        0.678296995242,
        0.868920337363,
        0.670882927016,
        0.48309405692,
        0.352889268808,
        0.27032073436,
        0.215017739696,
        0.17408067321,
    ],
    [
        0.466224900598,
        0.61280991668,
        0.501731932449,
        0.380429446972,
        0.283006984131,
        0.215017739696,
        0.168869545842,
        0.136153931001,
    ],
    [
        0.3265091542,
        0.436405793551,
        0.372504254596,
        0.295774038565,
        0.226951348204,
        0.17408067321,
        0.136153931001,
        0.109083846276,
    ],
];
#[allow(clippy::excessive_precision)]
const CSF_CB420: [[f32; 8]; 8] = [
    [
        1.91113096927,
        2.46074210438,
        1.18284184739,
        1.14982565193,
        1.05017074788,
        0.898018824055,
        0.74725392039,
        0.615105596242,
    ],
    [
        2.46074210438,
        1.58529308355,
        1.21363250036,
        1.38190029285,
        1.33100189972,
        1.17428548929,
        0.996404342439,
        0.830890433625,
    ],
    [
        1.18284184739,
        1.21363250036,
        0.978712413627,
        1.02624506078,
        1.03145147362,
        0.960060382087,
        0.849823426169,
        0.731221236837,
    ],
    [
        1.14982565193,
        1.38190029285,
        1.02624506078,
        0.861317501629,
        0.801821139099,
        0.751437590932,
        0.685398513368,
        0.608694761374,
    ],
    [
        1.05017074788,
        1.33100189972,
        1.03145147362,
        0.801821139099,
        0.676555426187,
        0.605503172737,
        0.55002013668,
        0.495804539034,
    ],
    [
        0.898018824055,
        1.17428548929,
        0.960060382087,
        0.751437590932,
        0.605503172737,
        0.514674450957,
        0.454353482512,
        0.407050308965,
    ],
    [
        0.74725392039,
        0.996404342439,
        0.849823426169,
        0.685398513368,
        0.55002013668,
        0.454353482512,
        0.389234902883,
        0.342353999733,
    ],
    [
        0.615105596242,
        0.830890433625,
        0.731221236837,
        0.608694761374,
        0.495804539034,
        0.407050308965,
        0.342353999733,
        0.295530605237,
    ],
];
#[allow(clippy::excessive_precision)]
const CSF_CR420: [[f32; 8]; 8] = [
    [
        2.03871978502,
        2.62502345193,
        1.26180942886,
        1.11019789803,
        1.01397751469,
        0.867069376285,
        0.721500455585,
        0.593906509971,
    ],
    [
        2.62502345193,
        1.69112867013,
        1.17180569821,
        1.3342742857,
        1.28513006198,
        1.13381474809,
        0.962064122248,
        0.802254508198,
    ],
    [
        1.26180942886,
        1.17180569821,
        0.944981930573,
        0.990876405848,
        0.995903384143,
        0.926972725286,
        0.820534991409,
        0.706020324706,
    ],
    [
        1.11019789803,
        1.3342742857,
        0.990876405848,
        0.831632933426,
        0.77418706195,
        0.725539939514,
        0.661776842059,
        0.587716619023,
    ],
    [
        1.01397751469,
        1.28513006198,
        0.995903384143,
        0.77418706195,
        0.653238524286,
        0.584635025748,
        0.531064164893,
        0.478717061273,
    ],
    [
        0.867069376285,
        1.13381474809,
        0.926972725286,
        0.725539939514,
        0.584635025748,
        0.496936637883,
        0.438694579826,
        0.393021669543,
    ],
    [
        0.721500455585,
        0.962064122248,
        0.820534991409,
        0.661776842059,
        0.531064164893,
        0.438694579826,
        0.375820256136,
        0.330555063063,
    ],
    [
        0.593906509971,
        0.802254508198,
        0.706020324706,
        0.587716619023,
        0.478717061273,
        0.393021669543,
        0.330555063063,
        0.285345396658,
    ],
];

/// One block's samples, global and quadrant means, variance ratio
/// (`calc_psnrhvs`'s first two passes), in float as libvmaf sums them.
fn block_stats(b: &[i32; 64]) -> f32 {
    let quadrant = |i: usize, j: usize| ((i & 12) >> 2) + ((j & 12) >> 1);
    let (mut gmean, mut means) = (0f32, [0f32; 4]);
    for i in 0..8 {
        for j in 0..8 {
            gmean += b[i * 8 + j] as f32;
            means[quadrant(i, j)] += b[i * 8 + j] as f32;
        }
    }
    gmean /= 64.0;
    means.iter_mut().for_each(|m| *m /= 16.0);
    let (mut gvar, mut vars) = (0f32, [0f32; 4]);
    for i in 0..8 {
        for j in 0..8 {
            let v = b[i * 8 + j] as f32;
            gvar += (v - gmean) * (v - gmean);
            let q = quadrant(i, j);
            vars[q] += (v - means[q]) * (v - means[q]);
        }
    }
    gvar *= 1.0 / 63.0f32 * 64.0;
    vars.iter_mut().for_each(|v| *v *= 1.0 / 15.0f32 * 16.0);
    if gvar > 0.0 {
        gvar = (vars[0] + vars[1] + vars[2] + vars[3]) / gvar;
    }
    gvar
}

/// `calc_psnrhvs`'s masking table from a CSF table: (csf · 0.3885746…)²,
/// in double, stored as float.
pub fn mask_table(csf: &[[f32; 8]; 8]) -> [[f32; 8]; 8] {
    let mut mask = [[0f32; 8]; 8];
    for x in 0..8 {
        for y in 0..8 {
            let c = f64::from(csf[x][y]) * 0.3885746225901003;
            mask[x][y] = (c * c) as f32;
        }
    }
    mask
}

/// The CSF tables of the three planes (Y, Cb, Cr).
pub fn csf_tables() -> [&'static [[f32; 8]; 8]; 3] {
    [&CSF_Y, &CSF_CB420, &CSF_CR420]
}

/// The top-left corners of a plane's blocks along one side of `n`
/// samples: every 7, while a whole block of 8 fits.
pub fn block_starts(n: usize) -> Vec<usize> {
    (0..n.saturating_sub(7)).step_by(7).collect()
}

/// `calc_psnrhvs` of one plane pair: the mean masked, CSF-weighted squared
/// DCT error over peak², every term added to one float in libvmaf's order
/// (block rows, blocks, coefficients; that float's rounding shows in the
/// fourth decimal, so the order is kept). With `threads` > 1 the blocks'
/// terms are computed on that many threads first, then added in order.
fn plane_score(
    r: &OwnedPlane,
    d: &OwnedPlane,
    bpc: u8,
    csf: &[[f32; 8]; 8],
    threads: usize,
) -> f64 {
    let mask = mask_table(csf);
    let (xs, ys) = (block_starts(r.width), block_starts(r.height));
    let terms = |y: usize, x: usize| block_terms(r, d, (y, x), csf, &mask);
    let mut ret = 0f32;
    if threads > 1 && ys.len() >= 2 * threads {
        let rows: Vec<Vec<[f32; 64]>> = std::thread::scope(|scope| {
            let chunks: Vec<_> = ys
                .chunks(ys.len().div_ceil(threads))
                .map(|c| {
                    let (xs, terms) = (&xs, &terms);
                    scope.spawn(move || {
                        c.iter()
                            .map(|&y| xs.iter().map(|&x| terms(y, x)).collect::<Vec<_>>())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            chunks
                .into_iter()
                .flat_map(|h| h.join().expect("psnr_hvs worker"))
                .collect()
        });
        for block in rows.iter().flatten() {
            for v in block {
                ret += v;
            }
        }
    } else {
        for &y in &ys {
            for &x in &xs {
                for v in terms(y, x) {
                    ret += v;
                }
            }
        }
    }
    plane_from_sum(ret, xs.len() * ys.len(), bpc)
}

/// A plane's score from the float sum of its `blocks` blocks' terms.
pub fn plane_from_sum(sum: f32, blocks: usize, bpc: u8) -> f64 {
    let pixels = (64 * blocks) as i32;
    let max = (1i32 << bpc) - 1;
    let ret = sum / pixels as f32 / (max * max) as f32;
    f64::from(ret)
}

/// One block's 64 masked, CSF-weighted squared DCT errors (at row `y`,
/// column `x` of the plane).
fn block_terms(
    r: &OwnedPlane,
    d: &OwnedPlane,
    (y, x): (usize, usize),
    csf: &[[f32; 8]; 8],
    mask: &[[f32; 8]; 8],
) -> [f32; 64] {
    let (mut s, mut t) = ([0i32; 64], [0i32; 64]);
    for i in 0..8 {
        for j in 0..8 {
            let at = (y + i) * r.width + x + j;
            s[i * 8 + j] = i32::from(r.data[at]);
            t[i * 8 + j] = i32::from(d.data[at]);
        }
    }
    let (s_gvar, d_gvar) = (block_stats(&s), block_stats(&t));
    fdct8x8(&mut s);
    fdct8x8(&mut t);
    let (mut s_mask, mut d_mask) = (0f32, 0f32);
    for i in 0..8 {
        for j in usize::from(i == 0)..8 {
            s_mask += s[i * 8 + j].wrapping_mul(s[i * 8 + j]) as f32 * mask[i][j];
            d_mask += t[i * 8 + j].wrapping_mul(t[i * 8 + j]) as f32 * mask[i][j];
        }
    }
    let s_mask = (f64::from(s_mask * s_gvar).sqrt() / 32.0) as f32;
    let d_mask = (f64::from(d_mask * d_gvar).sqrt() / 32.0) as f32;
    let m = s_mask.max(d_mask);
    let mut out = [0f32; 64];
    for i in 0..8 {
        for j in 0..8 {
            let mut err = s[i * 8 + j].wrapping_sub(t[i * 8 + j]).wrapping_abs() as f32;
            if i != 0 || j != 0 {
                let floor = m / mask[i][j];
                err = if err < floor { 0.0 } else { err - floor };
            }
            out[i * 8 + j] = (err * csf[i][j]) * (err * csf[i][j]);
        }
    }
    out
}

fn to_db(score: f64) -> f64 {
    10.0 * (-(score.log10()))
}

/// `[psnr_hvs_y, psnr_hvs_cb, psnr_hvs_cr, psnr_hvs]` of two frames with
/// chroma planes (at most 12 bits, as libvmaf takes).
/// `threads`: how many threads may compute the blocks (1 where frames run
/// in parallel already).
pub fn psnr_hvs(r: &Frame, d: &Frame, threads: usize) -> Result<[f64; 4], FrameError> {
    if r.format == PixelFormat::Gray || r.planes.len() < 3 || d.planes.len() < 3 {
        return Err(FrameError(
            "psnr_hvs needs the chroma planes (the input is GRAY)".into(),
        ));
    }
    if r.bpc > 12 {
        return Err(FrameError(format!(
            "psnr_hvs takes at most 12 bits per sample (the input has {})",
            r.bpc
        )));
    }
    let csf = csf_tables();
    let s = [0, 1, 2].map(|p| plane_score(&r.planes[p], &d.planes[p], r.bpc, csf[p], threads));
    Ok(from_planes(s))
}

/// `[psnr_hvs_y, _cb, _cr, psnr_hvs]` from the three planes' scores.
pub fn from_planes(s: [f64; 3]) -> [f64; 4] {
    let all = s[0] * 0.8 + 0.1 * (s[1] + s[2]);
    [to_db(s[0]), to_db(s[1]), to_db(s[2]), to_db(all)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dct_of_a_flat_block_is_its_dc_alone() {
        let mut b = [100i32; 64];
        fdct8x8(&mut b);
        assert!(b[0] != 0 && b[1..].iter().all(|&v| v == 0), "{b:?}");
        assert_eq!((rshift(-3, 1), rshift(3, 1)), (-1, 1));
    }

    #[test]
    fn blocks_on_threads_give_the_sequential_sum() {
        let plane = |seed: u32, w: usize, h: usize| {
            let mut s = seed;
            OwnedPlane {
                data: (0..w * h)
                    .map(|i| {
                        s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                        ((i % w + i / w) % 200) as u16 + (s >> 29) as u16
                    })
                    .collect(),
                width: w,
                height: h,
            }
        };
        let (r, d) = (plane(1, 300, 200), plane(2, 300, 200));
        let one = plane_score(&r, &d, 8, &CSF_Y, 1);
        for threads in [2, 3, 8] {
            assert_eq!(
                plane_score(&r, &d, 8, &CSF_Y, threads).to_bits(),
                one.to_bits()
            );
        }
    }
}
