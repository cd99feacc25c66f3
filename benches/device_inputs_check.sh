#!/bin/bash
# On the GPU machine: the inputs users bring, scored with default options
# (GPU engine, GPU decoders) and compared with the same pairs scored here
# on the CPU with exact CPU decoders (libavcodec), frame by frame:
#   a Y4M master against its H.264 encode; the master as raw .yuv with
#   -w -h; the ladder form (Y4M master, 1280x720 and 960x540 renditions);
#   two H.264 encodes (NVDEC on both sides); the encode as the reference;
#   a 10-bit master against a 10-bit HEVC encode; the H.264 encode with
#   PSNR and CIEDE (chroma read from NVDEC's NV12); tests/matrix.rs's
#   encodes (VP9, AV1, 4:2:2, 4:4:4, 10-bit; benches/device_matrix_data.sh
#   makes them and their CPU JSON here). The masters are made
#   there by benches/make_pan.py from the golden 1080p photograph (their
#   sha256 printed, to match this side's). Then hip_parity's golden runs
#   (the 4:2:2 and 4:4:4 chroma goldens among them).
# Needs DEV/debs (benches/device_debs.sh), DEV/bin/{vmafhip,hip_parity}.zst
# and DEV/data (the encodes and the CPU's JSON, from this script's
# companion steps in docs/testing.md).
set -u
. benches/device_gst_env.sh
X=$D/data
W=/tmp/inputs
mkdir -p $W
export PATH=/tmp/gstroot/usr/bin:$PATH VMAFHIP_CACHE_DIR=/tmp/vc
for b in vmafhip hip_parity; do zstd -q -d -f $D/bin/$b.zst -o $W/$b && chmod +x $W/$b; done
zstd -q -d -f tests/data/golden/eveningglow_1920x1080_420p8_3f_ref.yuv.zst -o $W/eg.yuv
python3 benches/make_pan.py $W/eg.yuv $W/master.y4m 1280 720 60 8
python3 benches/make_pan.py $W/eg.yuv $W/master10.y4m 1280 720 30 10
python3 - $W/master.y4m $W/master.yuv <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
i, fb, out = d.index(b"\n") + 1, 1280 * 720 * 3 // 2, bytearray()
while i < len(d):
    i += 6
    out += d[i:i + fb]
    i += fb
open(sys.argv[2], "wb").write(out)
PY
sha256sum $W/master.y4m $W/master10.y4m | cut -c1-16
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
V=$W/vmafhip
R=$PWD
# The element's log of how input planes reached the GPU (staged = through the host).
planes() { grep -o "input planes so far: .*on the device" "$1" | sed 's/^/  /'; }
check() { # NAME OURS EXPECTED (no OURS: the run was refused, above)
  echo -n "$1: "
  if [ -s "$2" ]; then python3 "$R/benches/compare_json.py" "$2" "$3"; else echo "refused (no results)"; fi
}
run() { # NAME JSON ARGS...: default options, the element's info log kept
  local name=$1 json=$2
  shift 2
  GST_DEBUG=vmafhip:4 GST_DEBUG_NO_COLOR=1 $V "$@" --json -o $json 2> $W/$name.log
  echo "== $name: vmafhip $* (exit $?)"
  grep -E "^(VMAF|note|warning|vmafhip:)|renditions of" $W/$name.log | sed 's/^/  /'
  planes $W/$name.log
}
cd $W
run y4m_enc y4m_enc.json master.y4m $X/enc.mp4
check "y4m vs H.264 (nvdec) against the CPU's avdec_h264" y4m_enc.json $X/exp_y4m_enc.json
run raw_enc raw_enc.json -r master.yuv -d $X/enc.mp4 -w 1280 -h 720
check "raw vs H.264" raw_enc.json $X/exp_raw_enc.json
run ladder ladder.json master.y4m $X/enc.mp4 $X/r540.mp4
check "ladder: enc" ladder.enc.json $X/exp_ladder.enc.json
check "ladder: r540 (scaled)" ladder.r540.json $X/exp_ladder.r540.json
run hevc10 hevc10.json master10.y4m $X/hevc10.mp4
check "10-bit y4m vs 10-bit HEVC" hevc10.json $X/exp_hevc10.json
run chroma chroma.json master.y4m $X/enc.mp4 --feature psnr --feature ciede
check "y4m vs H.264, PSNR and CIEDE (NV12 chroma split on the GPU)" chroma.json $X/exp_chroma.json
run enc_enc2 enc_enc2.json $X/enc.mp4 $X/enc2.mp4
check "H.264 against H.264 (NVDEC on both sides)" enc_enc2.json $X/exp_enc_enc2.json
run enc_y4m enc_y4m.json $X/enc.mp4 master.y4m
check "H.264 as the reference, the Y4M master as distorted" enc_y4m.json $X/exp_enc_y4m.json
echo "== --decoder cpu there (no gst-libav: refused, naming why each installed decoder is not used):"
$V master.y4m $X/enc.mp4 --decoder cpu -q 2>&1 | sed 's/^/  /'
$V master10.y4m $X/hevc10.mp4 --decoder cpu -q 2>&1 | sed 's/^/  /'
echo "== the input matrix (benches/device_matrix_data.sh): each encode against its"
echo "   Y4M master, --feature psnr, default options, then --decoder gpu"
M=$X/matrix
for z in $M/*.y4m.zst; do zstd -q -d -f $z -o $W/$(basename $z .zst); done
python3 - $W/master_I420_576x324.y4m $W/master_I420_448x256.y4m <<'PY'
# The 448x256 master: the 576x324 one's top-left corner, as videocrop cut it.
import sys
d = open(sys.argv[1], "rb").read()
i, out = d.index(b"\n") + 1, bytearray(b"YUV4MPEG2 W448 H256 F25:1 Ip A1:1 C420jpeg\n")
while i < len(d):
    i += 6
    out += b"FRAME\n"
    for w, h, cw, ch in ((576, 324, 448, 256), (288, 162, 224, 128), (288, 162, 224, 128)):
        for r in range(ch):
            out += d[i + r * w:i + r * w + cw]
        i += w * h
open(sys.argv[2], "wb").write(out)
PY
master() { # ENCODE: its master's file name
  case $1 in
    h264_422*) echo master_Y42B_576x324.y4m ;;
    hevc_444*) echo master_Y444_576x324.y4m ;;
    *10bit*) echo master_I420_10LE_576x324.y4m ;;
    *small*) echo master_I420_448x256.y4m ;;
    *) echo master_I420_576x324.y4m ;;
  esac
}
for e in $M/*.mp4 $M/*.mkv $M/*.webm $M/*.ts; do
  n=$(basename ${e%.*})
  run m_$n m_$n.json $(master $n) $e --feature psnr
  check "matrix $n (auto)" m_$n.json $M/exp_$n.json
  run g_$n g_$n.json $(master $n) $e --feature psnr --decoder gpu
  check "matrix $n (--decoder gpu)" g_$n.json $M/exp_$n.json
done
run m_vp9_av1 m_vp9_av1.json $M/vp9_webm.webm $M/av1_mkv.mkv --feature psnr
check "matrix VP9 against AV1" m_vp9_av1.json $M/exp_vp9_av1.json
run m_h264_vp9 m_h264_vp9.json $M/h264_mp4.mp4 $M/vp9_webm.webm --feature psnr
check "matrix H.264 against VP9" m_h264_vp9.json $M/exp_h264_vp9.json
cd - > /dev/null
echo "== hip_parity: golden runs bit-exact with the CPU engine"
VMAFHIP_TESTDATA=$PWD/tests/data/golden VMAFHIP_GOLDEN_CACHE=/tmp/golden $W/hip_parity \
  golden_pairs_bit_exact_with_cpu v1_golden_runs --test-threads 1 2>&1 | grep -E "test |result|mismatch|frames" | tail -40
