#!/usr/bin/env python3
"""Compare two libvmaf-layout JSON results frame by frame.

usage: compare_json.py OURS.json LIBVMAF.json
Prints one line: frames compared, metrics compared (with the stream-wide
aggregate_metrics), mismatches, and both pooled VMAF means. Tolerances are the tests' (tests/common): 1e-6 for
integer features (exact but for 6-decimal printing), 1e-4 for model scores
and float metrics. Exit status 1 on any mismatch.
"""
import json
import sys


def tol(name):
    return 1e-6 if name.startswith(("integer_", "VMAF_integer")) else 1e-4


ours, theirs = (json.load(open(p)) for p in sys.argv[1:3])
of, tf = ours["frames"], theirs["frames"]
bad = []
n = 0
if len(of) != len(tf):
    bad.append(f"{len(of)} frames vs {len(tf)}")
for o, t in zip(of, tf):
    for k, v in t["metrics"].items():
        n += 1
        g = o["metrics"].get(k)
        if g is None and v is None and k in o["metrics"]:
            continue  # null on both sides (libvmaf writes an infinite value so)
        if g is None or v is None or abs(g - v) > tol(k):
            bad.append(f"frame {t['frameNum']}: {k} {g} vs {v}")
po = ours["pooled_metrics"]["vmaf"]["mean"]
pt = theirs["pooled_metrics"]["vmaf"]["mean"]
if abs(po - pt) > 1e-4:
    bad.append(f"pooled vmaf {po} vs {pt}")
agg = theirs.get("aggregate_metrics", {})
for k, v in agg.items():
    g = ours.get("aggregate_metrics", {}).get(k)
    n += 1
    if g is None or v is None or abs(g - v) > 1e-6:
        bad.append(f"aggregate {k}: {g} vs {v}")
if set(ours.get("aggregate_metrics", {})) != set(agg):
    bad.append(f"aggregates {sorted(ours.get('aggregate_metrics', {}))} vs {sorted(agg)}")
print(f"{len(tf)} frames, {n} values compared, {len(bad)} mismatches; "
      f"pooled VMAF vmafhip {po:.6f}, libvmaf {pt:.6f}")
for b in bad[:10]:
    print("  " + b)
sys.exit(1 if bad else 0)
