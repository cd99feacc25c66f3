# Sourced by the GPU-machine scripts that run GStreamer 1.28 (Debian sid):
# unpacks $DEV/sid.tar.xz (benches/device_sid_runtime.sh; DEV defaults to
# .device) into /tmp/sid and defines GL and GI, gst-launch-1.0 and
# gst-inspect-1.0 run through sid's own loader and libraries (its glibc is
# newer than the machine's). The registry is scanned in-process
# (GST_REGISTRY_FORK=no: the plugin scanner would start with the machine's
# loader); the plugin is taken from $DEV/plugin.
D=$PWD/${DEV:-.device}
[ -d /tmp/sid ] || tar -C /tmp -xJf "$D/sid.tar.xz"
export GST_PLUGIN_SYSTEM_PATH=/tmp/sid/plugins GST_PLUGIN_PATH=$D/plugin
export GST_REGISTRY=/tmp/sid-registry.bin GST_REGISTRY_FORK=no
# GstHip's NVIDIA vendor opens libcudart.so by that name: the toolkit's.
SID_PATH=/tmp/sid/lib
for c in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -e "$c/libcudart.so" ] && SID_PATH=$SID_PATH:$c
done
sid_run() { /tmp/sid/lib/ld-linux-x86-64.so.2 --library-path "$SID_PATH" "$@"; }
GL="sid_run /tmp/sid/bin/gst-launch-1.0"
GI="sid_run /tmp/sid/bin/gst-inspect-1.0"
