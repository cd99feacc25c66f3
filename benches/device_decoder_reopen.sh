#!/bin/bash
# On the GPU machine: resident memory per decoder opened again in one
# process (benches/decoder_reopen.py), NVDEC against a CPU decoder, with Debian 12's
# GStreamer and Python (DEV/debs, DEV/pydebs as benches/device_live_soak.sh).
#   DEV=.device5 bash benches/device_decoder_reopen.sh
set -eu
DEV=${DEV:-.device5}
. benches/device_gst_env.sh
for f in "$D"/pydebs/*.deb; do dpkg -x "$f" /tmp/gstroot; done
export PYTHONHOME=/tmp/gstroot/usr PYTHONPATH=/tmp/gstroot/usr/lib/python3/dist-packages
export GI_TYPELIB_PATH=/tmp/gstroot/usr/lib/x86_64-linux-gnu/girepository-1.0
for dec in ${DECODERS:-nvh264dec openh264dec}; do
  /tmp/gstroot/usr/bin/python3.11 benches/decoder_reopen.py $dec "${TIMES:-40}"
done
