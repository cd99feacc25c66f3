//! Live transcoding QA: a source is encoded with x264 and decoded again, and
//! `vmafhip` scores the round trip while the stream runs.
//!
//! ```text
//! cargo run --release --example live_qa -- [bitrate-kbps] [seconds]
//! ```
//! The same as:
//! ```text
//! gst-launch-1.0 -m videotestsrc is-live=true num-buffers=300 ! video/x-raw,width=1280,height=720,framerate=30/1 \
//!   ! tee name=t t. ! queue ! v.ref_sink \
//!   t. ! queue ! x264enc bitrate=1500 tune=zerolatency speed-preset=ultrafast ! avdec_h264 ! v.dist_sink \
//!   vmafhip name=v frame-message=true ! fakesink
//! ```

use gst::prelude::*;
use gstvmafhip::{VmafFrameMessage, VmafPooledMessage};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let bitrate: u32 = args.next().map_or(Ok(1500), |a| a.parse())?;
    let seconds: u32 = args.next().map_or(Ok(10), |a| a.parse())?;
    gst::init()?;
    gstvmafhip::plugin_register_static()?;
    let desc = format!(
        "videotestsrc is-live=true pattern=smpte num-buffers={} ! video/x-raw,width=1280,height=720,framerate=30/1,format=I420 \
         ! tee name=t t. ! queue ! v.ref_sink \
         t. ! queue ! x264enc bitrate={bitrate} tune=zerolatency speed-preset=ultrafast ! avdec_h264 ! v.dist_sink \
         vmafhip name=v frame-message=true threads=0 ! fakesink sync=false",
        seconds * 30
    );
    let pipeline = gst::parse::launch(&desc)?
        .downcast::<gst::Pipeline>()
        .map_err(|_| "not a pipeline")?;
    pipeline.set_state(gst::State::Playing)?;
    let bus = pipeline.bus().ok_or("no bus")?;
    let mut window = Vec::new();
    let mut result = Ok(());
    for msg in bus.iter_timed(gst::ClockTime::NONE) {
        match msg.view() {
            gst::MessageView::Element(e) => {
                let Some(s) = e.structure() else { continue };
                if let Ok(f) = VmafFrameMessage::try_from(s) {
                    window.push(f.score);
                    if window.len() == 30 {
                        let mean = window.iter().sum::<f64>() / 30.0;
                        let min = window.iter().cloned().fold(f64::INFINITY, f64::min);
                        println!(
                            "{:>10}  last second: VMAF mean {mean:6.2}  min {min:6.2}",
                            f.timestamp.display().to_string()
                        );
                        window.clear();
                    }
                } else if let Ok(p) = VmafPooledMessage::try_from(s) {
                    println!(
                        "stream VMAF at {bitrate} kbit/s: {:.3} over {} frames (min {:.3})",
                        p.mean, p.frames, p.min
                    );
                }
            }
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
