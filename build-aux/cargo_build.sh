#!/bin/sh
# Meson helper: cargo build into TARGET_DIR, then copy the plugin to OUTPUT.
# usage: cargo_build.sh CARGO MANIFEST TARGET_DIR PROFILE OUTPUT
set -e
cargo=$1 manifest=$2 target_dir=$3 profile=$4 output=$5
if [ "$profile" = release ]; then flag=--release; else flag=; fi
"$cargo" build --manifest-path "$manifest" --target-dir "$target_dir" --lib $flag
cp "$target_dir/$profile/libgstvmafhip.so" "$output"
