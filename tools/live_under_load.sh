#!/bin/bash
# Runs the live station tests (tests/live_qa.rs, tests/live_reconnect.rs)
# N times in a row (default 10) with two busy processes beside them, as a
# QA station shares its machine with the transcoder it watches; stops at
# the first failure. Prints one line a run, each test's findings, and the
# tally. Usage: tools/live_under_load.sh [N]
set -euo pipefail
runs=${1:-10}
cd "$(dirname "$0")/.."
cargo build --release --tests -q
yes > /dev/null & busy1=$!
yes > /dev/null & busy2=$!
trap 'kill $busy1 $busy2 2>/dev/null' EXIT
log=$(mktemp)
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  if ! cargo test --release -q --test live_qa --test live_reconnect -- --nocapture > "$log" 2>&1; then
    grep -E "panicked|FAILED|left|right" "$log" | head -20
    echo "run $i of $runs: FAILED (log: $log)"
    exit 1
  fi
  found=$(grep -E "^(udp|rtp|srt|rtsp|hls): |^restarted at|^inputs " "$log" | cut -c1-120 | tr '\n' ';')
  passed=$(grep -oE "test result: ok. [0-9]+ passed" "$log" | awk '{s+=$4} END {print s}')
  echo "run $i of $runs: ok, $passed passed, $(( $(date +%s) - start )) s; $found"
done
echo "$runs runs in a row passed with two busy processes beside them"
