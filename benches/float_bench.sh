#!/usr/bin/env bash
# The float models and the extra extractors (issue: every libvmaf extractor),
# on a GPU machine, all on the same raw files in the page cache:
#   - vmafhip's GPU engine: examples/bench --backend hip on the files
#     (frames preloaded in pinned memory; its own median of RUNS runs);
#   - vmafhip's CPU engine: examples/vmaf_yuv with THREADS threads;
#   - libvmaf's CLI ($LV, built by ../shared/peer with its float
#     extractors; --gpumask keeps it off CUDA) with THREADS threads;
# the two CPU rows as the median of RUNS process wall clocks. Every row's
# JSON is compared with libvmaf's by benches/compare_json.py.
#
#   RUNS=3 BIN=.devx LV=/tmp/t/inst/bin/vmaf CASE=float|hvs|ssim|all bash benches/float_bench.sh
# (BIN holds `bench` and `vmaf_yuv` from `cargo build --release
# --no-default-features --example bench --example vmaf_yuv`.)
set -u
RUNS=${RUNS:-3}
THREADS=${THREADS:-16}
BIN=${BIN:-target/release/examples}
LV=${LV:-/tmp/t/inst/bin/vmaf}
F=${F:-300}
F4K=${F4K:-120}
C=${C:-/tmp/floatclips/$F-$F4K}
mkdir -p "$C/k"
now() { date +%s.%N; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# The golden 1080p pair: from the zstd files, or (no zstd there) from
# EG_GZ, a folder holding eg_ref.yuv.gz and eg_crf30.yuv.gz.
for f in ref crf30; do
  [ -f "$C/eg_$f.yuv" ] && continue
  if command -v zstd > /dev/null; then
    zstd -q -d "tests/data/golden/eveningglow_1920x1080_420p8_3f_$f.yuv.zst" -o "$C/eg_$f.yuv"
  else
    gzip -dc "${EG_GZ:?no zstd: set EG_GZ}/eg_$f.yuv.gz" > "$C/eg_$f.yuv"
  fi
done
[ -f "$C/1080p8_ref.yuv" ] || python3 benches/make_bench_clips.py "$C/eg_ref.yuv" "$C/eg_crf30.yuv" "$C" "$F" 1080p8
[ -f "$C/k/2160p8_ref.yuv" ] || python3 benches/make_bench_clips.py "$C/eg_ref.yuv" "$C/eg_crf30.yuv" "$C/k" "$F4K" 2160p8
cat "$C"/*.yuv "$C"/k/*.yuv > /dev/null

# cpu LABEL FRAMES JSON CMD...: median fps of RUNS process wall clocks.
cpu() {
  local label=$1 frames=$2 json=$3
  shift 3
  local fps=() s e
  for _ in $(seq "$RUNS"); do
    s=$(now)
    timeout 590 "$@" --json -o "$json" > "$C/last.log" 2>&1 || { echo "$label: FAILED"; tail -3 "$C/last.log"; return; }
    e=$(now)
    fps+=("$(awk -v s="$s" -v e="$e" -v f="$frames" 'BEGIN {printf "%.1f", f / (e - s)}')")
  done
  echo "$label: runs ${fps[*]} fps; median $(printf '%s\n' "${fps[@]}" | median)"
}

# case NAME MODEL FEATURES...: one configuration at 1080p and 2160p.
run_case() {
  local name=$1 model=$2
  shift 2
  local feats=() bfeats=()
  for f in "$@"; do feats+=(--feature "$f"); bfeats+=(--feature "$f"); done
  for size in "1920 1080 $F $C/1080p8" "3840 2160 $F4K $C/k/2160p8"; do
    set -- $size
    local w=$1 h=$2 n=$3 p=$4 tag="${2}p $name"
    local m=$model
    [ "$h" = 2160 ] && [ "$model" = vmaf_float_v0.6.1 ] && m=vmaf_float_4k_v0.6.1
    [ "$h" = 2160 ] && [ "$model" = vmaf_v0.6.1 ] && m=vmaf_4k_v0.6.1
    echo "== $tag ($m ${*:5})"
    timeout 590 "$BIN/bench" --backend hip --width "$w" --height "$h" --frames "$n" --distinct "$n" \
      --runs "$RUNS" --no-profile --model "$m" --yuv "${p}_ref.yuv,${p}_dis.yuv" "${bfeats[@]}" > "$C/bench.log" 2>&1 \
      || { echo "GPU engine FAILED"; tail -5 "$C/bench.log"; }
    echo "GPU engine $tag: median $(grep -o "engine fps (median of [0-9]*)[^|]*| [0-9.]*" "$C/bench.log" | awk '{print $NF}') fps; runs $(grep "^| runs |" "$C/bench.log" | cut -d'|' -f3 | tr -d ' ')"
    cpu "vmafhip CPU engine ($THREADS threads) $tag" "$n" "$C/ours.json" \
      "$BIN/vmaf_yuv" -r "${p}_ref.yuv" -d "${p}_dis.yuv" -w "$w" -h "$h" -p 420 -b 8 \
      --model "version=$m" "${feats[@]}" --threads "$THREADS"
    cpu "libvmaf CPU ($THREADS threads) $tag" "$n" "$C/lv.json" \
      "$LV" -r "${p}_ref.yuv" -d "${p}_dis.yuv" -w "$w" -h "$h" -p 420 -b 8 \
      --model "version=$m" "${feats[@]}" --threads "$THREADS" --gpumask 4294967295
    echo "vmafhip CPU vs libvmaf: $(python3 benches/compare_json.py "$C/ours.json" "$C/lv.json")"
  done
}

case ${CASE:-all} in
  float | all) run_case "vmaf_float_v0.6.1" vmaf_float_v0.6.1 ;;&
  hvs | all) run_case "vmaf_v0.6.1 + psnr_hvs + ciede" vmaf_v0.6.1 psnr_hvs ciede ;;&
  ssim | all) run_case "vmaf_v0.6.1 + float_ssim + float_ms_ssim" vmaf_v0.6.1 float_ssim float_ms_ssim ;;
esac
