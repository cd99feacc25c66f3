#!/usr/bin/env bash
# The element's tests on every GStreamer its users run, from Debian's own
# packages: 1.22 (Debian 12, this machine), 1.26 (Debian 13, trixie) and
# 1.28 (Debian sid). For trixie and sid a root is made once with
# debootstrap (minbase, GStreamer's tools and plugins, and what the tests
# build with); the plugin, the command and the test binaries built here,
# against 1.22, run inside it with the repository bind-mounted at its own
# path, so the paths built into the tests hold. Each suite's log says the
# GStreamer version it ran on and every test's result.
#
#   bash tools/gst-versions.sh [SUITE ...]   # default: bookworm trixie sid
#
# GST_ROOTS (default /var/tmp/vmafhip-gst-roots) keeps the roots between
# runs; LOGS (default target/gst-versions) gets a log per suite. Needs
# root (debootstrap, chroot, mount). Exit status 1 if any suite failed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
roots=${GST_ROOTS:-/var/tmp/vmafhip-gst-roots}
logs=${LOGS:-$repo/target/gst-versions}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(bookworm trixie sid)
# The tests that run the element in pipelines, the command, the ladder and
# the C application written for 1.28's `vmaf`; their filters skip what
# needs the GPU machine or this machine's own tools.
tests=(element ladder cli compat_128 inputs hip_memory)
packages=gstreamer1.0-tools,gstreamer1.0-plugins-base,gstreamer1.0-plugins-good,gstreamer1.0-plugins-bad,gstreamer1.0-plugins-ugly,gstreamer1.0-libav,libgstreamer1.0-dev,libgstreamer-plugins-base1.0-dev,gcc,libc6-dev,pkg-config,zstd,python3

# The test binaries cargo built (release), by name.
test_binary() {
  cargo test --release --test "$1" --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"):
        print(m["executable"])' "$1" | tail -1
}

make_root() {
  local suite=$1 root=$2
  [ -f "$root/.vmafhip-ready" ] && return 0
  rm -rf "$root"
  mkdir -p "$root"
  echo "gst-versions: making the $suite root in $root (debootstrap)"
  # debootstrap's --include does not choose among alternatives (dconf's
  # D-Bus session bus), and sid is often mid-transition (a plugin's library
  # not built yet): packages can be left unpacked but not configured. They
  # are configured regardless of such dependencies, which concern plugins
  # the tests do not use; the checks below say whether what they use works.
  debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" > "$logs/$suite-debootstrap.log" 2>&1 ||
    echo "gst-versions: $suite: debootstrap left packages unconfigured; configuring them"
  mount_into "$root" /proc
  chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin DEBIAN_FRONTEND=noninteractive \
    dpkg --configure -a --force-depends >> "$logs/$suite-debootstrap.log" 2>&1
  chroot "$root" sh -c 'gst-inspect-1.0 --version && gst-inspect-1.0 h264parse > /dev/null && pkg-config --exists gstreamer-1.0 && cc --version' \
    > /dev/null 2>&1 || { echo "gst-versions: $suite: the root lacks GStreamer, h264parse or cc"; return 1; }
  touch "$root/.vmafhip-ready"
}

# run_in SUITE CMD...: CMD on this machine (bookworm) or in the suite's root.
run_in() {
  local suite=$1
  shift
  if [ "$suite" = bookworm ]; then
    (cd "$repo" && "$@")
  else
    # In the repository, as cargo runs tests.
    chroot "$roots/$suite" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
      GST_REGISTRY=/tmp/gst-registry.bin sh -c 'cd "$0" && exec "$@"' "$repo" "$@"
  fi
}

mounted=()
cleanup() {
  local m
  for m in "${mounted[@]}"; do umount "$m" 2> /dev/null || umount -l "$m" 2> /dev/null || true; done
}
trap cleanup EXIT

mount_into() {
  local root=$1 path=$2
  mkdir -p "$root$path"
  mountpoint -q "$root$path" || { mount --bind "$path" "$root$path" && mounted+=("$root$path"); }
}

mkdir -p "$logs"
echo "gst-versions: building the plugin, the command and the tests (release)"
cargo build --release
bins=()
for t in "${tests[@]}"; do bins+=("$(test_binary "$t")"); done
failed=0
for suite in "${suites[@]}"; do
  log=$logs/$suite.log
  if [ "$suite" != bookworm ]; then
    make_root "$suite" "$roots/$suite" || { echo "gst-versions: $suite: no root"; failed=1; continue; }
    for p in /proc /dev "$repo"; do mount_into "$roots/$suite" "$p"; done
  fi
  version=$(run_in "$suite" gst-inspect-1.0 --version | sed -n 's/^GStreamer //p')
  {
    echo "# $suite: GStreamer $version"
    run_in "$suite" env GST_PLUGIN_PATH="$repo/target/release" gst-inspect-1.0 vmafhip |
      grep -E "^  (Version|Long-name)|memory:|Capabilities" || true
  } > "$log" 2>&1
  ok=1
  for i in "${!tests[@]}"; do
    echo "## tests/${tests[$i]}.rs" >> "$log"
    run_in "$suite" "${bins[$i]}" --test-threads 2 >> "$log" 2>&1 || ok=0
  done
  summary=$(grep -E "^test result" "$log" | awk '{p += $4; f += $6} END {printf "%d passed, %d failed", p, f}')
  echo "gst-versions: $suite (GStreamer $version): $summary$([ $ok = 1 ] || echo ' (FAILED)')"
  echo "# $suite: $summary" >> "$log"
  [ $ok = 1 ] || { failed=1; grep -E "^test .* FAILED|panicked at" "$log" | head -20; }
done
exit $failed
