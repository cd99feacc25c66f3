#!/bin/bash
# A/B of two builds of the command on the GPU machine, in one call:
# alternating rounds of a raw 1080p pair (F frames of the golden 1080p pair
# cycled, in the page cache) and a 1080p H.264 pair through the command's
# own NVDEC path, each the process wall clock (start to exit), then the
# median of each. The two builds are DEV/bin/vmafhip_a.zst and
# DEV/bin/vmafhip_b.zst; the H.264 pair is DEV/clips/h264_ref.mp4 and
# h264_dis.mp4 (benches/make_pan.py's pan, encoded by x264 here, since the
# encoders' packages do not fit the carry beside the rest).
#   ROUNDS=5 F=3000 bash benches/command_ab.sh
set -u
ROUNDS=${ROUNDS:-5}
F=${F:-3000}
. benches/device_gst_env.sh
export PATH=/tmp/gstroot/usr/bin:$PATH VMAFHIP_CACHE_DIR=/tmp/vc
C=/tmp/ab
mkdir -p "$C"
for v in a b; do
  zstd -q -d -f "$D/bin/vmafhip_$v.zst" -o "$C/vmafhip_$v" && chmod +x "$C/vmafhip_$v"
done
G=tests/data/golden/eveningglow_1920x1080_420p8_3f
zstd -q -d -f "${G}_ref.yuv.zst" -o "$C/eg_ref.yuv"
zstd -q -d -f "${G}_crf30.yuv.zst" -o "$C/eg_crf30.yuv"
[ -f "$C/1080p8_ref.yuv" ] || python3 benches/make_bench_clips.py "$C/eg_ref.yuv" "$C/eg_crf30.yuv" "$C" "$F" 1080p8
cat "$C"/1080p8_*.yuv > /dev/null
secs() {
  local s e
  s=$(date +%s.%N)
  "$@" > "$C/last.log" 2>&1 || { echo "FAILED: $*" >&2; tail -5 "$C/last.log" >&2; return 1; }
  e=$(date +%s.%N)
  awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f", e - s}'
}
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for v in a b; do : > "$C/raw_$v" && : > "$C/h264_$v"; done
for r in $(seq "$ROUNDS"); do
  for v in a b; do
    raw=$(secs "$C/vmafhip_$v" -r "$C/1080p8_ref.yuv" -d "$C/1080p8_dis.yuv" -w 1920 -h 1080 --backend hip) || exit 1
    vraw=$(grep -o "^VMAF [0-9.]*" "$C/last.log")
    h=$(secs "$C/vmafhip_$v" "$D/clips/h264_ref.mp4" "$D/clips/h264_dis.mp4" --decoder gpu --backend hip) || exit 1
    vh=$(grep -o "^VMAF [0-9.]*" "$C/last.log")
    dec=$(grep -o "decoded with .*" "$C/last.log")
    echo "round $r $v: raw 1080p ${raw} s ($vraw), H.264 1080p ${h} s ($vh, $dec)"
    echo "$raw" >> "$C/raw_$v"
    echo "$h" >> "$C/h264_$v"
  done
done
for v in a b; do
  mr=$(median < "$C/raw_$v")
  mh=$(median < "$C/h264_$v")
  echo "build $v: raw 1080p median $mr s ($(awk -v t="$mr" -v f="$F" 'BEGIN {printf "%.1f", f / t}') fps); H.264 1080p median $mh s"
done
