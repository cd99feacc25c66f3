"""What the Python tests share: the golden folder, its raw files, and the
golden tests' comparison with libvmaf's JSON."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

GOLDEN = Path(os.environ.get("VMAFHIP_TESTDATA", Path(__file__).resolve().parents[2] / "tests/data/golden"))


@pytest.fixture(scope="session")
def raw(tmp_path_factory):
    """A golden pair's raw file, decompressed once."""
    folder = tmp_path_factory.mktemp("golden")

    def get(name):
        out = folder / name
        if not out.exists():
            subprocess.run(["zstd", "-q", "-d", "-f", str(GOLDEN / (name + ".zst")), "-o", str(out)], check=True)
        return str(out)

    return get


def tolerance(name):
    return 1e-6 if name.startswith(("integer_", "VMAF_integer")) else 1e-4


def assert_like_libvmaf(result, golden_json):
    """Every value libvmaf printed (6 decimals), and the pooled VMAF, as the Rust golden tests compare."""
    golden = json.loads(Path(golden_json).read_text())
    assert len(result) == len(golden["frames"])
    assert list(result.frames["frame"]) == [f["frameNum"] for f in golden["frames"]]
    for i, frame in enumerate(golden["frames"]):
        for name, want in frame["metrics"].items():
            got = result.frames[name][i]
            if want is None:
                continue
            assert abs(got - want) <= tolerance(name), f"frame {i} {name}: {got} vs {want}"
    for name, want in golden["pooled_metrics"].items():
        if name in result.pooled and want["mean"] is not None:
            assert abs(result.pooled[name]["mean"] - want["mean"]) <= tolerance(name) + 1e-6, name


A = "astronaut_576x324_420p8_12f"


def frames(raw):
    ref = np.fromfile(raw(f"{A}_ref.yuv"), np.uint8).reshape(12, -1)
    dis = np.fromfile(raw(f"{A}_crf35.yuv"), np.uint8).reshape(12, -1)
    return ref, dis
