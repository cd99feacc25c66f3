//! Integer ADM (detail loss + additive impairment), mirroring libvmaf
//! `feature/integer_adm.c` (scalar C path; the AVX2 DWT differs on some
//! narrow frames and is not the reference).
//!
//! Per scale: a db2 DWT of reference and distorted (bands a, v, h, d), the
//! decoupling of the distorted detail bands into restored (r) and additive (a)
//! parts, the reference-band denominator, a contrast sensitivity weighting
//! (CSF) and contrast masking (CM). Scale 0 is 16-bit fixed point, scales
//! 1..3 32-bit; the masking and denominator sums are integers finished by
//! `powf(·, 1/3)` in float, exactly as libvmaf.

pub use crate::extractors::adm::decouple::{DecoupleScratch, cos_1deg_sq, decouple};
pub use crate::extractors::adm::dwt::{dwt_s123, dwt_scale0};
pub use crate::extractors::adm::mask::{
    CmScratch, CmShifts, DenShifts, cm, cm_finish, cm_sums, csf_den, csf_den_finish, csf_den_sums,
    den_shifts,
};
use crate::extractors::adm::tables::div_lookup;
#[cfg(test)]
pub use crate::extractors::adm::types::Triple;
pub use crate::extractors::adm::types::{AdmParams, Bands};
pub use crate::extractors::common::adm_scores::AdmScores;

/// Scratch for one ADM extractor.
#[derive(Default)]
pub struct Adm {
    div: Vec<i32>,
    ref_b: Bands,
    dis_b: Bands,
    ref_prev_a: Vec<i32>,
    dis_prev_a: Vec<i32>,
    tmp_lo: Vec<i32>,
    tmp_hi: Vec<i32>,
    /// Scales 1..3: those rows split into even and odd samples.
    tmp_split: [Vec<i32>; 4],
    /// Scale 0's rows between the DWT passes (int16 there).
    tmp_lo16: Vec<i16>,
    tmp_hi16: Vec<i16>,
    cm: CmScratch,
    decouple: DecoupleScratch,
}

impl Adm {
    pub fn new() -> Self {
        Self {
            div: div_lookup(),
            ..Default::default()
        }
    }

    /// `integer_compute_adm` for one frame of `w`x`h` luma.
    pub fn compute(
        &mut self,
        reference: &[u16],
        distorted: &[u16],
        w: usize,
        h: usize,
        bpc: u8,
        p: &AdmParams,
    ) -> AdmScores {
        let (mut cw, mut ch) = (w, h);
        let mut nums = [0f32; 4];
        let mut dens = [0f32; 4];
        let mut aims = [0f32; 4];
        for scale in 0..4 {
            let (bw, bh) = (cw.div_ceil(2), ch.div_ceil(2));
            if scale == 0 {
                dwt_scale0(
                    reference,
                    cw,
                    ch,
                    bpc,
                    &mut self.ref_b,
                    &mut self.tmp_lo16,
                    &mut self.tmp_hi16,
                );
                dwt_scale0(
                    distorted,
                    cw,
                    ch,
                    bpc,
                    &mut self.dis_b,
                    &mut self.tmp_lo16,
                    &mut self.tmp_hi16,
                );
            } else {
                std::mem::swap(&mut self.ref_prev_a, &mut self.ref_b.a);
                std::mem::swap(&mut self.dis_prev_a, &mut self.dis_b.a);
                dwt_s123(
                    &self.ref_prev_a,
                    cw,
                    ch,
                    scale,
                    &mut self.ref_b,
                    &mut self.tmp_lo,
                    &mut self.tmp_hi,
                    &mut self.tmp_split,
                );
                dwt_s123(
                    &self.dis_prev_a,
                    cw,
                    ch,
                    scale,
                    &mut self.dis_b,
                    &mut self.tmp_lo,
                    &mut self.tmp_hi,
                    &mut self.tmp_split,
                );
            }
            cw = bw;
            ch = bh;
            let den_scale = csf_den(scale, &self.ref_b, p);
            // In place: the reference's detail bands become the restored
            // part, the distorted's the additive part (neither is read again).
            decouple(
                scale,
                &mut self.ref_b,
                &mut self.dis_b,
                p.enhn_gain_limit,
                &self.div,
                &mut self.decouple,
            );
            let (rst, add) = (self.ref_b.hvd(), self.dis_b.hvd());
            // Detail loss: masking of the restored part by the CSF of the additive part.
            let num_scale = cm(scale, &rst, &add, bw, bh, p, p.noise_weight, &mut self.cm);
            // AIM: masking of the additive part by the CSF of the restored part, no noise floor.
            let aim_scale = cm(scale, &add, &rst, bw, bh, p, 0.0, &mut self.cm);
            nums[scale] = num_scale;
            dens[scale] = den_scale;
            aims[scale] = aim_scale;
        }
        AdmScores::finish(nums, dens, aims, w, h, p)
    }
}

impl AdmScores {
    /// `integer_compute_adm`'s end: the per-scale floats summed in double,
    /// the tiny-value floor, and adm2 / aim / adm3.
    pub fn finish(
        num: [f32; 4],
        den: [f32; 4],
        aim: [f32; 4],
        w: usize,
        h: usize,
        p: &AdmParams,
    ) -> AdmScores {
        let mut out = AdmScores {
            num,
            den,
            ..Default::default()
        };
        let mut num_sum = 0f64;
        let mut den_sum = 0f64;
        let mut aim_sum = 0f64;
        for scale in 0..4 {
            num_sum += f64::from(num[scale]);
            den_sum += f64::from(den[scale]);
            aim_sum += f64::from(aim[scale]);
        }
        let limit = 1e-10 * (w * h) as f64 / (1920.0 * 1080.0);
        if num_sum < limit {
            num_sum = 0.0;
        }
        if den_sum < limit {
            den_sum = 0.0;
        }
        if den_sum == 0.0 {
            out.adm2 = 1.0;
        } else {
            let aim = aim_sum / den_sum;
            out.adm2 = num_sum / den_sum;
            out.aim = Some(aim);
            out.adm3 =
                Some((out.adm2 * p.dlm_weight + (1.0 - aim) * (1.0 - p.dlm_weight)).max(p.min_val));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn textured(w: usize, h: usize, seed: u32) -> Vec<u16> {
        let mut s = seed;
        (0..w * h)
            .map(|i| {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                let base = ((i % w) * 3 + (i / w) * 2) % 200;
                (base as u32 + (s >> 28)) as u16
            })
            .collect()
    }

    #[test]
    fn identical_frames_score_one() {
        let (w, h) = (96, 64);
        let img = textured(w, h, 7);
        let s = Adm::new().compute(&img, &img, w, h, 8, &AdmParams::default());
        assert!((s.adm2 - 1.0).abs() < 1e-4, "{s:?}");
    }
}
