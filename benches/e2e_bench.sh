#!/bin/bash
# End to end on the GPU machine, one table from one run (docs/PERFORMANCE.md,
# "End to end"): the engine, the `vmafhip` command on raw files and on
# H.264, HEVC (8, 10 and 12 bits, 4:4:4), VP9 and AV1 encoded here, many pairs in one
# run, ffmpeg's NVDEC with libvmaf_cuda, and libvmaf on the CPU, on the
# same files, each the median of RUNS process wall clocks (start to exit),
# with each tool's pooled VMAF beside its fps, and the command's numbers
# against a CPU decoder's.
#
# From the repository root, after benches/device_debs.sh DIR (the encoders'
# packages in DIR/debs_enc) and the binaries (bin/vmafhip, bin/bench, or
# the same .zst-compressed; plugin/libgstvmafhip.so for the gst-launch row)
# in DIR (DEV, default .device); libvmaf's CLI in /tmp/t (its rows skipped
# without it).
#   RUNS=3 F=3000 F4K=3000 bash benches/e2e_bench.sh
# WHICH: any of raw pairs h264 h265 hevc10 hevc12 hevc444 hevc444_10
# hevc444_12 vp9 av1 cpairs (default all):
# raw files, 16 raw pairs, each codec at 1080p (NP frames) and 2160p (N4),
# 16 compressed pairs.
# ffmpeg: DEV/lv/ffmpeg.zst (7.1.5 with NVDEC, scale_cuda, libvmaf and
# libvmaf_cuda, linked to libvmaf.so.3), run on vmafhip's libvmaf
# (DEV/lv/libvmaf.so.zst) for decoding and on libvmaf f85a8536's own in
# REAL (default /tmp/t/inst/lib, its row skipped without it) for
# libvmaf_cuda.
set -u
RUNS=${RUNS:-3}
F=${F:-3000}
F4K=${F4K:-3000}
FC=${FC:-600}
NP=${NP:-240}
N4=${N4:-120}
WHICH=${WHICH:-"raw pairs h264 h265 hevc10 hevc12 hevc444 hevc444_10 hevc444_12 vp9 av1 cpairs"}
. benches/device_gst_env.sh
export VMAFHIP_CACHE_DIR=/tmp/vc PATH=/tmp/gstroot/usr/bin:$PATH
B=$D/bin
if [ -f "$B/vmafhip.zst" ]; then # the binaries as carried, compressed
  mkdir -p /tmp/e2e/bin
  for f in "$B"/*.zst; do zstd -q -d -f "$f" -o "/tmp/e2e/bin/$(basename "$f" .zst)" && chmod +x "/tmp/e2e/bin/$(basename "$f" .zst)"; done
  B=/tmp/e2e/bin
fi
. benches/device_compare.sh
LV=/tmp/t/inst/bin/vmaf
C=/tmp/e2e
REAL=${REAL:-/tmp/t/inst/lib}
OURS=$C/lib:$D/lv/libs
[ -f "$D/lv/libvmaf.so.zst" ] || OURS=$REAL:$D/lv/libs # (decoding alone: either library)
FF=$C/ffmpeg
HW="-hwaccel cuda -hwaccel_output_format cuda"
# The 2160p raw pair: 3,000 frames are 75 GB, more than the GPU machine's
# disk holds, so they live in tmpfs (/dev/shm): page cache that is never
# written out, which is what "files in the page cache" means here.
K=${K:-/dev/shm/e2e-k}
mkdir -p "$C/lib" "$K"
[ -x "$FF" ] || { zstd -q -d -f "$D/lv/ffmpeg.zst" -o "$FF" && chmod +x "$FF"; }
[ -f "$C/lib/libvmaf.so.3" ] || [ ! -f "$D/lv/libvmaf.so.zst" ] || zstd -q -d -f "$D/lv/libvmaf.so.zst" -o "$C/lib/libvmaf.so.3"
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
  [ -f "$D/plugin/libgstvmafhip.so" ] && row "gst-launch filesrc ! rawvideoparse ! vmafhip, 1080p vmaf_v0.6.1" "$F" none \
    $GL -q filesrc location="$ref" ! rawvideoparse width=1920 height=1080 format=i420 framerate=25/1 ! v.ref_sink \
    filesrc location="$dis" ! rawvideoparse width=1920 height=1080 format=i420 framerate=25/1 ! v.dist_sink \
    vmafhip name=v backend=hip ! fakesink
  if [ -x "$LV" ]; then
    row "libvmaf CPU (C path), 16 threads, raw 1080p vmaf_v0.6.1 ($FC frames)" "$FC" lvjson:$C/lv.json \
      env LD_LIBRARY_PATH="$REAL" "$LV" -r "$C/short_ref.yuv" -d "$C/short_dis.yuv" -w 1920 -h 1080 -p 420 -b 8 --threads 16 \
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

# The natural clip the codec rows encode: a pan with grain across the
# golden photograph (benches/make_pan.py), raw, NP frames at 1080p (the
# photograph zoomed 1.5x) and N4 at 2160p (2.2x), at the depths given
# (8, 10, 12); made once.
pans() {
  local s b
  for s in 1080 2160; do
    for b in "$@"; do
      local w=1920 h=1080 n=$NP z=1.5
      [ $s = 2160 ] && w=3840 h=2160 n=$N4 z=2.2
      [ -f "$C/pan_${s}_$b.yuv" ] || python3 benches/make_pan.py "$C/eg_ref.yuv" "$C/pan_${s}_$b.yuv" $w $h $n $b $z &
    done
  done
  wait
}

# A codec's container, depth and chroma layout; a size's dimensions.
ext() { case $1 in vp9) echo webm ;; av1) echo mkv ;; *) echo mp4 ;; esac; }
bits() { case $1 in hevc10 | hevc444_10) echo 10 ;; hevc12 | hevc444_12) echo 12 ;; *) echo 8 ;; esac; }
layout() { case $1 in hevc444*) echo 444 ;; *) echo 420 ;; esac; }
dims() { case $1 in 2160) echo 3840 2160 ;; *) echo 1920 1080 ;; esac; }

# encode CODEC SIZE ROLE KBITS: the pan encoded by GStreamer's encoder for
# CODEC (x264, x265, libvpx, libaom) at KBITS kbit/s, made once; prints its path.
# Every encoder's fastest settings: the bench times decoding, not encoding.
encode() {
  local c=$1 s=$2 k=$4 out=$C/${1}_${2}_$3.$(ext "$1") w=1920 h=1080 fmt=i420 enc
  [ "$s" = 2160 ] && w=3840 h=2160
  [ "$(bits "$c")" = 8 ] || fmt=i420-$(bits "$c")le
  case $c in
    h264) enc="x264enc bitrate=$k speed-preset=veryfast key-int-max=60 ! video/x-h264,profile=high ! h264parse ! mp4mux" ;;
    h265) enc="x265enc bitrate=$k speed-preset=veryfast key-int-max=60 ! video/x-h265,profile=main ! h265parse ! mp4mux" ;;
    hevc10) enc="x265enc bitrate=$k speed-preset=veryfast key-int-max=60 ! video/x-h265,profile=main-10 ! h265parse ! mp4mux" ;;
    hevc12) enc="x265enc bitrate=$k speed-preset=veryfast key-int-max=60 ! video/x-h265,profile=main-12 ! h265parse ! mp4mux" ;;
    hevc444) enc="videoconvert ! video/x-raw,format=Y444 ! x265enc bitrate=$k speed-preset=veryfast key-int-max=60 \
      ! video/x-h265,profile=main-444 ! h265parse ! mp4mux" ;;
    hevc444_*) enc="videoconvert ! video/x-raw,format=Y444_$(bits "$c")LE ! x265enc bitrate=$k speed-preset=veryfast \
      key-int-max=60 ! video/x-h265,profile=main-444-$(bits "$c") ! h265parse ! mp4mux" ;;
    vp9) enc="vp9enc deadline=1 cpu-used=8 threads=16 row-mt=true target-bitrate=$((k * 1000)) keyframe-max-dist=60 ! webmmux" ;;
    # libaom's rate control misses its target on short clips: quantizers
    # instead (24-32 for the reference, 44-52 for the distorted).
    av1) enc="av1enc usage-profile=realtime cpu-used=8 threads=16 row-mt=true end-usage=q $(
      [ "$3" = ref ] && echo min-quantizer=24 max-quantizer=32 || echo min-quantizer=44 max-quantizer=52
    ) keyframe-max-dist=60 ! av1parse ! matroskamux" ;;
  esac
  [ -f "$out" ] || $GL -q filesrc location="$C/pan_${s}_$(bits "$c").yuv" \
    ! rawvideoparse width=$w height=$h format=$fmt framerate=25/1 ! $enc ! filesink location="$out" > /dev/null
  echo "$out"
}

# planes LABEL CMD...: one more run of a vmafhip command with the element's
# debug output: which decoder took each input, and how many planes were
# read on the device, uploaded, or staged through the host.
planes() {
  local label=$1
  shift
  echo "$label: $(GST_DEBUG=vmafhip:4,vmafhip-command:4 GST_DEBUG_NO_COLOR=1 "$@" 2>&1 \
    | grep -o "input planes so far: .*\|decoded with .*" | tail -2 | paste -sd';')"
}

# cpu_json CODEC SIZE MODEL: the pair's numbers from a CPU decoder into
# $C/cpu.json: ffmpeg's software decoder to raw, scored raw, or for AV1
# (which ffmpeg here cannot decode in software) libaom's av1dec.
cpu_json() {
  local c=$1 s=$2 f w h pix
  read -r w h <<< "$(dims "$s")"
  pix=yuv$(layout "$c")p
  [ "$(bits "$c")" = 8 ] || pix=$pix$(bits "$c")le
  if [ "$c" = av1 ]; then
    "$B/vmafhip" "$C/${c}_${s}_ref.mkv" "$C/${c}_${s}_dis.mkv" --decoder cpu --backend hip \
      --model version="$3" --json -o "$C/cpu.json" -q
    return
  fi
  for f in ref dis; do
    [ -f "$C/${c}_${s}_$f.dec.yuv" ] || env LD_LIBRARY_PATH="$OURS" "$FF" -hide_banner -loglevel error \
      -i "$C/${c}_${s}_$f.$(ext "$c")" -f rawvideo -pix_fmt $pix "$C/${c}_${s}_$f.dec.yuv"
  done
  "$B/vmafhip" -r "$C/${c}_${s}_ref.dec.yuv" -d "$C/${c}_${s}_dis.dec.yuv" -w "$w" -h "$h" -b "$(bits "$c")" \
    -p "$(layout "$c")" --backend hip --model version="$3" --json -o "$C/cpu.json" -q
}

# command_rows CODEC SIZE TAG MODEL DECODER REF DIST: the command's row,
# where its planes went, and its numbers against a CPU decoder's.
command_rows() {
  local c=$1 s=$2 tag=$3 model=$4 dec=$5 r=$6 d=$7 n=$NP
  [ "$s" = 2160 ] && n=$N4
  rm -f "$C/gpu.json" "$C/cpu.json"
  row "**vmafhip REF DIST --decoder $dec**, $tag $model" "$n" vmafhip \
    "$B/vmafhip" "$r" "$d" --decoder "$dec" --backend hip --model version="$model" --json -o "$C/gpu.json"
  planes "  $tag $model, --decoder $dec" "$B/vmafhip" "$r" "$d" --decoder "$dec" --backend hip --model version="$model"
  cpu_json "$c" "$s" "$model"
  echo "  exactness against the CPU decoder's frames: $(same "$C/gpu.json" "$C/cpu.json")"
}

# codec_rows CODEC: 1080p and 2160p rows for one codec (h264, h265,
# hevc10, hevc12, hevc444, hevc444_10, hevc444_12, vp9, av1): ffmpeg's NVDEC decoding both files and
# nothing else, ffmpeg + libvmaf_cuda (libvmaf f85a8536, 8-bit 4:2:0
# only), and the command (v1 too for H.264 and 4:4:4 at 1080p: it reads
# chroma). AV1 takes --decoder auto: NVDEC where the GPU decodes AV1,
# libaom's av1dec where it does not (the H100 and H200).
codec_rows() {
  local c=$1 name s dec=gpu
  [ "$c" = av1 ] && dec=auto
  case $c in
    h264) name=H.264 ;; h265) name=HEVC ;; hevc10) name="HEVC Main 10" ;; hevc12) name="HEVC Main 12" ;;
    hevc444) name="HEVC 4:4:4" ;; hevc444_*) name="HEVC 4:4:4 $(bits "$c")-bit" ;;
    vp9) name=VP9 ;; av1) name=AV1 ;;
  esac
  for s in 1080 2160; do
    local n=$NP model=vmaf_v0.6.1 m=1
    [ $s = 2160 ] && n=$N4 model=vmaf_4k_v0.6.1 m=3
    local hi=$((4000 * m)) lo=$((1200 * m))
    case $c in h265 | hevc10 | hevc12 | hevc444*) hi=$((3000 * m)) lo=$((800 * m)) ;; vp9 | av1) hi=$((2000 * m)) lo=$((600 * m)) ;; esac
    local r d tag="${s}p $name"
    r=$(encode "$c" $s ref $hi)
    d=$(encode "$c" $s dis $lo)
    echo "== $tag: $(du -k "$r" "$d" | awk '{printf "%s %d kB; ", $2, $1}')"
    row "ffmpeg NVDEC, decode only (both files), $tag" "$n" none \
      env LD_LIBRARY_PATH="$OURS" "$FF" -hide_banner -nostats -loglevel error $HW -i "$d" $HW -i "$r" -map 0:v -map 1:v -f null -
    if [ "$(bits "$c")$(layout "$c")" = 8420 ] && [ -f "$REAL/libvmaf.so.3" ]; then
      row "ffmpeg NVDEC + scale_cuda + libvmaf_cuda (libvmaf f85a8536), $tag $model" "$n" ffjson:$C/ff.json \
        env LD_LIBRARY_PATH="$REAL:$OURS" "$FF" -hide_banner -nostats -loglevel error $HW -i "$d" $HW -i "$r" -filter_complex \
        "[0:v]scale_cuda=format=yuv420p[dis];[1:v]scale_cuda=format=yuv420p[ref];[dis][ref]libvmaf_cuda=model=version=$model:log_fmt=json:log_path=$C/ff.json" -f null -
    fi
    command_rows "$c" $s "$tag" $model $dec "$r" "$d"
    if [ $s = 1080 ] && { [ "$c" = h264 ] || [ "$(layout "$c")" = 444 ]; }; then
      command_rows "$c" $s "$tag" vmaf_v1.0.16_3d0h gpu "$r" "$d"
    fi
  done
}

# cpairs_rows: 16 copies of the 1080p H.264 pair at once: ffmpeg's NVDEC
# decode-only in 16 processes against one `vmafhip --pairs`.
cpairs_rows() {
  local r d list=$C/cpairs16.csv k
  r=$(encode h264 1080 ref 4000)
  d=$(encode h264 1080 dis 1200)
  : > "$list"
  for k in $(seq 16); do echo "$r,$d,$C/cpair$k.json" >> "$list"; done
  row "ffmpeg NVDEC, decode only, 16 processes at once, 1080p H.264" $((16 * NP)) none \
    bash -c 'for k in $(seq 16); do "$@" & done; wait' sh env LD_LIBRARY_PATH="$OURS" "$FF" -hide_banner -nostats \
    -loglevel error $HW -i "$d" $HW -i "$r" -map 0:v -map 1:v -f null -
  row "**vmafhip --pairs**, 16 pairs of 1080p H.264 at once" $((16 * NP)) none \
    "$B/vmafhip" --pairs "$list" --decoder gpu --backend hip -q
  echo "  first and last pair: $(same "$C/cpair1.json" "$C/cpair16.json")"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
for f in ref crf30; do
  [ -f "$C/eg_$f.yuv" ] || zstd -q -d "tests/data/golden/eveningglow_1920x1080_420p8_3f_$f.yuv.zst" -o "$C/eg_$f.yuv"
done
for w in $WHICH; do
  case $w in raw | pairs) clips ;; h264 | h265 | hevc* | vp9 | av1 | cpairs) pans "$(bits "$w")" ;; esac
done
for w in $WHICH; do
  case $w in
    raw) raw_rows ;;
    pairs) pairs_rows ;;
    h264 | h265 | hevc10 | hevc12 | hevc444* | vp9 | av1) codec_rows "$w" ;;
    cpairs) cpairs_rows ;;
  esac
done
echo
echo "| what | fps (median of $RUNS) | runs | pooled VMAF |"
echo "|---|---|---|---|"
cat "$TABLE"
