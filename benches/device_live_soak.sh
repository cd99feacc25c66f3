#!/bin/bash
# On the GPU machine: the live soak (benches/live_soak.py) with the station
# on the GPU (--backend hip) and GPU faults (VMAFHIP_FAULT) besides the
# transcode's. The machine's own Python makes the pan's frames;
# the soak runs in Debian 12's Python 3.11 with its PyGObject and
# prometheus_client, unpacked with GStreamer from DEV/debs and DEV/pydebs
# (benches/device_debs.sh; apt-get download python3.11-minimal
# libpython3.11-minimal libpython3.11-stdlib python3-gi gir1.2-glib-2.0
# gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0 libgirepository-1.0-1
# python3-prometheus-client python3-decorator). Needs DEV/bin/vmafhip.zst.
# FAULTS names the transcode's faults (live_soak.py --faults); DECODER the
# station's --decoder.
#   MINUTES=9 EVERY=60 FAULT=launch:frame=3000,sync:frame=6000 bash benches/device_live_soak.sh
set -eu
DEV=${DEV:-.device5}
. benches/device_gst_env.sh
[ -e /tmp/gstroot/.unpacked-py ] || { for f in "$D"/pydebs/*.deb; do dpkg -x "$f" /tmp/gstroot; done; touch /tmp/gstroot/.unpacked-py; }
W=${W:-/tmp/live-soak}
mkdir -p $W
export PATH=/tmp/gstroot/usr/bin:$PATH VMAFHIP_CACHE_DIR=/tmp/vc
zstd -q -d -f "$D"/bin/vmafhip.zst -o $W/vmafhip && chmod +x $W/vmafhip
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
/usr/bin/python3 benches/live_soak.py --make-frames --frames $W/pan.yuv
export PYTHONHOME=/tmp/gstroot/usr PYTHONPATH=/tmp/gstroot/usr/lib/python3/dist-packages
export GI_TYPELIB_PATH=/tmp/gstroot/usr/lib/x86_64-linux-gnu/girepository-1.0
/tmp/gstroot/usr/bin/python3.11 benches/live_soak.py --backend "${BACKEND:-hip}" --vmafhip $W/vmafhip \
  --frames $W/pan.yuv --out $W/out --minutes "${MINUTES:-9}" --every "${EVERY:-60}" \
  ${FAULT:+--fault "$FAULT"} ${FAULTS:+--faults "$FAULTS"} ${DECODER:+--decoder "$DECODER"}
