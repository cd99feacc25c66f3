#!/bin/bash
# End to end on the GPU machine, one table from one run (docs/PERFORMANCE.md,
# "End to end"): the engine, the `vmafhip` command on raw files and on
# H.264 (NVDEC), many pairs in one run, GStreamer pipelines, ffmpeg's NVDEC
# with libvmaf_cuda, and libvmaf on the CPU, on the same files, each the
# median of RUNS process wall clocks (start to exit), with each tool's
# pooled VMAF beside its fps.
#
# From the repository root, after benches/device_debs.sh DIR and the
# binaries (bin/vmafhip, bin/bench, plugin/libgstvmafhip.so) in DIR (DEV,
# default .device); ffmpeg and libvmaf's CLI from ../shared/peer's
# build_on_device.sh in /tmp/t (rows skipped without them).
#   RUNS=3 F=3000 F4K=3000 bash benches/e2e_bench.sh
# WHICH: any of raw pairs h264 h265 (default all).
set -u
RUNS=${RUNS:-3}
F=${F:-3000}
F4K=${F4K:-3000}
FC=${FC:-600}
WHICH=${WHICH:-"raw pairs h264 h265"}
. benches/device_gst_env.sh
B=$D/bin
FF=/tmp/t/ff/bin/ffmpeg
LV=/tmp/t/inst/bin/vmaf
C=/tmp/e2e
# The 2160p raw pair: 3,000 frames are 75 GB, more than the GPU machine's
# disk holds, so they live in tmpfs (/dev/shm): page cache that is never
# written out, which is what "files in the page cache" means here.
K=${K:-/dev/shm/e2e-k}
mkdir -p "$C" "$K"
export VMAFHIP_CACHE_DIR=/tmp/vc PATH=/tmp/gstroot/usr/bin:$PATH
TABLE=$C/table.md
: > "$TABLE"

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
range() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s–%s", lo, hi}'; }

# row LABEL FRAMES VMAF_FROM CMD...: RUNS timings of CMD (its output in
# $C/last.log), fps = FRAMES / seconds; VMAF_FROM names how to read the
# pooled VMAF from the last run (vmafhip, ffjson:FILE, lvjson:FILE, none).
row() {
  local label=$1 frames=$2 from=$3
  shift 3
  local fps=() run s e
  for run in $(seq "$RUNS"); do
    s=$(now)
    timeout 240 "$@" > "$C/last.log" 2>&1 || { echo "$label: FAILED (rc $?)"; tail -5 "$C/last.log"; echo "| $label | failed | | |" >> "$TABLE"; return; }
    e=$(now)
    fps+=("$(awk -v s="$s" -v e="$e" -v f="$frames" 'BEGIN {printf "%.1f", f / (e - s)}')")
  done
  local vmaf=""
  case $from in
    vmafhip) vmaf=$(grep -o "^VMAF [0-9.]*" "$C/last.log" | awk '{print $2}') ;;
    ffjson:* | lvjson:*) vmaf=$(python3 -c "import json,sys; print('%.6f' % json.load(open(sys.argv[1]))['pooled_metrics']['vmaf']['mean'])" "${from#*:}" 2>/dev/null) ;;
  esac
  local med
  med=$(printf '%s\n' "${fps[@]}" | median)
  echo "$label: ${fps[*]} fps; median $med; VMAF $vmaf"
  echo "| $label | **$med** | $(printf '%s\n' "${fps[@]}" | range) | $vmaf |" >> "$TABLE"
}

# engine LABEL ARGS...: examples/bench's own median (its synthetic frames,
# preloaded in pinned memory).
engine() {
  local label=$1
  shift
  timeout 240 "$B/bench" --backend hip --runs "$RUNS" --no-profile "$@" > "$C/bench.log" 2>&1
  local med runs
  if grep -q "engines, " "$C/bench.log"; then # --streams: the total of every engine
    med=$(grep -o "total [0-9.]* fps" "$C/bench.log" | awk '{print $2}')
    runs=$(grep -o "run [0-9]*: [0-9.]* fps in total" "$C/bench.log" | awk '{print $3}' | paste -sd,)
  else
    med=$(grep -o "engine fps (median of [0-9]*)[^|]*| [0-9.]*" "$C/bench.log" | awk '{print $NF}')
    runs=$(grep "^| runs |" "$C/bench.log" | cut -d'|' -f3 | tr -d ' ')
  fi
  echo "$label: runs $runs; median $med"
  echo "| $label | **$med** | ${runs//,/ } | |" >> "$TABLE"
}

# The raw clips: 1080p (F frames) and 2160p (F4K), from the golden 1080p pair.
clips() {
  for f in ref crf30; do
    [ -f "$C/eg_$f.yuv" ] || zstd -q -d "tests/data/golden/eveningglow_1920x1080_420p8_3f_$f.yuv.zst" -o "$C/eg_$f.yuv"
  done
  [ -f "$C/1080p8_ref.yuv" ] || python3 benches/make_bench_clips.py "$C/eg_ref.yuv" "$C/eg_crf30.yuv" "$C" "$F" 1080p8
  [ -f "$K/2160p8_ref.yuv" ] || python3 benches/make_bench_clips.py "$C/eg_ref.yuv" "$C/eg_crf30.yuv" "$K" "$F4K" 2160p8
  # libvmaf on the CPU gets the first FC frames (it runs at a few hundred fps).
  for f in ref dis; do
    [ -f "$C/short_$f.yuv" ] || head -c $((FC * 1920 * 1080 * 3 / 2)) "$C/1080p8_$f.yuv" > "$C/short_$f.yuv"
  done
  cat "$C"/*.yuv > /dev/null # into the page cache
}

raw_rows() {
  local ref=$C/1080p8_ref.yuv dis=$C/1080p8_dis.yuv kr=$K/2160p8_ref.yuv kd=$K/2160p8_dis.yuv
  for model in vmaf_v0.6.1 vmaf_v1.0.16_3d0h; do
    local k4=vmaf_4k_v0.6.1
    [ $model = vmaf_v1.0.16_3d0h ] && k4=vmaf_v1.0.16_3d0h_2160
    engine "engine 1080p $model (frames preloaded, pinned)" --width 1920 --height 1080 --frames "$F" --model $model
    row "vmafhip command, raw 1080p $model ($F frames)" "$F" vmafhip \
      "$B/vmafhip" -r "$ref" -d "$dis" -w 1920 -h 1080 --backend hip --model version=$model
    engine "engine 2160p $k4 (frames preloaded, pinned)" --width 3840 --height 2160 --frames "$F4K" --model $k4
    row "vmafhip command, raw 2160p $k4 ($F4K frames)" "$F4K" vmafhip \
      "$B/vmafhip" -r "$kr" -d "$kd" -w 3840 -h 2160 --backend hip --model version=$k4
  done
  row "gst-launch filesrc ! rawvideoparse ! vmafhip, 1080p vmaf_v0.6.1" "$F" none \
    $GL -q filesrc location="$ref" ! rawvideoparse width=1920 height=1080 format=i420 framerate=25/1 ! v.ref_sink \
    filesrc location="$dis" ! rawvideoparse width=1920 height=1080 format=i420 framerate=25/1 ! v.dist_sink \
    vmafhip name=v backend=hip ! fakesink
  if [ -x "$LV" ]; then
    row "libvmaf CPU (C path), 16 threads, raw 1080p vmaf_v0.6.1 ($FC frames)" "$FC" lvjson:$C/lv.json \
      "$LV" -r "$C/short_ref.yuv" -d "$C/short_dis.yuv" -w 1920 -h 1080 -p 420 -b 8 --threads 16 \
      --gpumask 4294967295 --model version=vmaf_v0.6.1 --json -o "$C/lv.json"
  fi
}

pairs_rows() {
  local list=$C/pairs16.csv
  : > "$list"
  for k in $(seq 16); do echo "$C/1080p8_ref.yuv,$C/1080p8_dis.yuv,$C/pair$k.json" >> "$list"; done
  engine "16 engines at once, 1080p vmaf_v0.6.1 (frames preloaded)" --width 1920 --height 1080 --frames "$F" --streams 16
  row "vmafhip --pairs, 16 raw 1080p pairs at once ($F frames each)" $((16 * F)) none \
    "$B/vmafhip" --pairs "$list" -w 1920 -h 1080 --backend hip -q
}

# clips CODEC SIZE W H FRAMES HI LO: the pair's MP4s (ref at HI kbit/s,
# dis at LO), encoded here once: x264enc for h264, x265enc for h265.
codec_clips() {
  local c=$1 s=$2 w=$3 h=$4 n=$5 hi=$6 lo=$7 enc
  for q in "ref $hi" "dis $lo"; do
    set -- $q
    case $c in
      h264) enc="x264enc bitrate=$2 speed-preset=veryfast key-int-max=60 ! video/x-h264,profile=high ! h264parse" ;;
      h265) enc="x265enc bitrate=$2 speed-preset=veryfast key-int-max=60 ! video/x-h265,profile=main ! h265parse" ;;
    esac
    [ -f "$C/${c}_${s}_$1.mp4" ] || $GL -q videotestsrc num-buffers="$n" pattern=smpte horizontal-speed=3 \
      ! video/x-raw,width="$w",height="$h",format=I420,framerate=30/1 \
      ! $enc ! mp4mux ! filesink location="$C/${c}_${s}_$1.mp4" > /dev/null
  done
}

# codec_rows CODEC: the compressed rows for one codec (h264, h265), 1080p
# and 2160p.
codec_rows() {
  local c=$1 name=H.264 gdec=nvh264dec parse=h264parse
  [ "$c" = h265 ] && name=HEVC gdec=nvh265dec parse=h265parse
  codec_clips "$c" 1080 1920 1080 "$FC" 5000 1500
  codec_clips "$c" 2160 3840 2160 300 12000 4000
  local s n w h
  for s in 1080 2160; do
    if [ $s = 1080 ]; then n=$FC w=1920 h=1080; else n=300 w=3840 h=2160; fi
    local r=$C/${c}_${s}_ref.mp4 d=$C/${c}_${s}_dis.mp4 model=vmaf_v0.6.1 tag="${s}p $name"
    [ $s = 2160 ] && model=vmaf_4k_v0.6.1
    if [ -x "$FF" ]; then
      local HW="-hwaccel cuda -hwaccel_output_format cuda"
      row "ffmpeg NVDEC, decode only (both files), $tag" "$n" none \
        "$FF" -hide_banner -loglevel error $HW -i "$d" $HW -i "$r" -map 0:v -map 1:v -f null -
      row "ffmpeg NVDEC + scale_cuda + libvmaf_cuda, $tag $model" "$n" ffjson:$C/ff.json \
        "$FF" -hide_banner -loglevel error $HW -i "$d" $HW -i "$r" -filter_complex \
        "[0:v]scale_cuda=format=yuv420p[dis];[1:v]scale_cuda=format=yuv420p[ref];[dis][ref]libvmaf_cuda=model=version=$model:log_fmt=json:log_path=$C/ff.json" -f null -
      # The same frames decoded to raw (ffmpeg's software decoder).
      for f in ref dis; do
        [ -f "$C/${c}_${s}_$f.dec.yuv" ] || "$FF" -hide_banner -loglevel error -i "$C/${c}_${s}_$f.mp4" -f rawvideo -pix_fmt yuv420p "$C/${c}_${s}_$f.dec.yuv"
      done
    fi
    row "GStreamer $gdec, decode only (both files), $tag" "$n" none \
      $GL -q filesrc location="$r" ! qtdemux ! $parse ! $gdec ! fakesink \
      filesrc location="$d" ! qtdemux ! $parse ! $gdec ! fakesink
    row "vmafhip command --decoder gpu (NVDEC driven directly), $tag $model" "$n" vmafhip \
      "$B/vmafhip" "$r" "$d" --decoder gpu --backend hip --model version=$model --json -o "$C/gpu_dec.json"
    GST_DEBUG=vmafhip:4 GST_DEBUG_NO_COLOR=1 "$B/vmafhip" "$r" "$d" --decoder gpu --backend hip --model version=$model 2>&1 \
      | grep -o "input planes so far: .*\|decoded with.*" | tail -2
    row "vmafhip command --decoder gpu, GStreamer's $gdec (VMAFHIP_NVDEC=0), $tag $model" "$n" vmafhip \
      env VMAFHIP_NVDEC=0 "$B/vmafhip" "$r" "$d" --decoder gpu --backend hip --model version=$model --json -o "$C/gst_dec.json"
    row "gst-launch $gdec ! vmafhip (CUDA memory), $tag $model" "$n" none \
      $GL -q filesrc location="$r" ! qtdemux ! $parse ! $gdec ! v.ref_sink \
      filesrc location="$d" ! qtdemux ! $parse ! $gdec ! v.dist_sink vmafhip name=v backend=hip model-filename=$model ! fakesink
    if [ -f "$C/${c}_${s}_ref.dec.yuv" ]; then
      row "vmafhip command on the same frames decoded to raw, ${s}p $model" "$n" vmafhip \
        "$B/vmafhip" -r "$C/${c}_${s}_ref.dec.yuv" -d "$C/${c}_${s}_dis.dec.yuv" -w $w -h $h --backend hip --model version=$model --json -o "$C/raw_dec.json"
      echo "exactness, NVDEC (direct) through the command vs. the same frames decoded by ffmpeg's software decoder:"
      python3 benches/compare_json.py "$C/gpu_dec.json" "$C/raw_dec.json"
      echo "exactness, GStreamer's $gdec through the command vs. the same:"
      python3 benches/compare_json.py "$C/gst_dec.json" "$C/raw_dec.json"
      if [ -x "$LV" ] && [ $s = 1080 ]; then
        row "libvmaf CPU (C path), 16 threads, the same frames decoded to raw, ${s}p $model" "$n" lvjson:$C/lv264.json \
          "$LV" -r "$C/${c}_${s}_ref.dec.yuv" -d "$C/${c}_${s}_dis.dec.yuv" -w $w -h $h -p 420 -b 8 --threads 16 \
          --gpumask 4294967295 --model version=$model --json -o "$C/lv264.json"
        echo "libvmaf_cuda against libvmaf's C path, frame by frame:"
        [ -f "$C/ff.json" ] && python3 benches/compare_json.py "$C/ff.json" "$C/lv264.json" | tail -1
        echo "vmafhip (NVDEC) against libvmaf's C path, frame by frame:"
        python3 benches/compare_json.py "$C/gpu_dec.json" "$C/lv264.json" | tail -1
      fi
    fi
  done
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
case $WHICH in *raw* | *pairs*) clips ;; esac
for w in $WHICH; do
  case $w in
    raw) raw_rows ;;
    pairs) pairs_rows ;;
    h264 | h265) codec_rows "$w" ;;
  esac
done
echo
echo "| what | fps (median of $RUNS) | runs | pooled VMAF |"
echo "|---|---|---|---|"
cat "$TABLE"
