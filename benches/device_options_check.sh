# The golden runs of tests/data/golden/manifest-options.json (every extractor by
# name; extractors with non-default options, a second instance of the model's)
# scored by the command on the GPU engine, against libvmaf's JSON. Needs in .device:
# debs/ (benches/device_debs.sh) and bin/vmafhip.zst (the command, stripped).
# usage from the repository root on the GPU machine: bash benches/device_options_check.sh
set -e
. benches/device_gst_env.sh 2>/dev/null
export PATH=/tmp/gstroot/usr/bin:$PATH VMAFHIP_CACHE_DIR=/tmp/vc
zstd -dqf .device/bin/vmafhip.zst -o /tmp/vmafhip; chmod +x /tmp/vmafhip
cd tests/data/golden
for f in $(python3 -c 'import json
for p in json.load(open("manifest-options.json"))["pairs"]: print(p["ref"], p["dis"])'); do zstd -dqf $f -o /tmp/${f%.zst}; done
python3 - <<'PY' > /tmp/cmds.txt
import json
m=json.load(open('manifest-options.json'))
for r in [r for p in m['pairs'] for r in p['runs']]:
    c=r['command'].split()
    i=c.index('--json'); print(r['json'], ' '.join(c[1:i]))
PY
while read js args; do
  (cd /tmp && /tmp/vmafhip $args --backend hip --json -o /tmp/$js 2>&1 | grep -E "^VMAF")
  python3 ../../../benches/compare_json.py /tmp/$js $js
done < /tmp/cmds.txt
# Two models in one context through libvmaf's C API on the GPU engine
# (VMAFHIP_BACKEND=hip), when .device/capi holds libvmaf.so.3 and the
# ffmpeg_filter program of tests/libvmaf_api.rs.
if [ -x ../../../.device/capi/ffmpeg_filter ]; then
  C=$(cd ../../../.device/capi && pwd)
  two=$(python3 -c 'import json; r = json.load(open("manifest-options.json"))["two_model_runs"][0]; print(r["json"], "|".join(r["models"]))')
  set -- $two
  VMAFHIP_BACKEND=hip LD_LIBRARY_PATH=$C:$LD_LIBRARY_PATH $C/ffmpeg_filter /tmp/astronaut_576x324_420p8_12f_ref.yuv \
    /tmp/astronaut_576x324_420p8_12f_crf35.yuv 576 324 420 8 "$2" - 1 1 /tmp/$1 2>&1 | grep -E "engine|error" | head -3
  python3 ../../../benches/compare_json.py /tmp/$1 $1
fi
