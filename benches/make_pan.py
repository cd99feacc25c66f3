#!/usr/bin/env python3
"""A natural clip for the input checks: a pan across a photograph, with grain.

    make_pan.py SRC.yuv OUT.y4m|OUT.yuv WIDTH HEIGHT FRAMES BITS [ZOOM]

SRC is the 1920x1080 8-bit 4:2:0 golden reference
(eveningglow_1920x1080_420p8_3f_ref.yuv; its first frame is the
photograph). A WIDTHxHEIGHT window moves across it, 3 pixels right and 1
down per frame, and each frame gets its own film grain (a triangular
distribution of -3..3 steps at 8 bits, from an integer hash of the frame,
plane and sample: the same file on every machine and numpy). BITS 8
writes 4:2:0 8-bit (C420jpeg), 10 and 12 the same pictures at 10 and 12
bits (C420p10, C420p12; x4 and x16 before the grain). ZOOM (default 1) scales the photograph first
(bilinear), so that a 1920x1080 window has room to move. OUT ending in
.yuv gets the frames as raw planes, without the Y4M headers (for
`rawvideoparse`, since GStreamer 1.22's `y4mdec` reads only 8 bits).
"""
import sys

import numpy as np

SW, SH = 1920, 1080


def grain(shape, frame, plane):
    """Integer grain, -3..3, from a hash of (frame, plane, sample index)."""
    i = np.arange(shape[0] * shape[1], dtype=np.uint64)
    offset = np.uint64((frame * 3 + plane) * 0x9E3779B97F4A7C15 % 2**64)
    h = (i + offset) * np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(31)
    a = (h >> np.uint64(8)) & np.uint64(3)
    b = (h >> np.uint64(20)) & np.uint64(3)
    return (a.astype(np.int64) - b.astype(np.int64)).reshape(shape)


def zoom(plane, z):
    """`plane` scaled by `z`, bilinear, rounded to whole samples."""
    if z == 1:
        return plane
    h, w = plane.shape
    ys = np.clip((np.arange(int(h * z)) + 0.5) / z - 0.5, 0, h - 1)
    xs = np.clip((np.arange(int(w * z)) + 0.5) / z - 0.5, 0, w - 1)
    y0, x0 = ys.astype(int), xs.astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = (ys - y0)[:, None], (xs - x0)[None, :]
    top = plane[y0][:, x0] * (1 - fx) + plane[y0][:, x1] * fx
    bottom = plane[y1][:, x0] * (1 - fx) + plane[y1][:, x1] * fx
    return np.round(top * (1 - fy) + bottom * fy)


def main():
    src, out, w, h, n, bits = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
    z = float(sys.argv[7]) if len(sys.argv) > 7 else 1.0
    raw = np.fromfile(src, dtype=np.uint8, count=SW * SH * 3 // 2)
    y = zoom(raw[:SW * SH].reshape(SH, SW).astype(np.float64), z)
    u = zoom(raw[SW * SH:SW * SH * 5 // 4].reshape(SH // 2, SW // 2).astype(np.float64), z)
    v = zoom(raw[SW * SH * 5 // 4:].reshape(SH // 2, SW // 2).astype(np.float64), z)
    if bits not in (8, 10, 12):
        sys.exit(f"make_pan.py: BITS is 8, 10 or 12, not {bits}")
    scale, top = 1 << (bits - 8), (1 << bits) - 1
    dtype = np.dtype("<u2") if bits > 8 else np.uint8
    colour = f"C420p{bits}" if bits > 8 else "C420jpeg"
    y4m = not out.endswith(".yuv")
    with open(out, "wb") as f:
        if y4m:
            f.write(f"YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 {colour}\n".encode())
        for k in range(n):
            x0, y0 = 2 * ((3 * k) // 2), 2 * ((1 * k) // 2)
            if y4m:
                f.write(b"FRAME\n")
            for p, (plane, sub) in enumerate(((y, 1), (u, 2), (v, 2))):
                win = plane[y0 // sub:(y0 + h) // sub, x0 // sub:(x0 + w) // sub] * scale
                f.write(np.clip(win + grain(win.shape, k, p) * scale, 0, top).astype(dtype).tobytes())


if __name__ == "__main__":
    main()
