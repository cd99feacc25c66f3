#!/bin/bash
# Streams of pipelines in one gst-launch-1.0 process on the GPU machine
# (docs/PERFORMANCE.md, "GPU-resident input"): N pipelines of two sources into
# vmafhip backend=hip, and the same sources into fakesink, for
#   videotestsrc ! cudaupload ! CUDA memory   (frames uploaded by GStreamer)
#   filesrc ! h264parse ! nvh264dec           (NVDEC, CUDA memory; skipped without it)
#   filesrc ! h264parse ! openh264dec         (software decoder, system memory: it writes
#                                              into vmafhip's pinned pool; skipped without it)
#   filesrc ! rawvideoparse                   (system memory, staged by vmafhip)
#   videotestsrc                              (system memory, written into vmafhip's pinned pool)
#   filesrc ! queue ! rawvideoparse           (the same files, the parser in push mode, which
#                                              passes the element's pool up to filesrc)
#   videotestsrc ! rawvideoparse              (system memory of videotestsrc's own pool: the
#                                              parser passes no pool upstream, so vmafhip's sink
#                                              pads copy the frames on arrival; a cheap source)
# Usage from the repository root: bash benches/gpu_input_bench.sh "1 16" RUNS
# Needs in $DEV (default .device): debs/ (Debian 12's GStreamer 1.22 base,
# tools, plugins-bad, gl; libopenh264-7 for openh264dec), extralibs/, plugin/libgstvmafhip.so, ref.h264 and
# dis.h264 (1080p byte-stream H.264, 600 frames), eg_ref.yuv and eg_dis.yuv
# (1080p I420 frames, repeated to 600). ref.h264 and dis.h264 are constrained
# baseline (which openh264dec decodes).
set -u
NS=${1:-"1 16"}
RUNS=${2:-3}
# WHICH: any of up, dec, sw, file, fileq, test, ord (default all seven).
WHICH=${WHICH:-"up dec sw file fileq test ord"}
. benches/device_gst_env.sh
export VMAFHIP_CACHE_DIR=/tmp/vc GST_DEBUG=vmafhip:4 GST_DEBUG_NO_COLOR=1
F=600
rm -f /tmp/r600.yuv /tmp/d600.yuv
for i in $(seq 200); do cat "$D/eg_ref.yuv" >> /tmp/r600.yuv; cat "$D/eg_dis.yuv" >> /tmp/d600.yuv; done
# run LABEL N BRANCH: RUNS timings of N branches in one process, total fps.
run() {
  local label=$1 n=$2 f=$3 desc=""
  for k in $(seq "$n"); do desc="$desc $($f "$k")"; done
  for r in $(seq "$RUNS"); do
    $GL -m $desc > /tmp/run.log 2>&1 || { echo "$label N=$n failed:"; grep -i "error\|warn" /tmp/run.log | head -5; return; }
    local t; t=$(grep -o "Execution ended after [0-9:.]*" /tmp/run.log | awk '{print $4}')
    awk -v t="$t" -v n="$n" -v f=$F -v r="$r" -v l="$label" 'BEGIN { split(t, a, ":"); s = a[1] * 3600 + a[2] * 60 + a[3]; printf "%s N=%d run %d: %.1f fps in total (%.3f s)\n", l, n, r, n * f / s, s }'
  done
  grep -o "input planes so far: .*" /tmp/run.log | sort | uniq -c | head -3
}
TEST="videotestsrc num-buffers=$F pattern=smpte ! video/x-raw,format=I420,width=1920,height=1080,framerate=60/1"
TEST2="videotestsrc num-buffers=$F pattern=smpte horizontal-speed=4 ! video/x-raw,format=I420,width=1920,height=1080,framerate=60/1"
UP='cudaupload ! video/x-raw(memory:CUDAMemory)'
up_v() { echo "$TEST ! $UP ! v$1.ref_sink $TEST2 ! $UP ! v$1.dist_sink vmafhip name=v$1 backend=hip ! fakesink"; }
up_f() { echo "$TEST ! $UP ! fakesink $TEST2 ! $UP ! fakesink"; }
DEC="h264parse ! nvh264dec"
dec_v() { echo "filesrc location=$D/ref.h264 ! $DEC ! v$1.ref_sink filesrc location=$D/dis.h264 ! $DEC ! v$1.dist_sink vmafhip name=v$1 backend=hip ! fakesink"; }
dec_f() { echo "filesrc location=$D/ref.h264 ! $DEC ! fakesink filesrc location=$D/dis.h264 ! $DEC ! fakesink"; }
SW="h264parse ! openh264dec"
sw_v() { echo "filesrc location=$D/ref.h264 ! $SW ! v$1.ref_sink filesrc location=$D/dis.h264 ! $SW ! v$1.dist_sink vmafhip name=v$1 backend=hip ! fakesink"; }
sw_f() { echo "filesrc location=$D/ref.h264 ! $SW ! fakesink filesrc location=$D/dis.h264 ! $SW ! fakesink"; }
PARSE="rawvideoparse width=1920 height=1080 format=i420 framerate=60/1"
file_v() { echo "filesrc blocksize=3110400 location=/tmp/r600.yuv ! $PARSE ! v$1.ref_sink filesrc blocksize=3110400 location=/tmp/d600.yuv ! $PARSE ! v$1.dist_sink vmafhip name=v$1 backend=hip ! fakesink"; }
fileq_v() { echo "filesrc blocksize=3110400 location=/tmp/r600.yuv ! queue ! $PARSE ! v$1.ref_sink filesrc blocksize=3110400 location=/tmp/d600.yuv ! queue ! $PARSE ! v$1.dist_sink vmafhip name=v$1 backend=hip ! fakesink"; }
fileq_f() { echo "filesrc blocksize=3110400 location=/tmp/r600.yuv ! queue ! $PARSE ! fakesink filesrc blocksize=3110400 location=/tmp/d600.yuv ! queue ! $PARSE ! fakesink"; }
file_f() { echo "filesrc blocksize=3110400 location=/tmp/r600.yuv ! $PARSE ! fakesink filesrc blocksize=3110400 location=/tmp/d600.yuv ! $PARSE ! fakesink"; }
SOLID="videotestsrc num-buffers=$F pattern=solid-color ! video/x-raw,format=I420,width=1920,height=1080,framerate=60/1"
SOLID2="videotestsrc num-buffers=$F pattern=solid-color foreground-color=0xff707070 ! video/x-raw,format=I420,width=1920,height=1080,framerate=60/1"
test_v() { echo "$SOLID ! v$1.ref_sink $SOLID2 ! v$1.dist_sink vmafhip name=v$1 backend=hip ! fakesink"; }
test_f() { echo "$SOLID ! fakesink $SOLID2 ! fakesink"; }
ORD="rawvideoparse use-sink-caps=true"
ord_v() { echo "$SOLID ! $ORD ! v$1.ref_sink $SOLID2 ! $ORD ! v$1.dist_sink vmafhip name=v$1 backend=hip ! fakesink"; }
ord_f() { echo "$SOLID ! $ORD ! fakesink $SOLID2 ! $ORD ! fakesink"; }
$GL $(up_v 1 | sed "s/num-buffers=$F/num-buffers=10/g") > /dev/null 2>&1 # warm the kernel cache
have_sw=1; $GI openh264dec > /dev/null 2>&1 || { have_sw=0; echo "no openh264dec here (libopenh264 missing?)"; }
have_dec=1; $GI nvh264dec > /dev/null 2>&1 || { have_dec=0; echo "no nvh264dec here (NVDEC library missing?):"; $GI nvcodec 2>&1 | tail -3; }
for n in $NS; do
  case $WHICH in *up*)
    run "videotestsrc ! cudaupload -> vmafhip" "$n" up_v
    run "videotestsrc ! cudaupload -> fakesink" "$n" up_f ;;
  esac
  case $WHICH in *dec*) if [ $have_dec = 1 ]; then
    run "nvh264dec -> vmafhip" "$n" dec_v
    run "nvh264dec -> fakesink" "$n" dec_f
  fi ;; esac
  case $WHICH in *sw*) if [ $have_sw = 1 ]; then
    run "openh264dec -> vmafhip" "$n" sw_v
    run "openh264dec -> fakesink" "$n" sw_f
  fi ;; esac
  case " $WHICH " in *" file "*)
    run "filesrc ! rawvideoparse -> vmafhip" "$n" file_v
    run "filesrc ! rawvideoparse -> fakesink" "$n" file_f ;;
  esac
  case $WHICH in *fileq*)
    run "filesrc ! queue ! rawvideoparse -> vmafhip" "$n" fileq_v
    run "filesrc ! queue ! rawvideoparse -> fakesink" "$n" fileq_f ;;
  esac
  case $WHICH in *ord*)
    run "videotestsrc ! rawvideoparse (ordinary memory) -> vmafhip" "$n" ord_v
    run "videotestsrc ! rawvideoparse (ordinary memory) -> fakesink" "$n" ord_f ;;
  esac
  case $WHICH in *test*)
    run "videotestsrc (pinned pool) -> vmafhip" "$n" test_v
    run "videotestsrc -> fakesink" "$n" test_f ;;
  esac
done
