//! Which decoders the media inputs use (`--decoder auto|gpu|cpu`), and the
//! GPU the command scores on, opened while the files are probed.
//!
//! GStreamer's `decodebin` picks a decoder by rank. For `gpu` (and `auto`
//! when the engine runs on a GPU) the GPU's decoders are ranked above every
//! other, so that decodebin takes them wherever they can decode the stream:
//! NVIDIA's NVDEC (`nvcodec`: `nvh264dec`, `nvh265dec`, `nvav1dec`,
//! `nvvp9dec`, …), whose frames stay in CUDA memory that the element reads in
//! place, or AMD's VA-API decoders (`va`: `vah264dec`, …). For `cpu` they are
//! ranked out. The probe of each file then names the decoder the scoring
//! pipeline will use. On NVIDIA, H.264, HEVC, VP9 and AV1 skip GStreamer's decoders:
//! the command drives NVDEC itself ([`crate::media::nvdec`]) where it can.

use crate::cli::{DecoderChoice, Exit, Fail};
use crate::media::video::{Kind, Video};
use gst::prelude::*;
use gstvmafhip::hip::gst_gpu::{GpuMemoryKind, GstGpu};
use gstvmafhip::hip::nvdec::{Chroma, Codec};
use gstvmafhip::hip::{self, Device, Vendor};
use gstvmafhip::vmaf::PixelFormat;
use std::sync::Arc;
use std::thread::JoinHandle;

/// NVIDIA's decoders (GStreamer's nvcodec plugin, NVDEC): CUDA memory out.
const NVDEC: &[&str] = &[
    "nvh264dec",
    "nvh265dec",
    "nvav1dec",
    "nvvp9dec",
    "nvvp8dec",
    "nvmpeg2videodec",
    "nvmpeg4videodec",
    "nvmpegvideodec",
    "nvjpegdec",
    // The stateless variants nvcodec registers in 1.18–1.22.
    "nvh264sldec",
    "nvh265sldec",
    "nvvp9sldec",
    "nvvp8sldec",
    "nvav1sldec",
];

/// AMD's (and Intel's) VA-API decoders (GStreamer's va plugin).
const VAAPI: &[&str] = &[
    "vah264dec",
    "vah265dec",
    "vaav1dec",
    "vavp9dec",
    "vavp8dec",
    "vampeg2dec",
    "vajpegdec",
];

/// The codecs whose standards define the decoded samples exactly (integer
/// transforms and prediction), with the decoders known to conform for
/// them: the CPU's (libavcodec through gst-libav, libde265, libvpx,
/// libaom, dav1d) and the GPUs' (NVDEC, VA-API). A conforming decoder's
/// frames are the same bit for bit, so the score does not depend on which
/// one GStreamer picks. Any other decoder of these codecs is not used
/// ([`exact_decoder`]).
/// Other codecs (MPEG-2, MPEG-4 Part 2, …) allow decoders to differ (their
/// IDCT is specified only to a tolerance): they take GStreamer's choice.
const EXACT: &[(&str, &[&str])] = &[
    (
        "video/x-h264",
        &[
            "avdec_h264",
            "nvh264dec",
            "nvh264sldec",
            "vah264dec",
            "vaapih264dec",
        ],
    ),
    (
        "video/x-h265",
        &[
            "avdec_h265",
            "libde265dec",
            "nvh265dec",
            "nvh265sldec",
            "vah265dec",
            "vaapih265dec",
        ],
    ),
    (
        "video/x-vp8",
        &[
            "vp8dec",
            "avdec_vp8",
            "vp8alphadecodebin",
            "nvvp8dec",
            "nvvp8sldec",
            "vavp8dec",
        ],
    ),
    (
        "video/x-vp9",
        &[
            "vp9dec",
            "avdec_vp9",
            "vp9alphadecodebin",
            "nvvp9dec",
            "nvvp9sldec",
            "vavp9dec",
        ],
    ),
    (
        "video/x-av1",
        &[
            "av1dec",
            "dav1ddec",
            "avdec_av1",
            "nvav1dec",
            "nvav1sldec",
            "vaav1dec",
        ],
    ),
];

/// The Debian package that brings an exact CPU decoder of each codec.
const EXACT_PACKAGE: &[(&str, &str)] = &[
    ("video/x-h264", "gstreamer1.0-libav (avdec_h264)"),
    ("video/x-h265", "gstreamer1.0-libav (avdec_h265)"),
    ("video/x-vp8", "gstreamer1.0-plugins-good (vp8dec)"),
    ("video/x-vp9", "gstreamer1.0-plugins-good (vp9dec)"),
    ("video/x-av1", "gstreamer1.0-plugins-bad (av1dec)"),
];

/// Whether `decoder` decodes `caps` exactly: a conforming decoder of a
/// codec listed in [`EXACT`], or OpenH264 on the Constrained Baseline
/// profile it was written for; any decoder of another codec.
pub fn decodes_exactly(caps: &gst::StructureRef, decoder: &str) -> bool {
    let Some((_, exact)) = EXACT.iter().find(|(c, _)| *c == caps.name()) else {
        return true;
    };
    exact.contains(&decoder)
        || (decoder == "openh264dec"
            && caps
                .get::<&str>("profile")
                .is_ok_and(|p| p == "constrained-baseline"))
}

/// Whether `factory`'s output can hold `video`'s samples: a format of its
/// source template with the stream's chroma layout and at least its depth.
/// A decoder that lacks one hands over other samples, or none (GStreamer
/// 1.22's `libde265dec` gives only 8-bit 4:2:0: a 10-bit stream comes out
/// truncated, a 4:4:4 one crashes it).
fn outputs(factory: &gst::ElementFactory, video: &Video) -> bool {
    factory
        .static_pad_templates()
        .iter()
        .filter(|t| t.direction() == gst::PadDirection::Src)
        .any(|t| {
            t.caps()
                .iter()
                .filter(|s| s.name() == "video/x-raw")
                .any(|s| formats(s).is_none_or(|names| names.iter().any(|n| holds(n, video))))
        })
}

/// The format names a raw-video caps structure allows; `None` for any.
fn formats(s: &gst::StructureRef) -> Option<Vec<String>> {
    if let Ok(one) = s.get::<String>("format") {
        return Some(vec![one]);
    }
    let list = s.get::<gst::List>("format").ok()?;
    Some(list.iter().filter_map(|v| v.get::<String>().ok()).collect())
}

/// Whether the GStreamer format `name` has `video`'s chroma layout and at
/// least its depth.
fn holds(name: &str, video: &Video) -> bool {
    let info = gst_video::VideoFormatInfo::from_format(gst_video::VideoFormat::from_string(name));
    if !info.is_yuv() && !info.is_gray() {
        return false;
    }
    let layout = match (
        info.n_components(),
        info.w_sub().get(1),
        info.h_sub().get(1),
    ) {
        (1, _, _) => PixelFormat::Gray,
        (_, Some(1), Some(1)) => PixelFormat::Yuv420,
        (_, Some(1), Some(0)) => PixelFormat::Yuv422,
        (_, Some(0), Some(0)) => PixelFormat::Yuv444,
        _ => return false,
    };
    layout == video.format && info.depth()[0] >= u32::from(video.bpc)
}

/// The decoder `decodebin` will pick for `caps` (a stream holding
/// `video`): the highest-ranked one that decodes them exactly
/// ([`decodes_exactly`]) into a format that holds `video`'s samples
/// ([`outputs`]); every higher-ranked one that does not is ranked out
/// first, so that `decodebin` passes it over. `Err`: none does, with why
/// each installed one would not do.
pub fn exact_decoder(caps: &gst::Caps, video: &Video) -> Result<String, Vec<String>> {
    let mut found: Vec<gst::ElementFactory> = gst::ElementFactory::factories_with_type(
        gst::ElementFactoryType::DECODER | gst::ElementFactoryType::MEDIA_VIDEO,
        gst::Rank::MARGINAL,
    )
    .into_iter()
    .filter(|f| f.can_sink_any_caps(caps))
    .collect();
    // decodebin's order: rank, then name.
    found.sort_by(|a, b| {
        b.rank()
            .cmp(&a.rank())
            .then_with(|| a.name().cmp(&b.name()))
    });
    let Some(s) = caps.structure(0) else {
        return Err(Vec::new());
    };
    let unfit = |f: &gst::ElementFactory| {
        if !decodes_exactly(s, &f.name()) {
            Some(format!(
                "{} is installed, but its frames differ from the standard's, so the score would depend on the decoder",
                f.name()
            ))
        } else if !outputs(f, video) {
            Some(format!(
                "{} is installed, but it cannot output {}",
                f.name(),
                video.describe()
            ))
        } else {
            None
        }
    };
    let Some(k) = found.iter().position(|f| unfit(f).is_none()) else {
        return Err(found.iter().filter_map(unfit).collect());
    };
    for f in &found[..k] {
        f.set_rank(gst::Rank::NONE);
    }
    Ok(found[k].name().to_string())
}

/// The error for a stream of a codec in [`EXACT`] that no installed
/// decoder decodes exactly, with why each installed one does not.
pub fn no_exact_decoder(path: &str, caps: &gst::Caps, unfit: &[String]) -> Fail {
    let codec = caps.structure(0).map_or("?", |s| s.name().as_str());
    let package = EXACT_PACKAGE
        .iter()
        .find(|(c, _)| *c == codec)
        .map_or("gstreamer1.0-libav", |(_, p)| p);
    let found = if unfit.is_empty() {
        String::new()
    } else {
        format!(" ({})", unfit.join("; "))
    };
    Fail::input(format!(
        "{path}: no decoder that decodes {codec} exactly is installed{found}: install {package}"
    ))
}

/// Is this element factory one of the GPU decoders above (or the
/// command's own NVDEC path)?
pub fn is_gpu_decoder(factory: &str) -> bool {
    factory == DIRECT_NAME || NVDEC.contains(&factory) || VAAPI.contains(&factory)
}

/// The decoders of `vendor`'s GPUs.
fn decoders_of(vendor: Vendor) -> &'static [&'static str] {
    match vendor {
        Vendor::Nvidia => NVDEC,
        Vendor::Amd => VAAPI,
        Vendor::Auto => &[],
    }
}

/// The GPU the command will score on, being opened on a thread of its own
/// (CUDA or HIP context, kernels from the cache or compiled) from the
/// start, while GStreamer initialises and `--pairs` reads and plans its
/// list; a single pair waits for it at once, since the decoders are ranked
/// by it. The element finds it open. `None` for `--backend cpu`.
pub struct GpuWarmUp(Option<JoinHandle<Opening>>);

/// What the warm-up thread gives back: the opened GPU or why none, and
/// what opening took, for the debug log.
struct Opening {
    gpu: Result<Arc<hip::Device>, String>,
    took: std::time::Duration,
}

impl GpuWarmUp {
    /// Starts opening the GPU. No GStreamer call is made on the thread:
    /// it may run before GStreamer is initialised.
    pub fn start(backend: &str, vendor: Vendor, device_ids: &[i32]) -> GpuWarmUp {
        if backend == "cpu" {
            return GpuWarmUp(None);
        }
        let ids = device_ids.to_vec();
        GpuWarmUp(Some(std::thread::spawn(move || {
            let t = std::time::Instant::now();
            let gpu = open_gpus(vendor, &ids);
            Opening {
                gpu,
                took: t.elapsed(),
            }
        })))
    }

    /// The opened GPU, or why none could be opened.
    pub fn wait(mut self) -> Option<Result<Arc<hip::Device>, String>> {
        self.0.take().map(|h| {
            let opening = h.join().unwrap_or_else(|_| Opening {
                gpu: Err("opening the GPU panicked".into()),
                took: std::time::Duration::ZERO,
            });
            gst::debug!(
                crate::cli::CAT,
                "GPU opening took {:?}: {}",
                opening.took,
                hip::startup_steps()
            );
            opening.gpu
        })
    }
}

/// Opens every GPU in `ids` (the runtime first); the first one.
fn open_gpus(vendor: Vendor, ids: &[i32]) -> Result<Arc<hip::Device>, String> {
    let vendor = vendor.from_env_or();
    let _ = hip::Runtime::load(vendor);
    let mut first = None;
    for &id in ids {
        let dev = gstvmafhip::gpu::shared_device(vendor, id.max(0) as usize)
            .map_err(|e| format!("GPU {id}: {e}"))?;
        first.get_or_insert(dev);
    }
    first.ok_or_else(|| "no GPU named".to_string())
}

impl Drop for GpuWarmUp {
    /// A run that ends early (a bad `--pairs` list) still lets the GPU
    /// finish opening: exiting while another thread is inside the GPU
    /// runtime's initialisation runs the runtime's exit handlers under it
    /// (seen: "malloc(): unsorted double linked list corrupted" with
    /// ROCm's libamdhip64 present and no GPU).
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
    }
}

/// What `--decoder` came to, for this run.
pub struct Decoding {
    pub choice: DecoderChoice,
    /// The GPU decoders ranked first, when decoding on the GPU.
    pub gpu: Option<Vendor>,
    /// Why media inputs decode on the CPU although `auto` was asked.
    pub cpu_because: Option<String>,
    /// NVDEC driven by the command, where it can be (NVIDIA).
    pub direct: Option<Direct>,
}

impl Decoding {
    /// The command's own NVDEC path on GPU `device_id`, if it has one.
    pub fn direct_for(&self, device_id: i32) -> Option<Direct> {
        let d = self.direct.as_ref()?;
        if d.device().info.ordinal == device_id.max(0) as usize {
            return Some(d.clone());
        }
        let dev = gstvmafhip::gpu::shared_device(Vendor::Nvidia, device_id.max(0) as usize).ok()?;
        Direct::on(&dev).ok()
    }
}

/// Ranks the decoders for `choice`, given the GPU the engine opened (or why
/// none). An error when `gpu` cannot be honoured.
pub fn rank_decoders(
    choice: DecoderChoice,
    backend: &str,
    gpu: Option<&Result<Arc<hip::Device>, String>>,
) -> Result<Decoding, Fail> {
    let registry = gst::Registry::get();
    let set_rank = |names: &[&str], rank: gst::Rank| {
        for n in names {
            if let Some(f) = registry.lookup_feature(n) {
                f.set_rank(rank);
            }
        }
    };
    let cpu = |why: Option<String>| {
        set_rank(NVDEC, gst::Rank::NONE);
        set_rank(VAAPI, gst::Rank::NONE);
        Decoding {
            choice,
            gpu: None,
            cpu_because: why,
            direct: None,
        }
    };
    if choice == DecoderChoice::Cpu {
        return Ok(cpu(None));
    }
    let vendor = match gpu {
        Some(Ok(dev)) => dev.vendor(),
        Some(Err(why)) if choice == DecoderChoice::Gpu => {
            return Err(Fail(
                Exit::NoGpu,
                format!("--decoder gpu: no usable GPU ({why})"),
            ));
        }
        // The element's own warning says why in full.
        Some(Err(_)) => return Ok(cpu(Some("no usable GPU".into()))),
        None if choice == DecoderChoice::Gpu => {
            return Err(Fail(
                Exit::Usage,
                format!("--decoder gpu needs a GPU engine, and --backend is {backend}"),
            ));
        }
        None => return Ok(cpu(None)),
    };
    let own = decoders_of(vendor);
    let present: Vec<&str> = own
        .iter()
        .copied()
        .filter(|n| registry.lookup_feature(n).is_some())
        .collect();
    let direct = match gpu {
        Some(Ok(dev)) => Direct::on(dev).ok(),
        _ => None,
    };
    if present.is_empty() && direct.is_none() {
        let why = format!(
            "no {} decoder is installed ({})",
            if vendor == Vendor::Nvidia {
                "NVDEC (GStreamer's nvcodec, gstreamer1.0-plugins-bad)"
            } else {
                "VA-API (GStreamer's va, gstreamer1.0-plugins-bad)"
            },
            own[..4].join(", ")
        );
        if choice == DecoderChoice::Gpu {
            return Err(Fail(Exit::BadInput, format!("--decoder gpu: {why}")));
        }
        return Ok(cpu(Some(why)));
    }
    // The other vendor's decoders are of no use to this engine.
    set_rank(
        if vendor == Vendor::Nvidia {
            VAAPI
        } else {
            NVDEC
        },
        gst::Rank::NONE,
    );
    set_rank(&present, gst::Rank::PRIMARY + 100);
    Ok(Decoding {
        choice,
        gpu: Some(vendor),
        cpu_because: None,
        direct,
    })
}

/// Checks the decoder a probe found for one input against the choice: an
/// error for `gpu` when it is not a GPU decoder, a note for `auto`.
pub fn check_decoder(
    decoding: &Decoding,
    path: &str,
    caps: &str,
    decoder: &str,
) -> Result<Option<String>, Fail> {
    if decoding.choice == DecoderChoice::Cpu || is_gpu_decoder(decoder) {
        return Ok(None);
    }
    let why = match &decoding.cpu_because {
        Some(why) => why.clone(),
        None if decoding.gpu.is_none() => return Ok(None),
        None => format!("no GPU decoder installed here decodes {caps}"),
    };
    if decoding.choice == DecoderChoice::Gpu {
        return Err(Fail(
            Exit::BadInput,
            format!("--decoder gpu: {path}: {why} (use --decoder auto or cpu)"),
        ));
    }
    Ok(Some(format!(
        "note: {path}: decoding on the CPU with {decoder}: {why}"
    )))
}

/// The decoder name the command reports for this path.
pub const DIRECT_NAME: &str = "nvdec";

/// The GPU and GStreamer library this path decodes with, when it can.
#[derive(Clone)]
pub struct Direct {
    dev: Arc<Device>,
    pub gpu: Arc<GstGpu>,
}

impl Direct {
    /// `Some` when NVDEC can be driven directly on `dev` (and the user did
    /// not turn it off), else why not.
    pub fn on(dev: &Arc<Device>) -> Result<Direct, String> {
        if std::env::var("VMAFHIP_NVDEC").is_ok_and(|v| v == "0") {
            return Err("VMAFHIP_NVDEC=0".into());
        }
        hip::nvdec::available(dev)?;
        let gpu = GstGpu::for_device(dev, GpuMemoryKind::Cuda)?;
        Ok(Direct {
            dev: dev.clone(),
            gpu,
        })
    }

    /// The device this path decodes on.
    pub fn device(&self) -> &Arc<Device> {
        &self.dev
    }

    /// Whether `input` decodes here when scored as `target` (the reference's
    /// video): 8-, 10- or 12-bit 4:2:0 or 4:4:4, at its own size, depth
    /// and layout, of a codec and size this GPU's NVDEC decodes. Its NV12,
    /// P010, P012 or planar 4:4:4 goes to the element as it is (deep 4:4:4
    /// shifted down as it is copied); the GPU engine splits (and shifts)
    /// the planes it reads.
    pub fn takes(&self, input: (&Video, Kind, Option<&str>), target: &Video) -> Result<(), String> {
        let (v, kind, codec) = input;
        let codec = codec
            .and_then(Codec::from_caps_name)
            .ok_or("not H.264, HEVC, VP9 or AV1")?;
        let chroma = match v.format {
            PixelFormat::Yuv420 => Some(Chroma::Yuv420),
            PixelFormat::Yuv444 => Some(Chroma::Yuv444),
            _ => None,
        }
        .filter(|_| kind == Kind::Media && v.direct_cuda_format().is_some())
        .filter(|_| (v.format, v.bpc) == (target.format, target.bpc))
        .ok_or("not 8-, 10- or 12-bit 4:2:0 or 4:4:4 in the reference's layout and depth")?;
        if (v.width, v.height) != (target.width, target.height) {
            return Err("scaled to the reference's size".into());
        }
        hip::nvdec::supports(&self.dev, codec, v.bpc, chroma, (v.width, v.height))
    }
}
