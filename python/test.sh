#!/usr/bin/env bash
# The Python package's tests, as a user installs it: a fresh virtual
# environment, `pip install .` (maturin builds the module), then pytest on
# python/tests (every golden run through vmafhip.score and Scorer.push).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install -q ".[test]"
"$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
