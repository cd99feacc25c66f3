# Sourced by the GPU-machine scripts, after benches/device_gst_env.sh (GL).
#   ts_pair W WIDTH HEIGHT FRAMES ZOOM REF_KBPS DIST_KBPS
# makes in W, unless W/dist.ts is there: pan.yuv (benches/make_pan.py across
# the golden photograph, FRAMES at 30 fps, 8-bit 4:2:0, the photograph
# scaled by ZOOM), dist.yuv (a transcode's frames: from frame 5, reference
# frames 60 and 130 dropped), and ref.ts and dist.ts (each x264 in MPEG-TS,
# at REF_KBPS and DIST_KBPS).
ts_pair() {
  local w=$1 width=$2 height=$3 frames=$4 zoom=$5 ref_kbps=$6 dist_kbps=$7
  [ -s "$w/dist.ts" ] && return 0
  zstd -q -d -f tests/data/golden/eveningglow_1920x1080_420p8_3f_ref.yuv.zst -o "$w/eg.yuv" || return 1
  python3 benches/make_pan.py "$w/eg.yuv" "$w/pan.yuv" "$width" "$height" "$frames" 8 "$zoom" || return 1
  python3 - "$w/pan.yuv" "$w/dist.yuv" $((width * height * 3 / 2)) <<'PY' || return 1
import sys
size = int(sys.argv[3])
d = open(sys.argv[1], "rb").read()
frames = [d[i:i + size] for i in range(0, len(d), size)]
shown = [f for i, f in enumerate(frames) if i >= 5 and i not in (60, 130)]
open(sys.argv[2], "wb").write(b"".join(shown))
print(f"reference {len(frames)} frames, transcode {len(shown)}")
PY
  local raw kbps ts
  for x in "pan.yuv $ref_kbps ref.ts" "dist.yuv $dist_kbps dist.ts"; do
    read -r raw kbps ts <<< "$x"
    $GL -q filesrc location="$w/$raw" \
      ! rawvideoparse width="$width" height="$height" format=i420 framerate=30/1 \
      ! x264enc bitrate="$kbps" key-int-max=30 speed-preset=veryfast tune=zerolatency threads=8 \
      ! mpegtsmux ! filesink location="$w/$ts" || return 1
  done
}
