# Sourced by the GPU-machine scripts: unpacks Debian's GStreamer 1.22 from
# $DEV/debs, and the encoders in $DEV/debs_enc* where carried (DEV defaults
# to .device), into /tmp/gstroot (never into /) and
# points GStreamer at it and at the plugin in $DEV/plugin; libraries in
# $DEV/extralibs (nvcodec's GL/X11/Wayland links) go on the library path.
# Sets GL to its gst-launch-1.0.
D=$PWD/${DEV:-.device}
mkdir -p /tmp/gstroot
# Unpacked once per set of packages: a second script on the same machine
# (or one beside a running one) leaves the libraries in use alone.
UNPACKED=/tmp/gstroot/.unpacked-$(ls "$D"/debs* | cksum | cut -d' ' -f1)
if [ ! -e "$UNPACKED" ]; then
  for f in "$D"/debs/*.deb "$D"/debs_enc*/*.deb; do [ -f "$f" ] && dpkg -x "$f" /tmp/gstroot; done
  touch "$UNPACKED"
fi
export LD_LIBRARY_PATH=/tmp/gstroot/usr/lib/x86_64-linux-gnu:/tmp/gstroot/lib/x86_64-linux-gnu:$D/extralibs
export GST_PLUGIN_SYSTEM_PATH=/tmp/gstroot/usr/lib/x86_64-linux-gnu/gstreamer-1.0
export GST_PLUGIN_SCANNER=/tmp/gstroot/usr/lib/x86_64-linux-gnu/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner
# One registry per set of packages: a plugin that failed to load for want
# of a library stays blacklisted in a registry until its file changes.
export GST_REGISTRY=/tmp/gstreg-$(ls "$D"/debs* | cksum | cut -d' ' -f1).bin GST_PLUGIN_PATH=$D/plugin
# GStreamer 1.22's nvcodec looks for older nvrtc names; CUDA 13 has .so.13
# (cudaconvert and cudascale compile their kernels with it).
for n in /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.1[0-9]; do
  [ -e "$n" ] && export GST_NVCODEC_NVRTC_LIBNAME=$(basename "$n") LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$n")
done
GL=/tmp/gstroot/usr/bin/gst-launch-1.0
GI=/tmp/gstroot/usr/bin/gst-inspect-1.0
