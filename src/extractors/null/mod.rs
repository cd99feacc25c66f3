//! libvmaf's `null` (`feature/null.c`): an extractor that computes and
//! reports nothing, for timing a pipeline without features and for
//! checking that an extractor changes no other number. `--feature null`
//! takes it, as libvmaf's command does.

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, NO_OPTIONS, Output, Slots};
use crate::core::FrameJob;
use crate::core::RawFeatures;

pub static NULL: Null = Null;

pub struct Null;

/// It has no options and no outputs.
#[derive(Debug)]
struct Nothing;

impl Extractor for Null {
    fn name(&self) -> &'static str {
        "null"
    }
    fn options(&self) -> &'static [OptSpec] {
        NO_OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[]
    }
    fn configure(&self, _o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(Nothing))
    }
}

impl Config for Nothing {
    fn outputs(&self) -> usize {
        0
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        Vec::new()
    }
    fn cpu(&self, _slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(Nothing)
    }
}

impl CpuTwin for Nothing {
    fn extract(&mut self, _job: &FrameJob, _out: &mut RawFeatures) {}
}

#[cfg(test)]
mod tests {
    use crate::vmaf::{
        Engine, EngineConfig, FramePair, ModelSet, Picture, PixelFormat, Plane, Scorer,
    };

    /// With `null` beside the model, every frame has the same names and
    /// values as without it.
    #[test]
    fn null_changes_no_number() {
        let (w, h) = (64, 48);
        let frames: Vec<(Vec<u8>, Vec<u8>)> = (0..4u8)
            .map(|k| {
                let r: Vec<u8> = (0..w * h)
                    .map(|i| ((i * 7) as u8).wrapping_add(k))
                    .collect();
                let d: Vec<u8> = r.iter().map(|&v| v.wrapping_add(3) / 2 * 2).collect();
                (r, d)
            })
            .collect();
        let run = |features: Vec<String>| {
            let mut c = EngineConfig::new(ModelSet::load("vmaf_v0.6.1").unwrap());
            c.features = features;
            let mut e = Scorer::cpu(&c).unwrap();
            let mut out = Vec::new();
            for (r, d) in &frames {
                let (rp, dp) = (
                    [Plane::new(r.as_slice(), w, h, w).unwrap()],
                    [Plane::new(d.as_slice(), w, h, w).unwrap()],
                );
                let rpic = Picture::new_u8(PixelFormat::Gray, &rp).unwrap();
                let dpic = Picture::new_u8(PixelFormat::Gray, &dp).unwrap();
                out.extend(e.push(FramePair::new(&rpic, &dpic)).unwrap());
            }
            out.extend(e.flush().unwrap());
            out
        };
        let (plain, with_null) = (run(Vec::new()), run(vec!["null".into()]));
        assert_eq!(plain.len(), 4);
        assert_eq!(plain, with_null);
    }
}
