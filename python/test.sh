#!/usr/bin/env bash
# The Python package's tests, as a user installs it: a fresh virtual
# environment, `pip install .` (maturin builds the module), then pytest on
# python/tests (every golden run through vmafhip.score and Scorer.push).
# Media files go through GStreamer's Python bindings, which Debian installs
# for its own Python only: test_media.py runs again in a second fresh
# environment made with --system-site-packages from /usr/bin/python3,
# where they import.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q ".[test]"
"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
bindings='import gi; gi.require_version("Gst", "1.0"); gi.require_version("GstVideo", "1.0"); from gi.repository import Gst, GstVideo'
if /usr/bin/python3 -c "$bindings" 2>/dev/null; then
  /usr/bin/python3 -m venv --system-site-packages "$tmp/system"
  "$tmp/system/bin/pip" install -q ".[test]"
  "$tmp/system/bin/python" -m pytest -q -p no:cacheprovider python/tests/test_media.py
else
  echo "python/tests/test_media.py: GStreamer's Python bindings do not import in /usr/bin/python3 (python3-gi, gir1.2-gst-plugins-base-1.0); not run"
fi
