//! Compare two media files with `vmafhip` and print per-frame and pooled scores.
//!
//! ```text
//! cargo run --release --example compare_files -- reference.mp4 distorted.mp4
//! ```
//! Both files are decoded (decodebin), converted to I420 and scaled to the
//! reference size, so any two videos of the same content can be compared.

use gst::prelude::*;
use gstvmafhip::{VmafFrameMessage, VmafPooledMessage};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: {} REFERENCE DISTORTED", args[0]);
        std::process::exit(2);
    }
    gst::init()?;
    gstvmafhip::plugin_register_static()?;
    let quote = |p: &str| format!("\"{}\"", p.replace('"', "\\\""));
    let desc = format!(
        "filesrc location={} ! decodebin ! videoconvert ! video/x-raw,format=I420 ! v.ref_sink \
         filesrc location={} ! decodebin ! videoconvert ! videoscale ! video/x-raw,format=I420 ! v.dist_sink \
         vmafhip name=v frame-message=true psnr=true ! fakesink",
        quote(&args[1]),
        quote(&args[2])
    );
    let pipeline = gst::parse::launch(&desc)?
        .downcast::<gst::Pipeline>()
        .map_err(|_| "not a pipeline")?;
    // Scale the distorted stream to whatever size the reference decodes to.
    let v = pipeline.by_name("v").ok_or("no vmafhip")?;
    let ref_pad = v.static_pad("ref_sink").ok_or("no ref_sink")?;
    let dist_caps_filter = v
        .static_pad("dist_sink")
        .and_then(|p| p.peer())
        .and_then(|p| p.parent_element())
        .ok_or("no dist capsfilter")?;
    ref_pad.connect_notify(Some("caps"), move |pad, _| {
        if let Some(s) = pad
            .current_caps()
            .and_then(|c| c.structure(0).map(|s| s.to_owned()))
        {
            let caps = gst::Caps::builder("video/x-raw")
                .field("format", "I420")
                .field("width", s.get::<i32>("width").unwrap_or(0))
                .field("height", s.get::<i32>("height").unwrap_or(0))
                .build();
            dist_caps_filter.set_property("caps", &caps);
        }
    });
    pipeline.set_state(gst::State::Playing)?;
    let bus = pipeline.bus().ok_or("no bus")?;
    let mut result = Ok(());
    for msg in bus.iter_timed(gst::ClockTime::NONE) {
        match msg.view() {
            gst::MessageView::Element(e) => {
                let Some(s) = e.structure() else { continue };
                if let Ok(f) = VmafFrameMessage::try_from(s) {
                    println!(
                        "frame {:5}  {:>12}  VMAF {:7.3}  PSNR-Y {:6.2}",
                        f.index,
                        f.timestamp.display().to_string(),
                        f.score,
                        f.psnr_y.unwrap_or(f64::NAN)
                    );
                } else if let Ok(p) = VmafPooledMessage::try_from(s) {
                    println!(
                        "pooled over {} frames: mean {:.3}, harmonic {:.3}, min {:.3}, max {:.3} ({})",
                        p.frames, p.mean, p.harmonic_mean, p.min, p.max, p.backend
                    );
                }
            }
            gst::MessageView::Warning(w) => eprintln!("warning: {}", w.error()),
            gst::MessageView::Error(e) => {
                result = Err(format!("{} ({:?})", e.error(), e.debug()).into());
                break;
            }
            gst::MessageView::Eos(_) => break,
            _ => {}
        }
    }
    pipeline.set_state(gst::State::Null)?;
    result
}
