//! The extractors that run on the CPU beside the GPU work, by their CPU
//! twins: whatever `extractors_for` left to it, the extractors whose
//! kernels do not take the stream (ciede and psnr_hvs on GRAY, psnr_hvs
//! past 12 bits, speed_temporal on pictures too small for its blocks,
//! float_vif's and float_motion's scalings that libvmaf refuses), where the
//! CPU twin gives libvmaf's error or its numbers.
//! They read the host pictures, or, for pictures in GPU memory, the
//! uploaded planes read back.

#![forbid(unsafe_code)]

use super::{Frame, Geometry, GpuExtractor, Retired};
use crate::hip::{HipError, PinnedHostMem};
use crate::vmaf::features::{FloatScratch, Plan, RawFeatures, chroma_extras, float_extras};
use crate::vmaf::picture::{Frame as HostFrame, OwnedPlane};

pub(super) struct Host {
    plan: Plan,
    /// Per slot: the frame's values, until it retires.
    results: Vec<RawFeatures>,
    /// Host copies of the uploaded planes, for pictures in GPU memory.
    planes: Option<PinnedHostMem>,
    /// The temporal extractors' scratch, and the pictures of the frame
    /// before (reference, distorted).
    floats: FloatScratch,
    prev: Option<[HostFrame; 2]>,
    /// The engine's one submitting thread runs this family: psnr_hvs
    /// shares its blocks over the machine's cores.
    threads: usize,
}

impl Host {
    /// The host family of `plan`, if it asks for any of its extractors.
    pub(super) fn for_plan(plan: &Plan) -> Option<Self> {
        let wanted = plan.float_psnr
            || plan.float_ansnr
            || plan.float_moment
            || plan.ciede
            || plan.psnr_hvs
            || plan.float_adm.is_some()
            || plan.float_vif.is_some()
            || plan.float_motion.is_some()
            || plan.speed_temporal.is_some();
        wanted.then(|| Host {
            plan: plan.clone(),
            results: Vec::new(),
            planes: None,
            floats: FloatScratch::default(),
            prev: None,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        })
    }

    /// Whether one of its extractors reads chroma (ciede, psnr_hvs,
    /// float_motion with `motion_add_uv`).
    fn reads_chroma(&self) -> bool {
        self.plan.ciede || self.plan.psnr_hvs || self.plan.float_motion.is_some_and(|p| p.add_uv)
    }

    /// The uploaded planes (luma, and chroma when it reads chroma) of the
    /// reference and the distorted picture, read back (pictures in GPU
    /// memory have no host copy). Waits for the frame's work so far.
    fn frames_from_device(&mut self, f: &Frame<'_>) -> Result<[HostFrame; 2], HipError> {
        let g = f.geo;
        // Chroma only for the extractors that read it.
        let n = if self.reads_chroma() {
            g.planes.len()
        } else {
            1
        };
        let sizes: Vec<usize> = g.planes[..n].iter().map(|&(w, h)| w * h * g.bps).collect();
        let total: usize = 2 * sizes.iter().sum::<usize>();
        if self
            .planes
            .as_ref()
            .is_none_or(|m| m.shared().len() < total)
        {
            self.planes = Some(PinnedHostMem::new(f.stream.device(), total)?);
        }
        let host = self.planes.as_ref().expect("just made");
        let mut at = 0;
        let mut spans = Vec::new();
        for (p, &bytes) in sizes.iter().enumerate() {
            for side in 0..2 {
                f.stream
                    .download(host.shared(), at, f.plane(side, p), 0, bytes)?;
                spans.push((p, side, at, bytes));
                at += bytes;
            }
        }
        f.stream.synchronize()?;
        let data = host.as_ref();
        let mut frames = [0, 1].map(|_| HostFrame {
            format: g.format,
            bpc: g.bpc,
            planes: Vec::new(),
        });
        for (p, side, at, bytes) in spans {
            let (w, h) = g.planes[p];
            frames[side].planes.push(OwnedPlane {
                data: widen(&data[at..at + bytes], g),
                width: w,
                height: h,
            });
        }
        Ok(frames)
    }
}

/// Read-back samples as 16-bit values.
fn widen(b: &[u8], g: &Geometry) -> Vec<u16> {
    if g.bps == 1 {
        b.iter().map(|&v| u16::from(v)).collect()
    } else {
        b.chunks_exact(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect()
    }
}

impl GpuExtractor for Host {
    fn stage(&self) -> &'static str {
        "host"
    }

    /// float_motion scores the frames `subsample` skips too, and
    /// speed_temporal reads the frame before each scored one.
    fn every_frame(&self) -> bool {
        self.plan.float_motion.is_some() || self.plan.speed_temporal.is_some()
    }

    fn add_slot(&mut self, _dev: &std::sync::Arc<crate::hip::Device>) -> Result<(), HipError> {
        self.results.push(RawFeatures::default());
        Ok(())
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let input = f.input;
        let [rf, df] = if input.reference.on_device() || input.distorted.on_device() {
            self.frames_from_device(f)?
        } else {
            let chroma = self.reads_chroma();
            [
                HostFrame::from_picture(input.reference, chroma),
                HostFrame::from_picture(input.distorted, chroma),
            ]
        };
        let mut out = RawFeatures {
            scored: input.scored,
            ..Default::default()
        };
        // No earlier frame: the stream's start, or after a flush.
        if f.earlier[0].is_none() {
            self.prev = None;
        }
        let prev = self.prev.as_ref().map(|[p, q]| (p, q));
        self.floats.temporal(
            &self.plan,
            [prev.map(|p| p.0), prev.map(|p| p.1)],
            [&rf, &df],
            &mut out,
        );
        if input.scored {
            self.scored_extras(&rf, &df, &mut out);
        }
        if self.plan.float_motion.is_some() || self.plan.speed_temporal.is_some() {
            self.prev = Some([rf, df]);
        }
        self.results[f.slot] = out;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let v = std::mem::take(&mut self.results[r.slot]);
        // Only what this family computed: the GPU families fill the rest.
        out.float_psnr = v.float_psnr.or(out.float_psnr);
        out.float_ansnr = v.float_ansnr.or(out.float_ansnr);
        out.float_moment = v.float_moment.or(out.float_moment);
        out.ciede = v.ciede.or(out.ciede);
        out.psnr_hvs = v.psnr_hvs.or(out.psnr_hvs);
        out.float_adm = v.float_adm.or(out.float_adm);
        out.float_vif = v.float_vif.or(out.float_vif);
        out.float_motion = v.float_motion.or(out.float_motion);
        out.speed_temporal = v.speed_temporal.or(out.speed_temporal);
        if v.error.is_some() {
            out.error = v.error;
        }
        Ok(())
    }
}

impl Host {
    /// Its extractors that score only the frames `subsample` keeps.
    fn scored_extras(&mut self, rf: &HostFrame, df: &HostFrame, out: &mut RawFeatures) {
        let (r, d) = (&rf.luma().data, &df.luma().data);
        let (w, h, bpc) = (rf.width(), rf.height(), rf.bpc);
        float_extras(&self.plan, r, d, w, h, bpc, out);
        chroma_extras(&self.plan, rf, df, out, self.threads);
        self.floats.spatial(&self.plan, rf, df, out);
    }
}
