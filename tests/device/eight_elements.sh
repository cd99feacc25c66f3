#!/bin/sh
# Eight vmafhip elements at once in one gst-launch process on one GPU: each
# scores its own test pattern against a down/up-scaled copy, once with
# backend=hip and once with backend=cpu; every pooled score must be identical
# (every field of the pooled messages, doubles printed with 17 significant
# digits by GStreamer). Run on the GPU machine
# from the repository root with GStreamer unpacked as benches/pipeline_bench.sh
# does: sh tests/device/eight_elements.sh
set -eu
# GST_LAUNCH set: use that gst-launch-1.0 (and the caller's GST_PLUGIN_PATH).
GL=${GST_LAUNCH:-}
if [ -z "$GL" ]; then
  . benches/device_gst_env.sh
fi
GPU_BACKEND=${GPU_BACKEND:-hip}
pipeline() {
  backend=$1; p=""
  k=0
  for pattern in smpte ball snow pinwheel spokes gradient circular zone-plate; do
    w=$((320 + 32 * k)); h=$((180 + 18 * k))
    caps="video/x-raw,format=I420,width=$w,height=$h,framerate=30/1"
    p="$p videotestsrc num-buffers=60 pattern=$pattern ! $caps ! tee name=t$k"
    p="$p t$k. ! queue ! v$k.ref_sink"
    p="$p t$k. ! queue ! videoscale ! video/x-raw,width=$((w * 3 / 4 / 2 * 2)),height=$((h * 3 / 4 / 2 * 2)) ! videoscale ! $caps ! v$k.dist_sink"
    p="$p vmafhip name=v$k backend=$backend ! fakesink"
    k=$((k + 1))
  done
  # One line per element: its name, backend kind, then the whole pooled
  # structure (score, min/max/means of every feature) without the backend text.
  $GL -m $p 2>&1 | grep 'type=(string)pooled' \
    | sed -E 's/.*from element "v([0-9])"[^:]*: (.*)backend=\(string\)"([a-z]*)[^"]*"(.*)/v\1 \3 \2\4/' | sort
}
pipeline "$GPU_BACKEND" > /tmp/hip.txt
pipeline cpu > /tmp/cpu.txt
cut -c1-150 /tmp/hip.txt
test "$(cut -d' ' -f2 /tmp/hip.txt | sort -u)" = "$GPU_BACKEND" || { echo "FAIL: not all computed by $GPU_BACKEND"; exit 1; }
cut -d' ' -f1,3- /tmp/hip.txt > /tmp/hip.s; cut -d' ' -f1,3- /tmp/cpu.txt > /tmp/cpu.s
test "$(wc -l < /tmp/hip.txt)" -eq 8 || { echo "FAIL: expected 8 pooled scores"; exit 1; }
if cmp -s /tmp/hip.s /tmp/cpu.s; then echo "PASS: 8 elements at once, hip == cpu for every pooled score"; else echo "FAIL: hip and cpu differ"; diff /tmp/hip.s /tmp/cpu.s | cut -c1-400; exit 1; fi
