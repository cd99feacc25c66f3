#!/usr/bin/env python3
"""Runs a `vmaf` tool on every golden command line of tests/data/golden.

usage: golden_cmdlines.py VMAF_TOOL WORKDIR

Each manifest's runs (and its two-model runs) are run as written, with the
tool's path and the output file changed, in WORKDIR (the pairs decompressed
there), and each JSON is compared with libvmaf's golden by
benches/compare_json.py. A run whose golden was made with a patched CLI,
because the stock tool misreads the pair, passes when the tool refuses it
with an error message. Exit status 1 when any run differs or fails.
"""
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
GOLDEN = HERE / "tests" / "data" / "golden"
COMPARE = HERE / "benches" / "compare_json.py"


def runs():
    """(manifest name, pair, run) for every golden command line."""
    for manifest in sorted(GOLDEN.glob("manifest*.json")):
        m = json.loads(manifest.read_text())
        pairs = {p["id"]: p for p in m["pairs"]}
        for p in m["pairs"]:
            for r in p["runs"]:
                yield manifest.name, p, r
        for r in m.get("two_model_runs", []):
            yield manifest.name, pairs[r["pair"]], {**r, "name": "two_models"}


def raw(pair, work):
    """The pair's raw files in `work`, decompressed once."""
    for zst, name in ((pair["ref"], pair["ref_raw"]), (pair["dis"], pair["dis_raw"])):
        out = work / name
        if not out.exists():
            subprocess.run(["zstd", "-q", "-d", "-f", str(GOLDEN / zst), "-o", str(out)], check=True)


def command(run, tool, out):
    """The golden command line with this tool and output file."""
    args = shlex.split(run["command"])
    args[0] = tool
    args[args.index("-o") + 1] = str(out)
    return args


def main():
    tool, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    failed = total = 0
    for manifest, pair, run in runs():
        total += 1
        raw(pair, work)
        out = work / f"{pair['id']}.{run['name']}.json"
        out.unlink(missing_ok=True)
        done = subprocess.run(command(run, tool, out), cwd=work, capture_output=True, text=True)
        label = f"{manifest} {pair['id']} {run['name']}"
        misread = "oddfix" in run.get("cli", "")
        if done.returncode != 0 or not out.exists():
            lines = done.stderr.strip().splitlines() or ["no output"]
            why = "; ".join(l for l in lines if "ERROR" in l or "Error" in l) or lines[-1]
            if misread:
                print(f"ok   {label}: the stock tool misreads this pair, refused: {why}")
                continue
            failed += 1
            print(f"FAIL {label}: exit {done.returncode}: {why}")
            continue
        cmp = subprocess.run(
            [sys.executable, str(COMPARE), str(out), str(GOLDEN / run["json"])],
            capture_output=True,
            text=True,
        )
        ok = cmp.returncode == 0
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {label}: {cmp.stdout.strip()}")
    print(f"{total - failed} of {total} golden command lines give libvmaf's digits")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
