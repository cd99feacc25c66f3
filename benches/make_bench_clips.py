#!/usr/bin/env python3
"""Benchmark clips from the 1080p golden pair (numpy; runs on the GPU machine).

    make_bench_clips.py REF.yuv DIST.yuv OUTDIR [FRAMES [VARIANTS]]

REF/DIST are the 3-frame 1920x1080 8-bit 4:2:0 golden clips
(eveningglow_1920x1080_420p8_3f_{ref,crf30}.yuv). Writes, each FRAMES frames
long (the three frames cycled, default 300):

  1080p8_{ref,dis}.yuv    the clips as they are
  1080p10_{ref,dis}.yuv   the same samples x4 (yuv420p10le)
  2160p8_{ref,dis}.yuv    3840x2160, each plane upsampled 2x (bilinear, rounded)
  2160p10_{ref,dis}.yuv   the same upsampling kept at 10 bits (yuv420p10le)

VARIANTS, a comma list of the names below (default all four), writes only
those. Both vmafhip's bench and libvmaf's `vmaf` read these same files.
"""
import os
import sys

import numpy as np

W, H = 1920, 1080


def frames(path):
    raw = np.fromfile(path, dtype=np.uint8)
    fs = W * H * 3 // 2
    out = []
    for k in range(raw.size // fs):
        f = raw[k * fs:(k + 1) * fs]
        y = f[:W * H].reshape(H, W)
        u = f[W * H:W * H + W * H // 4].reshape(H // 2, W // 2)
        v = f[W * H + W * H // 4:].reshape(H // 2, W // 2)
        out.append((y, u, v))
    return out


def up2(p):
    """2x bilinear upsampling (centres at k/2 + 1/4), in float."""
    p = p.astype(np.float64)
    def axis(a, ax):
        n = a.shape[ax]
        prev = np.take(a, np.r_[0, np.arange(n - 1)], axis=ax)
        nxt = np.take(a, np.r_[np.arange(1, n), n - 1], axis=ax)
        even = 0.75 * a + 0.25 * prev
        odd = 0.75 * a + 0.25 * nxt
        out = np.stack([even, odd], axis=ax + 1)
        shape = list(a.shape)
        shape[ax] = 2 * n
        return out.reshape(shape)
    return axis(axis(p, 0), 1)


def write(path, planes_per_frame, n, dtype):
    # Each distinct frame's bytes once, then written n times in turn.
    frames = [b"".join(np.ascontiguousarray(p, dtype=dtype).tobytes() for p in planes)
              for planes in planes_per_frame]
    with open(path, "wb") as f:
        for k in range(n):
            f.write(frames[k % len(frames)])


def main():
    ref, dis, out = sys.argv[1], sys.argv[2], sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 300
    want = sys.argv[5].split(",") if len(sys.argv) > 5 else ["1080p8", "1080p10", "2160p8", "2160p10"]
    os.makedirs(out, exist_ok=True)
    for name, path in (("ref", ref), ("dis", dis)):
        fr = frames(path)
        ups = [[up2(p) for p in f] for f in fr] if any(w.startswith("2160") for w in want) else []
        variants = {
            "1080p8": lambda: (fr, np.uint8),
            "1080p10": lambda: ([[p.astype(np.uint16) * 4 for p in f] for f in fr], "<u2"),
            "2160p8": lambda: ([[np.rint(p).clip(0, 255) for p in f] for f in ups], np.uint8),
            "2160p10": lambda: ([[np.rint(4 * p).clip(0, 1023) for p in f] for f in ups], "<u2"),
        }
        for v in want:
            planes, dtype = variants[v]()
            write(f"{out}/{v}_{name}.yuv", planes, n, dtype)


if __name__ == "__main__":
    main()
