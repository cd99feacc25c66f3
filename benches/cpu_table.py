#!/usr/bin/env python3
"""The CPU table of docs/PERFORMANCE.md: vmafhip's CPU engine beside libvmaf.

usage: cpu_table.py VMAF_YUV LIBVMAF_VMAF REF.yuv DIS.yuv WIDTH HEIGHT THREADS...
       [--runs N] [--model STR] [--bpc B]

For each thread count, N paired runs (vmafhip, then libvmaf, alternating),
each a fresh process timed by wall clock from start to exit (reading the
files included) with its peak resident set size (getrusage of that child).
Prints one raw line per run, then a Markdown table: median fps of each,
their ratio, and the largest peak RSS of each. Both tools take libvmaf's
command line, so the same arguments go to both.
"""
import os
import platform
import statistics
import subprocess
import sys
import time


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def measured(cmd):
    code = (
        "import resource,subprocess,sys,time;"
        "t=time.perf_counter();"
        "p=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.PIPE);"
        "s=time.perf_counter()-t;"
        "r=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
        "print(p.returncode,s,r);"
        "sys.stderr.write(p.stderr.decode(errors='replace')[-400:] if p.returncode else '')"
    )
    out = subprocess.run([sys.executable, "-c", code] + cmd, capture_output=True, text=True)
    rc, secs, rss_kib = out.stdout.split()
    if rc != "0":
        sys.exit(f"{' '.join(cmd)} failed: {out.stderr}")
    return float(secs), int(rss_kib) / 1024.0


def main():
    args = sys.argv[1:]
    runs, model, bpc = 5, "version=vmaf_v0.6.1", "8"
    for flag in ("--runs", "--model", "--bpc"):
        if flag in args:
            i = args.index(flag)
            val = args[i + 1]
            del args[i:i + 2]
            if flag == "--runs":
                runs = int(val)
            elif flag == "--model":
                model = val
            else:
                bpc = val
    if len(args) < 7:
        sys.exit(__doc__)
    ours, theirs, ref, dis, w, h = args[:6]
    threads = [int(t) for t in args[6:]]
    frame = int(w) * int(h) * 3 // 2 * (2 if int(bpc) > 8 else 1)
    frames = os.path.getsize(ref) // frame
    print(f"# {cpu_name()}, {os.cpu_count()} logical CPUs; {frames} frames {w}x{h} {bpc}-bit, "
          f"{model}; {runs} paired runs per thread count")
    rows = []
    for t in threads:
        common = ["-r", ref, "-d", dis, "-w", w, "-h", h, "-p", "420", "-b", bpc,
                  "--model", model, "--threads", str(t), "--json", "-o", os.devnull]
        fps = {"vmafhip": [], "libvmaf": []}
        rss = {"vmafhip": 0.0, "libvmaf": 0.0}
        for k in range(runs):
            for name, exe in (("vmafhip", ours), ("libvmaf", theirs)):
                extra = ["--quiet"] if name == "vmafhip" else ["-q"]
                secs, peak = measured([exe] + common + extra)
                fps[name].append(frames / secs)
                rss[name] = max(rss[name], peak)
                print(f"threads {t} run {k + 1} {name}: {frames / secs:.2f} fps, "
                      f"peak RSS {peak:.0f} MiB", flush=True)
        mo, mt = statistics.median(fps["vmafhip"]), statistics.median(fps["libvmaf"])
        rows.append((t, mo, mt, rss["vmafhip"], rss["libvmaf"]))
    print()
    print("| threads | vmafhip fps (median) | libvmaf fps (median) | ratio | peak RSS vmafhip | peak RSS libvmaf | RSS ratio |")
    print("|---|---|---|---|---|---|---|")
    for t, mo, mt, ro, rt in rows:
        print(f"| {t} | {mo:.2f} | {mt:.2f} | **{mo / mt:.2f}x** | {ro:.0f} MiB | {rt:.0f} MiB | {ro / rt:.2f} |")


if __name__ == "__main__":
    main()
