#!/usr/bin/env python3
"""The Python package on a GPU machine: its numbers and its rate.

    python3 benches/python_rate.py GOLDEN_DIR WORKDIR [FRAMES [BACKEND]]

1. The golden astronaut crf35 pair (v0 with PSNR, SSIM, MS-SSIM) through
   vmafhip.score with backend "hip" (or BACKEND) and backend "cpu": every value of the
   two, and the pooled VMAF against libvmaf's JSON.
2. The 1080p golden pair's 3 frames cycled to FRAMES (default 1200): the
   frames per second of Scorer.push from NumPy arrays in memory (one frame
   a call, batches of 3, and one frame a call with on_gpu_error="cpu", which
   keeps a host copy of each frame in flight), against vmafhip.score reading the same frames
   from raw files (the engine's own reader), and, with VMAFHIP_COMMAND set to
   the vmafhip command, the command on those raw files (process wall clock),
   median of 3 alternating runs.
3. Where libcuda is: the same frames as CUDA tensors (python/tests'
   DLPack producer), Scorer.push reading them in place, median of 3.
Needs zstd on PATH.
"""
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import vmafhip

golden, work = Path(sys.argv[1]), Path(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 1200
BACKEND = "hip" if len(sys.argv) < 5 else sys.argv[4]
work.mkdir(parents=True, exist_ok=True)


def raw(name):
    out = work / name
    if not out.exists():
        subprocess.run(["zstd", "-q", "-d", "-f", str(golden / (name + ".zst")), "-o", str(out)], check=True)
    return str(out)


A = "astronaut_576x324_420p8_12f"
feats = ["psnr", "float_ssim", "float_ms_ssim"]
print("== 1. numbers: backend hip against cpu, and against libvmaf's JSON")
hip = vmafhip.score(raw(f"{A}_ref.yuv"), raw(f"{A}_crf35.yuv"), features=feats, backend=BACKEND, width=576, height=324)
cpu = vmafhip.score(raw(f"{A}_ref.yuv"), raw(f"{A}_crf35.yuv"), features=feats, backend="cpu", width=576, height=324)
print("hip:", hip.engine)
print("cpu:", cpu.engine)
worst = {k: float(np.nanmax(np.abs(hip.frames[k] - cpu.frames[k]))) for k in cpu.frames if k != "frame"}
print(f"{len(cpu)} frames, {len(worst)} metrics: {sum(v > 0 for v in worst.values())} differ between the engines "
      f"(largest {max(worst.values()):.3g}, in {max(worst, key=worst.get)})")
want = json.loads((golden / f"{A}_crf35.vmaf_v0.6.1.json").read_text())["pooled_metrics"]["vmaf"]["mean"]
print(f"pooled VMAF: hip {hip.pooled['vmaf']['mean']:.6f}, cpu {cpu.pooled['vmaf']['mean']:.6f}, libvmaf {want:.6f}")

print(f"== 2. rate: 1080p, {n} frames (3 distinct, cycled), backend {BACKEND}, median of 3 alternating runs")
E = "eveningglow_1920x1080_420p8_3f"
ref = np.fromfile(raw(f"{E}_ref.yuv"), np.uint8).reshape(3, -1)
dis = np.fromfile(raw(f"{E}_crf30.yuv"), np.uint8).reshape(3, -1)
long_ref, long_dis = work / "long_ref.yuv", work / "long_dis.yuv"
for arr, path in ((ref, long_ref), (dis, long_dis)):
    with open(path, "wb") as f:
        for k in range(n):
            f.write(arr[k % 3].tobytes())


def push_frames():
    s = vmafhip.Scorer(1920, 1080, backend=BACKEND)
    for k in range(n):
        s.push(ref[k % 3], dis[k % 3])
    return s.flush()


def push_failover():
    s = vmafhip.Scorer(1920, 1080, backend=BACKEND, on_gpu_error="cpu")
    for k in range(n):
        s.push(ref[k % 3], dis[k % 3])
    return s.flush()


def push_batches():
    s = vmafhip.Scorer(1920, 1080, backend=BACKEND)
    for _ in range(n // 3):
        s.push(ref, dis)
    return s.flush()


def files():
    return vmafhip.score(str(long_ref), str(long_dis), width=1920, height=1080, backend=BACKEND)


def command():
    out = subprocess.run(
        [os.environ["VMAFHIP_COMMAND"], str(long_ref), str(long_dis), "-w", "1920", "-h", "1080",
         "--backend", BACKEND, "--json", "-q"],
        check=True, capture_output=True, text=True)
    return type("R", (), {"pooled": json.loads(out.stdout)["pooled_metrics"]})


runs = [("push", push_frames), ("push-batch3", push_batches), ("push-failover", push_failover),
        ("score-files", files)]
if os.environ.get("VMAFHIP_COMMAND"):
    runs.append(("command-raw", command))
times = {name: [] for name, _ in runs}
scores = {}
for _ in range(3):
    for name, run in runs:
        t = time.perf_counter()
        r = run()
        times[name].append(time.perf_counter() - t)
        scores[name] = r.pooled["vmaf"]["mean"]
for name, ts in times.items():
    m = statistics.median(ts)
    print(f"{name}: {m:.3f} s, {n / m:.0f} fps (runs: {', '.join(f'{t:.3f}' for t in ts)}); VMAF {scores[name]:.6f}")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python" / "tests"))
try:
    from test_gpu_dlpack import CU, CudaPlane
except ImportError:
    CU = None
if CU is not None and BACKEND == "hip":
    print(f"== 3. rate: the same {n} frames as CUDA tensors, read in place, median of 3")

    def cuda_planes(packed):
        y = packed[: 1920 * 1080].reshape(1080, 1920)
        u = packed[1920 * 1080: 1920 * 1080 + 960 * 540].reshape(540, 960)
        v = packed[1920 * 1080 + 960 * 540:].reshape(540, 960)
        return tuple(CudaPlane(p) for p in (y, u, v))

    dref = [cuda_planes(ref[k]) for k in range(3)]
    ddis = [cuda_planes(dis[k]) for k in range(3)]
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        s = vmafhip.Scorer(1920, 1080, backend=BACKEND)
        for k in range(n):
            s.push(dref[k % 3], ddis[k % 3])
        r = s.flush()
        ts.append(time.perf_counter() - t)
    m = statistics.median(ts)
    print(f"push-cuda: {m:.3f} s, {n / m:.0f} fps (runs: {', '.join(f'{t:.3f}' for t in ts)}); VMAF {r.pooled['vmaf']['mean']:.6f}")
