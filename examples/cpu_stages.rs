//! Per-stage CPU timings of the engine's extractors on one frame pair of a
//! raw 8-bit 4:2:0 clip (minimum of N repetitions, milliseconds): VMAF v0's
//! (VIF, ADM, motion), then VMAF v1's (`vmaf_v1.0.16_3d0h`: ADM with its
//! options, CAMBI, speed_chroma).
//! `cargo run --release --no-default-features --example cpu_stages -- REF DIS W H [N]`
use gstvmafhip::extractors::adm::{
    self,
    cpu::{Adm, AdmParams},
};
use gstvmafhip::extractors::cambi::{self, cpu::Cambi, cpu::CambiParams};
use gstvmafhip::extractors::common::options::resolve;
use gstvmafhip::extractors::motion::cpu::motion_sad;
use gstvmafhip::extractors::speed::{self, cpu::SpeedChroma, cpu::SpeedParams};
use gstvmafhip::extractors::vif::cpu::{DEFAULT_EGL, Vif};
use gstvmafhip::vmaf::{Frame, ModelSet, Picture, PixelFormat, Plane};
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (w, h): (usize, usize) = (a[3].parse().unwrap(), a[4].parse().unwrap());
    let n: usize = a.get(5).map_or(10, |s| s.parse().unwrap());
    let luma = |path: &str, frame: usize| -> Vec<u16> {
        let bytes = std::fs::read(path).unwrap();
        let fsz = w * h * 3 / 2;
        bytes[frame * fsz..frame * fsz + w * h]
            .iter()
            .map(|&b| u16::from(b))
            .collect()
    };
    let (r0, r1, d1) = (luma(&a[1], 0), luma(&a[1], 1), luma(&a[2], 1));
    let time = |f: &mut dyn FnMut()| -> f64 {
        (0..n)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .fold(f64::INFINITY, f64::min)
    };
    let mut vif = Vif::new();
    let mut adm = Adm::new();
    let p = AdmParams::default();
    let (mut y, mut acc) = (Vec::new(), Vec::new());
    let mut sink = 0.0f64;
    let tv = time(&mut || sink += f64::from(vif.compute(&r1, &d1, w, h, 8, DEFAULT_EGL).num[0]));
    let tv0 = time(&mut || sink += vif.statistic(&r1, &d1, w, h, 0, 8, DEFAULT_EGL).num_log as f64);
    let ta = time(&mut || sink += adm.compute(&r1, &d1, w, h, 8, &p).adm2);
    let tm = time(&mut || sink += motion_sad(&r0, &r1, w, h, 8, &mut y, &mut acc) as f64);
    println!(
        "VIF {tv:.2} ms (scale 0: {tv0:.2}), ADM {ta:.2} ms, motion {tm:.2} ms, total {:.2} ms ({sink:.3})",
        tv + ta + tm
    );

    let models = ModelSet::load("vmaf_v1.0.16_3d0h").unwrap();
    // The v1 model's options of each extractor timed.
    let options = |part: &str, table| {
        let given = models
            .main
            .features
            .iter()
            .find(|f| f.name.to_ascii_lowercase().contains(part))
            .map(|f| f.options.clone())
            .unwrap_or_default();
        resolve(table, &given, part).unwrap()
    };
    let pa = adm::params(&options("adm", adm::OPTIONS)).unwrap();
    let pc = CambiParams::from_options(&options("cambi", cambi::cpu::OPTIONS)).unwrap();
    let ps = SpeedParams::from_options(&options("speed_chroma", speed::cpu::OPTIONS)).unwrap();
    let frame = |path: &str| -> Frame {
        let bytes = std::fs::read(path).unwrap();
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        let at = w * h * 3 / 2;
        let planes = [
            Plane::new(&bytes[at..at + w * h], w, h, w).unwrap(),
            Plane::new(&bytes[at + w * h..at + w * h + cw * ch], cw, ch, cw).unwrap(),
            Plane::new(&bytes[at + w * h + cw * ch..], cw, ch, cw).unwrap(),
        ];
        Frame::from_picture(
            &Picture::new_u8(PixelFormat::Yuv420, &planes).unwrap(),
            true,
        )
    };
    let (fr, fd) = (frame(&a[1]), frame(&a[2]));
    let mut cambi = Cambi::default();
    let mut speed = SpeedChroma::default();
    let ta1 = time(&mut || sink += adm.compute(&r1, &d1, w, h, 8, &pa).adm2);
    let tc = time(&mut || sink += cambi.compute(&fr, &fd, &pc).unwrap().distorted);
    let ts = time(&mut || sink += speed.compute(&fr, &fd, &ps).unwrap()[2]);
    println!(
        "v1: ADM {ta1:.2} ms, CAMBI {tc:.2} ms, speed_chroma {ts:.2} ms, motion {tm:.2} ms, total {:.2} ms ({sink:.3})",
        ta1 + tc + ts + tm
    );
}
