#!/bin/bash
# Downloads (here, on Debian 12) the GStreamer 1.22 packages the GPU machine
# needs for the command and the pipelines, into DIR/debs (a folder git
# ignores, carried to the device; benches/device_gst_env.sh unpacks them
# into /tmp/gstroot there): core and tools, base (videoconvert, videoscale,
# appsrc), good (qtdemux, matroska), bad (nvcodec: nvh264dec, nvh265dec,
# cudaconvert, cudascale; h264parse), ugly with x264 (to encode test clips
# there; x265 from bad), the CPU decoders' libraries (libde265, libvpx,
# dav1d, libaom), and the GL/X11/Wayland libraries nvcodec links.
# usage: bash benches/device_debs.sh DIR
set -eu
D=${1:?usage: device_debs.sh DIR}/debs
mkdir -p "$D"
cd "$D"
apt-get download -qq \
  libgstreamer1.0-0 gstreamer1.0-tools libgstreamer-plugins-base1.0-0 gstreamer1.0-plugins-base \
  gstreamer1.0-plugins-good gstreamer1.0-plugins-bad libgstreamer-plugins-bad1.0-0 \
  libgstreamer-gl1.0-0 gstreamer1.0-plugins-ugly libx264-164 libx265-199 libnuma1 libopenh264-7 \
  liborc-0.4-0 libunwind8 libdw1 libelf1 libglib2.0-0 libgudev-1.0-0 \
  libegl1 libgl1 libglx0 libglvnd0 libgles2 libx11-6 libx11-xcb1 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 \
  libwayland-client0 libwayland-egl1 libwayland-cursor0 libdrm2 libgbm1 libgraphene-1.0-0 \
  libjpeg62-turbo libpng16-16 libbz2-1.0 zstd libzstd1 libde265-0 libvpx7 libdav1d6 libaom3 \
  libexpat1 libwayland-server0 libffi8 libudev1 libxext6 libxfixes3 libxxf86vm1 libxshmfence1 2>&1 | grep -v "unsandboxed" || true
du -sh .
