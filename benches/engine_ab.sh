#!/bin/bash
# A/B of the GPU engine on the GPU machine: two builds of examples/bench
# (A and B, e.g. before and after a change), alternating, ROUNDS rounds,
# VMAF v0 and v1 at 1080p and 2160p. Each run prints the engine's median
# fps of RUNS runs; compare the two columns of the same round.
#   bash benches/engine_ab.sh A/bench B/bench
set -u
A=$1
B=$2
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-3}
cases=(
  "1080p v0|--width 1920 --height 1080 --frames 1200"
  "2160p v0|--width 3840 --height 2160 --frames 300 --model vmaf_4k_v0.6.1"
  "1080p v1|--width 1920 --height 1080 --frames 600 --model vmaf_v1.0.16_3d0h"
  "2160p v1|--width 3840 --height 2160 --frames 200 --model vmaf_v1.0.16_3d0h_2160"
)
fps() { "$1" --backend hip $2 --runs "$RUNS" --no-profile 2>/dev/null | awk -F'|' '/engine fps/ {gsub(/ /, "", $3); print $3}'; }
for r in $(seq "$ROUNDS"); do
  for c in "${cases[@]}"; do
    name=${c%%|*}
    args=${c#*|}
    a=$(fps "$A" "$args")
    b=$(fps "$B" "$args")
    echo "round $r, $name: A $a fps, B $b fps"
  done
done
