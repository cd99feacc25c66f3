#!/usr/bin/env python3
"""A Python (PyGObject) application embedding vmafhip: it scores two raw
files through filesrc ! rawvideoparse, reads the element's per-frame and
pooled "VMAF" messages from the bus, and checks every value against a
libvmaf JSON of the same pair.

    vmaf_messages.py REF.yuv DIST.yuv WIDTH HEIGHT FORMAT GOLDEN.json [ELEMENT PROPERTIES]

FORMAT is rawvideoparse's (i420, i420-10le, ...). GStreamer finds the
plugin through GST_PLUGIN_PATH. Prints "N passed, M failed" and exits 0
only when every check holds.
"""
import json
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

# libvmaf's JSON names of the values the element posts under 1.28's names.
MESSAGE_FIELD = {"vmaf": "score", "psnr_y": "psnr-y", "float_ssim": "ssim", "float_ms_ssim": "ms-ssim"}


def tolerance(name):
    """As the Rust golden tests: integer features to libvmaf's printed digits."""
    return 1e-6 if name.startswith("integer_") or name.startswith("VMAF_integer") else 1e-4


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAILED: {what}", file=sys.stderr)

    def close(self, want, got, what):
        self.check(got is not None and abs(got - want) <= tolerance(what), f"{what}: {got} vs libvmaf {want}")


def raw_source(path, width, height, fmt):
    return (
        f'filesrc location="{path}" ! rawvideoparse width={width} height={height} '
        f"format={fmt} framerate=25/1"
    )


def collect_messages(pipeline):
    """Plays the pipeline to EOS; returns the frame structures and the pooled ones."""
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    frames, pooled = [], []
    types = Gst.MessageType.ELEMENT | Gst.MessageType.EOS | Gst.MessageType.ERROR
    while True:
        msg = bus.timed_pop_filtered(120 * Gst.SECOND, types)
        if msg is None:
            raise SystemExit("no EOS within 120 s")
        if msg.type == Gst.MessageType.ERROR:
            err, debug = msg.parse_error()
            raise SystemExit(f"pipeline error: {err.message} ({debug})")
        if msg.type == Gst.MessageType.EOS:
            break
        s = msg.get_structure()
        if s is not None and s.get_name() == "VMAF":
            (frames if s.get_value("type") == "frame" else pooled).append(s)
    pipeline.set_state(Gst.State.NULL)
    return frames, pooled


def field(s, name):
    ok, v = s.get_double(name)
    return v if ok else None


def check_frames(c, frames, golden):
    want = golden["frames"]
    c.check(len(frames) == len(want), f"{len(frames)} frame messages, libvmaf lists {len(want)}")
    for s, g in zip(frames, want):
        ok, index = s.get_int("index")
        c.check(ok and index == g["frameNum"], f"frame index {index}, libvmaf {g['frameNum']}")
        for name, value in g["metrics"].items():
            c.close(value, field(s, MESSAGE_FIELD.get(name, name)), f"frame {index}: {name}")


def check_pooled(c, pooled, golden):
    c.check(len(pooled) == 1, f"{len(pooled)} pooled messages, want 1")
    if not pooled:
        return
    s = pooled[0]
    c.check(s.get_value("reason") == "eos", "pooled reason is eos")
    ok, n = s.get_uint64("frames")
    c.check(ok and n == len(golden["frames"]), f"pooled frames {n}")
    vmaf = golden["pooled_metrics"]["vmaf"]
    for key, name in [("mean", "mean"), ("min", "min"), ("max", "max"), ("harmonic_mean", "harmonic-mean")]:
        c.close(vmaf[key], field(s, name), f"pooled vmaf {key}")
    for name, stats in golden["pooled_metrics"].items():
        c.close(stats["mean"], field(s, MESSAGE_FIELD.get(name, name)), f"pooled {name} mean")


def main(argv):
    if len(argv) < 7:
        print(__doc__, file=sys.stderr)
        return 2
    ref, dist, width, height, fmt, golden_path = argv[1:7]
    properties = " ".join(argv[7:])
    Gst.init(None)
    with open(golden_path) as f:
        golden = json.load(f)
    desc = (
        f"{raw_source(ref, width, height, fmt)} ! v.ref_sink "
        f"{raw_source(dist, width, height, fmt)} ! v.dist_sink "
        f"vmafhip name=v frame-message=true {properties} ! fakesink"
    )
    pipeline = Gst.parse_launch(desc)
    frames, pooled = collect_messages(pipeline)
    c = Checks()
    check_frames(c, frames, golden)
    check_pooled(c, pooled, golden)
    print(f"vmafhip: {len(frames)} frame messages, {len(pooled)} pooled")
    print(f"{c.passed} passed, {c.failed} failed")
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
