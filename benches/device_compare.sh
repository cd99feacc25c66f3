# Sourced by the GPU-machine scripts: comparing two results files, timing
# alternating runs (`medians` reads N, frames per run), and ffmpeg's NVDEC
# decoding as the yardstick.

same() {  # same A.json B.json: A's values against B's, those both have
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
both = [(x["metrics"][k], v) for x, f in zip(a["frames"], b["frames"]) for k, v in f["metrics"].items() if k in x["metrics"]]
absent = sum(len(f["metrics"]) for f in b["frames"]) - len(both)
bad = sum(1 for u, v in both if u != v)
worst = max((abs(u - v) for u, v in both), default=0)
pooled = [k for k in b["pooled_metrics"] if k in a["pooled_metrics"]]
pbad = sum(1 for k in pooled if a["pooled_metrics"][k]["mean"] != b["pooled_metrics"][k]["mean"])
print(f"{len(a['frames'])} frames, {len(both)} per-frame values: {bad} differ in a printed digit (largest difference {worst:.6g}); "
      f"pooled means: {pbad} of {len(pooled)} differ" + (f"; {absent} values of the second file not computed" if absent else ""))
PY
}

seconds() {  # seconds CMD...: the wall time of one run
  local s=$EPOCHREALTIME
  "$@" > /dev/null 2>&1 || echo "(failed: $*)" >&2
  awk "BEGIN{printf \"%.3f\", $EPOCHREALTIME - $s}"
}
medians() {  # medians FILE: each label's median time and fps
  python3 - "$1" $N <<'PY'
import re, statistics, sys
runs, n = {}, int(sys.argv[2])
for line in open(sys.argv[1]):
    for k, v in re.findall(r"([\w-]+) ([\d.]+) s", line):
        runs.setdefault(k, []).append(float(v))
for k, v in runs.items():
    m = statistics.median(v)
    print(f"median {k}: {m:.3f} s, {n / m:.0f} fps ({len(v)} runs)")
PY
}


# nvdec_decode_only FFMPEG LIBPATH DIST REF: ffmpeg decoding both files
# with NVDEC (frames left in GPU memory) and nothing else.
nvdec_decode_only() {
  local hw="-hwaccel cuda -hwaccel_output_format cuda"
  LD_LIBRARY_PATH=$2 $1 -hide_banner -nostats -loglevel error $hw -i "$3" $hw -i "$4" -map 0:v -map 1:v -f null -
}
