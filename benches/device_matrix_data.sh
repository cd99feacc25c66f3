#!/bin/bash
# Here (Debian 12, gst-libav installed): makes tests/matrix.rs's encodes for
# the GPU machine, with what each must score. Into DIR/data/matrix: the
# masters as Y4M (the golden astronaut pan's six first frames, 576x324 and
# 448x256, in the matrix's formats); the encodes (x264 MP4, 4:2:2 MKV,
# 10-bit TS; x265 10-bit MP4, 4:4:4 MKV; VP9 WebM and MKV; AV1 MKV) made
# with the matrix's settings; and for each, the command's JSON on this
# machine's CPU engine with exact CPU decoders (libavcodec), with PSNR so
# that chroma is read. benches/device_inputs_check.sh scores the same pairs
# there with default options (GPU engine, GPU decoders where they take the
# stream) and compares, frame by frame.
# usage: bash benches/device_matrix_data.sh DIR   (after cargo build --release)
set -eu
D=${1:?usage: device_matrix_data.sh DIR}/data/matrix
V=$PWD/target/release/vmafhip
G=$PWD/tests/data/golden
mkdir -p "$D"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
zstd -q -d -f "$G/astronaut_576x324_420p8_12f_ref.yuv.zst" -o "$T/astro.yuv"
head -c $((6 * 576 * 324 * 3 / 2)) "$T/astro.yuv" > "$T/six.yuv"

# master FORMAT Y4M-TAG W H: the six frames in FORMAT, cropped to W x H,
# as DIR's master_FORMAT_WxH.y4m (and a raw copy in $T).
master() {
  local f=$1 tag=$2 w=$3 h=$4 raw=$T/master_$1_$3x$4.yuv
  gst-launch-1.0 -q filesrc location="$T/six.yuv" \
    ! rawvideoparse width=576 height=324 format=i420 framerate=25/1 \
    ! videocrop right=$((576 - w)) bottom=$((324 - h)) ! videoconvert dither=none \
    ! video/x-raw,format="$f" ! filesink location="$raw"
  python3 - "$raw" "$D/master_${f}_${w}x${h}.y4m" "$w" "$h" "$tag" <<'PY'
import sys
raw, out, w, h, tag = sys.argv[1:]
b = open(raw, "rb").read()
n = len(b) // 6
y4m = f"YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C{tag}\n".encode()
for i in range(6):
    y4m += b"FRAME\n" + b[i * n:(i + 1) * n]
open(out, "wb").write(y4m)
PY
}

# encode NAME FORMAT PARSE W H EXT ENCODER... : the encode, and its JSON
# against the master on the CPU here.
encode() {
  local name=$1 f=$2 parse=$3 w=$4 h=$5 ext=$6
  shift 6
  local raw=$T/master_${f}_${w}x${h}.yuv out=$D/$name.$ext
  gst-launch-1.0 -q filesrc location="$raw" \
    ! rawvideoparse width="$w" height="$h" format="$parse" framerate=25/1 \
    ! "$@" ! filesink location="$out"
  "$V" "$D/master_${f}_${w}x${h}.y4m" "$out" --backend cpu --decoder cpu \
    --feature psnr --json -o "$D/exp_$name.json" -q
}

master I420 420jpeg 576 324
master Y42B 422 576 324
master Y444 444 576 324
master I420_10LE 420p10 576 324
master I420 420jpeg 448 256
encode h264_mp4 I420 i420 576 324 mp4 x264enc pass=quant quantizer=30 threads=1 ! mp4mux
encode h264_422_mkv Y42B y42b 576 324 mkv x264enc pass=quant quantizer=30 threads=1 ! matroskamux
encode h264_10bit_ts I420_10LE i420-10le 576 324 ts x264enc pass=quant quantizer=30 threads=1 ! h264parse ! mpegtsmux
encode hevc_10bit_mp4 I420_10LE i420-10le 576 324 mp4 x265enc bitrate=600 ! h265parse ! mp4mux
encode hevc_444_mkv Y444 y444 576 324 mkv x265enc bitrate=600 ! h265parse ! matroskamux
encode vp9_webm I420 i420 576 324 webm vp9enc deadline=1 cpu-used=8 target-bitrate=600000 ! webmmux
encode av1_mkv I420 i420 576 324 mkv av1enc cpu-used=8 target-bitrate=600 ! av1parse ! matroskamux
encode vp9_small_mkv I420 i420 448 256 mkv vp9enc deadline=1 cpu-used=8 target-bitrate=300000 ! matroskamux
# Compressed against compressed, both sides on the GPU's decoders there.
"$V" "$D/vp9_webm.webm" "$D/av1_mkv.mkv" --backend cpu --decoder cpu \
  --feature psnr --json -o "$D/exp_vp9_av1.json" -q
"$V" "$D/h264_mp4.mp4" "$D/vp9_webm.webm" --backend cpu --decoder cpu \
  --feature psnr --json -o "$D/exp_h264_vp9.json" -q
du -sh "$D"
