#!/bin/bash
# On the GPU machine: what a 1080p live station on the GPU keeps of the
# pinned buffers its start needed (the frames queued while it opens and
# aligns). One station of benches/device_four_stations.sh (--backend hip
# --decoder gpu, 22 s), run with each build given (BINS: zstd'd vmafhip
# binaries), its RSS sampled every second, and the pinned pool's log
# (GST_DEBUG=vmafhippool:5) counted: blocks allocated, buffers discarded
# and blocks freed as idle.
# Needs DEV/debs (benches/device_debs.sh) and the binaries.
set -u
for bin in $BINS; do
  echo "== $bin"
  rm -f /tmp/trim-pool.log /tmp/trim-rss.txt
  GST_DEBUG=vmafhippool:5 GST_DEBUG_FILE=/tmp/trim-pool.log STATIONS=1 BIN=$bin \
    bash benches/device_four_stations.sh > /tmp/trim-station.txt 2>&1 &
  STATION=$!
  t=0
  while kill -0 $STATION 2>/dev/null; do
    rss=$(ps -C vmafhip -o rss= | head -1)
    [ -n "$rss" ] && echo "$t $rss" >> /tmp/trim-rss.txt
    sleep 1; t=$((t + 1))
  done
  grep -E "^VMAF|^scored" /tmp/trim-station.txt
  echo "pool: $(grep -c 'pinned block .* allocated' /tmp/trim-pool.log) blocks allocated, $(grep -c 'idle pinned buffer discarded' /tmp/trim-pool.log) buffers discarded, $(grep -c 'idle pinned block freed' /tmp/trim-pool.log) blocks freed"
  awk '{printf "%s:%.0f ", $1, $2 / 1024} END {print "(s:RSS MiB)"}' /tmp/trim-rss.txt
done
