#!/bin/bash
# Packs (here, on Debian 12) GStreamer 1.28 from the Debian sid root that
# tools/gst-versions.sh made, for the GPU machine: gst-launch-1.0 and
# gst-inspect-1.0, the plugins the HIP-memory runs use (core, videotestsrc,
# videoconvertscale, app, rawparse, typefind, isomp4, videoparsersbad,
# nvcodec, hip), every library they load, and sid's own loader and libc
# (newer than the GPU machine's). On the GPU machine,
# benches/device_sid_env.sh unpacks it and runs GStreamer through that
# loader. Output: DIR/sid.tar.xz.
#   usage: bash benches/device_sid_runtime.sh DIR
set -euo pipefail
out=${1:?usage: device_sid_runtime.sh DIR}
root=${GST_ROOTS:-/var/tmp/vmafhip-gst-roots}/sid
[ -f "$root/.vmafhip-ready" ] || { echo "no sid root: run bash tools/gst-versions.sh sid first"; exit 1; }
lib=/usr/lib/x86_64-linux-gnu
plugins="coreelements videotestsrc videoconvertscale app rawparse typefindfunctions isomp4 videoparsersbad nvcodec hip"
files="/usr/bin/gst-launch-1.0 /usr/bin/gst-inspect-1.0"
for p in $plugins; do files="$files $lib/gstreamer-1.0/libgst$p.so"; done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/sid/lib" "$stage/sid/plugins" "$stage/sid/bin"
# Every library the binaries and plugins load, resolved by sid's own ldd.
chroot "$root" ldd $files | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  while read -r so; do cp -L "$root$so" "$stage/sid/lib/"; done
cp -L "$root$lib/ld-linux-x86-64.so.2" "$stage/sid/lib/"
for p in $plugins; do cp "$root$lib/gstreamer-1.0/libgst$p.so" "$stage/sid/plugins/"; done
cp "$root/usr/bin/gst-launch-1.0" "$root/usr/bin/gst-inspect-1.0" "$stage/sid/bin/"
chroot "$root" dpkg-query -W libgstreamer1.0-0 gstreamer1.0-plugins-bad libc6 > "$stage/sid/VERSIONS"
mkdir -p "$out"
tar -C "$stage" -cJf "$out/sid.tar.xz" sid
du -h "$out/sid.tar.xz"
