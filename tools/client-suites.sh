#!/usr/bin/env bash
# The test suites of the programs users run on libvmaf, run against
# vmafhip's libvmaf.so.3.
#
#   tools/client-suites.sh WORK [FQM_SRC] [VMAF_SRC]
#
# 1. ffmpeg 7.1.5 (Debian trixie's source package, through a private apt
#    list) built into WORK/ffmpeg (nasm and libx264-dev needed) against
#    vmafhip's libvmaf headers and
#    libvmaf.pc (the API of libvmaf 3.2.0), with libx264 for the suite's
#    own clips. Built once; WORK keeps it.
# 2. FQM_SRC, a checkout of ffmpeg-quality-metrics: its pytest suite in a
#    virtual environment (its dependencies from PyPI), with that ffmpeg
#    first on PATH and vmafhip's library on LD_LIBRARY_PATH.
# 3. VMAF_SRC, a checkout of libvmaf at f85a8536: its `vmaf` tool
#    (libvmaf/tools) compiled against vmafhip's headers, run on every
#    golden command line of tests/data/golden, each JSON against libvmaf's
#    golden with benches/compare_json.py.
# Neither checkout is part of this repository; give what you have.
# VMAFHIP_BACKEND picks the engine (cpu here; hip or auto on a GPU
# machine). LIBVMAF_DIR: a folder holding libvmaf.so.3 to test instead of
# this tree's release build. Exit status: 0 when every step passed.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mkdir -p "${1:?usage: tools/client-suites.sh WORK [FQM_SRC] [VMAF_SRC]}" && cd "$1" && pwd)
fqm=${2:-}
vmaf_src=${3:-}
ff_version=7.1.5
ff_debian=7:7.1.5-0+deb13u1

# Our library and its headers, as an installed libvmaf: WORK/prefix.
install_library() {
  local lib=${LIBVMAF_DIR:-}
  if [ -z "$lib" ]; then
    (cd "$src" && cargo build --release -q -p vmafhip-libvmaf)
    lib=$src/target/release
  fi
  mkdir -p "$work/prefix/lib/pkgconfig" "$work/prefix/include"
  cp -f "$lib/libvmaf.so"* "$work/prefix/lib/" 2>/dev/null || cp -f "$lib/libvmaf.so.3" "$work/prefix/lib/"
  [ -e "$work/prefix/lib/libvmaf.so.3" ] || ln -sf libvmaf.so "$work/prefix/lib/libvmaf.so.3"
  [ -e "$work/prefix/lib/libvmaf.so" ] || ln -sf libvmaf.so.3 "$work/prefix/lib/libvmaf.so"
  cp -rf "$src/libvmaf/include/libvmaf" "$work/prefix/include/"
  sed -e "s|@prefix@|$work/prefix|" -e "s|@libdir@|$work/prefix/lib|" \
    -e "s|@includedir@|$work/prefix/include|" "$src/libvmaf/libvmaf.pc.in" >"$work/prefix/lib/pkgconfig/libvmaf.pc"
}

# ffmpeg's source from Debian's archive, without touching this machine's
# apt sources.
ffmpeg_source() {
  local t=$work/apt
  [ -f "$work/ffmpeg_$ff_version.orig.tar.xz" ] && return
  mkdir -p "$t/lists/partial" "$t/cache/archives/partial"
  local mirror
  mirror=$(grep -hm1 '^URIs:' /etc/apt/sources.list.d/debian.sources 2>/dev/null | awk '{print $2}')
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror:-http://deb.debian.org/debian} trixie main" >"$t/src.list"
  local a=(-o "Dir::Etc::sourcelist=$t/src.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$t/lists" -o "Dir::Cache=$t/cache")
  apt-get "${a[@]}" update -qq
  (cd "$work" && apt-get "${a[@]}" source --download-only "ffmpeg=$ff_debian" >/dev/null)
}

# ffmpeg as distributions build it (with its x86 assembly: nasm), with
# what the suites use: software decoding, libx264, the metric filters and
# those around them, lavfi's sources.
build_ffmpeg() {
  [ -x "$work/ffmpeg/bin/ffmpeg" ] && return
  # identity: msad lives in its source file (libavfilter/vf_identity.c).
  local filters=libvmaf,psnr,ssim,vif,msad,identity,metadata,scale,format,aformat,trim,atrim,select,aselect
  filters+=,settb,asettb,setpts,asetpts,split,asplit,null,anull,nullsink,anullsink,testsrc,testsrc2
  filters+=,color,fps,tpad,pad,crop,setsar,aresample,concat,copy,hwupload,hwdownload
  ffmpeg_source
  rm -rf "$work/ffmpeg-src" && mkdir -p "$work/ffmpeg-src"
  tar -xf "$work/ffmpeg_$ff_version.orig.tar.xz" -C "$work/ffmpeg-src" --strip-components=1
  (
    cd "$work/ffmpeg-src"
    PKG_CONFIG_PATH=$work/prefix/lib/pkgconfig ./configure --prefix="$work/ffmpeg" \
      --disable-doc --disable-debug --disable-autodetect --disable-everything \
      --disable-ffplay --disable-ffprobe --enable-gpl --enable-libx264 --enable-libvmaf \
      --enable-filter="$filters" \
      --enable-indev=lavfi --enable-protocol=file,pipe \
      --enable-decoder=h264,hevc,mpeg4,vp9,ffv1,rawvideo,png,wrapped_avframe \
      --enable-encoder=libx264,ffv1,rawvideo,wrapped_avframe \
      --enable-demuxer=matroska,mov,rawvideo,yuv4mpegpipe,image2,lavfi \
      --enable-muxer=matroska,mp4,mov,null,rawvideo,yuv4mpegpipe \
      --enable-parser=h264,hevc,vp9,mpeg4video --enable-bsf=h264_mp4toannexb,vp9_superframe >"$work/ffmpeg-configure.log"
    make -j"$(nproc)" >"$work/ffmpeg-build.log" 2>&1
    make install >/dev/null
  )
  rm -rf "$work/ffmpeg-src"
}

# ffmpeg-quality-metrics' own suite.
run_fqm() {
  echo "== ffmpeg-quality-metrics $(sed -n 's/^version = "\(.*\)"/\1/p' "$fqm/pyproject.toml") (its pytest suite)"
  if [ ! -x "$work/venv/bin/pytest" ]; then
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install -q "$fqm" pytest
  fi
  (
    cd "$fqm"
    PATH=$work/ffmpeg/bin:$work/venv/bin:$PATH LD_LIBRARY_PATH=$work/prefix/lib \
      "$work/venv/bin/pytest" -q -p no:cacheprovider tests
  )
}

# libvmaf's `vmaf` tool on every golden command line.
run_vmaf_tool() {
  echo "== libvmaf's vmaf tool ($vmaf_src/libvmaf/tools), every golden command line"
  local t=$vmaf_src/libvmaf/tools
  # What libvmaf's meson writes into config.h for the tool: glibc's
  # strsep, the built-in models (vmafhip's library has them all).
  mkdir -p "$work/vmaf-tool"
  printf '#define HAVE_STRSEP 1\n#define VMAF_BUILT_IN_MODELS 1\n' >"$work/vmaf-tool/config.h"
  cc -O2 -o "$work/vmaf" -I"$work/vmaf-tool" -I"$t" -I"$work/prefix/include" -I"$work/prefix/include/libvmaf" \
    "$t/vmaf.c" "$t/cli_parse.c" "$t/y4m_input.c" "$t/vidinput.c" "$t/yuv_input.c" \
    -L"$work/prefix/lib" -lvmaf -lm -pthread
  LD_LIBRARY_PATH=$work/prefix/lib python3 "$src/tools/golden_cmdlines.py" "$work/vmaf" "$work/runs"
}

install_library
build_ffmpeg
echo "ffmpeg: $(LD_LIBRARY_PATH=$work/prefix/lib "$work/ffmpeg/bin/ffmpeg" -hide_banner -version | head -1) (libvmaf: $work/prefix/lib)"
echo "engine: VMAFHIP_BACKEND=${VMAFHIP_BACKEND:-auto}"
status=0
if [ -n "$fqm" ]; then run_fqm || status=1; fi
if [ -n "$vmaf_src" ]; then run_vmaf_tool || status=1; fi
exit $status
