#!/bin/sh
# Meson helper: cargo build into TARGET_DIR, then copy the plugin (or, with
# a sixth argument naming a binary, that command; or, with `libvmaf`, the
# libvmaf C API library) to OUTPUT.
# usage: cargo_build.sh CARGO MANIFEST TARGET_DIR PROFILE OUTPUT [BIN|libvmaf]
set -e
cargo=$1 manifest=$2 target_dir=$3 profile=$4 output=$5 bin=${6:-}
if [ "$profile" = release ]; then flag=--release; else flag=; fi
if [ "$bin" = libvmaf ]; then
  "$cargo" build --manifest-path "$manifest" --target-dir "$target_dir" -p vmafhip-libvmaf $flag
  cp "$target_dir/$profile/libvmaf.so" "$output"
elif [ -n "$bin" ]; then
  "$cargo" build --manifest-path "$manifest" --target-dir "$target_dir" --bin "$bin" $flag
  cp "$target_dir/$profile/$bin" "$output"
else
  "$cargo" build --manifest-path "$manifest" --target-dir "$target_dir" --lib $flag
  cp "$target_dir/$profile/libgstvmafhip.so" "$output"
fi
