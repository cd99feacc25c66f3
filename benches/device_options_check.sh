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
for f in astronaut_576x324_420p8_12f_ref astronaut_576x324_420p8_12f_crf35; do zstd -dqf $f.yuv.zst -o /tmp/$f.yuv; done
python3 - <<'PY' > /tmp/cmds.txt
import json
m=json.load(open('manifest-options.json'))
for r in m['pairs'][0]['runs']:
    c=r['command'].split()
    i=c.index('--json'); print(r['json'], ' '.join(c[1:i]))
PY
while read js args; do
  (cd /tmp && /tmp/vmafhip $args --backend hip --json -o /tmp/$js 2>&1 | grep -E "^VMAF")
  python3 ../../../benches/compare_json.py /tmp/$js $js
done < /tmp/cmds.txt
