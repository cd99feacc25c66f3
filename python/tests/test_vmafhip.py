"""vmafhip's Python package against libvmaf's golden JSON (tests/data/golden):
every golden run through vmafhip.score and through Scorer.push of NumPy
planes; DLPack host tensors; the errors bad input gets."""

import json
import shlex
from pathlib import Path

import numpy as np
import pytest

import vmafhip
from conftest import GOLDEN, A, assert_like_libvmaf, frames




def golden_runs():
    """(pair, run, arguments) of every golden run that scores one model."""
    out = []
    for manifest in sorted(GOLDEN.glob("manifest*.json")):
        for pair in json.loads(manifest.read_text())["pairs"]:
            for run in pair["runs"]:
                out.append(pytest.param(pair, run, id=f"{manifest.stem}:{pair['id']}:{run['name']}"))
    return out


def arguments(command):
    """The golden command line's settings, as vmafhip.score takes them."""
    a = shlex.split(command)
    opts = {"features": [], "model": None}
    flags = {"-w": "width", "-h": "height", "-p": "pixel_format", "-b": "bitdepth",
             "--subsample": "subsample", "--threads": "threads"}
    i = 1
    while i < len(a):
        k = a[i]
        if k == "--json":
            i += 1
            continue
        v = a[i + 1]
        if k == "--feature":
            opts["features"].append(v)
        elif k == "--model":
            opts["model"] = v
        elif k in flags:
            opts[flags[k]] = v if k == "-p" else int(v)
        i += 2
    return opts








@pytest.mark.parametrize("pair,run", golden_runs())
def test_score_files_equal_libvmaf(pair, run, raw):
    o = arguments(run["command"])
    r = vmafhip.score(raw(pair["ref_raw"]), raw(pair["dis_raw"]), o.pop("model"), o.pop("features"),
                      backend="cpu", **o)
    assert_like_libvmaf(r, GOLDEN / run["json"])


def strided_planes(packed, w, h, fmt, dtype):
    """A frame's planes as views into wider arrays (row strides beyond the width)."""
    cw, ch = {"420": ((w + 1) // 2, (h + 1) // 2), "422": ((w + 1) // 2, h), "444": (w, h)}[fmt]
    planes, at = [], 0
    for pw, ph in [(w, h), (cw, ch), (cw, ch)]:
        n = pw * ph
        wide = np.zeros((ph, pw + 7), dtype=dtype)
        wide[:, :pw] = packed[at:at + n].reshape(ph, pw)
        planes.append(wide[:, :pw])
        at += n
    return planes


@pytest.mark.parametrize("pair,run", golden_runs())
def test_scorer_push_of_numpy_planes_equals_libvmaf(pair, run, raw):
    o = arguments(run["command"])
    w, h, fmt, bits = o.pop("width"), o.pop("height"), o.pop("pixel_format"), o.pop("bitdepth")
    dtype = np.uint8 if bits == 8 else np.dtype("<u2")
    ref = np.fromfile(raw(pair["ref_raw"]), dtype=dtype).reshape(pair["frames"], -1)
    dis = np.fromfile(raw(pair["dis_raw"]), dtype=dtype).reshape(pair["frames"], -1)
    s = vmafhip.Scorer(w, h, fmt, bits, o.pop("model"), o.pop("features"), backend="cpu", **o)
    for k in range(pair["frames"]):
        s.push(strided_planes(ref[k], w, h, fmt, dtype), strided_planes(dis[k], w, h, fmt, dtype))
    assert_like_libvmaf(s.flush(), GOLDEN / run["json"])


class HostTensor:
    """A DLPack producer in host memory (NumPy's own protocol behind it)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class CudaTensor(HostTensor):
    """Says it lies in CUDA memory (its capsule is NumPy's)."""

    def __dlpack__(self, stream=None, **kw):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return (2, 0)





def test_dlpack_host_tensors_and_a_packed_batch(raw):
    ref, dis = frames(raw)
    s = vmafhip.Scorer(576, 324, features=["psnr", "float_ssim", "float_ms_ssim"], backend="cpu")
    s.push(HostTensor(ref[:5]), HostTensor(dis[:5]))  # a batch of packed frames
    for k in range(5, 12):
        s.push(HostTensor(ref[k]), HostTensor(dis[k]))
    r = s.flush()
    assert_like_libvmaf(r, GOLDEN / f"{A}_crf35.vmaf_v0.6.1.json")
    assert r.pooled["vmaf"]["mean"] == pytest.approx(80.537136, abs=1e-6)


def test_results_in_libvmaf_formats(raw, tmp_path):
    r = vmafhip.score(raw(f"{A}_ref.yuv"), raw(f"{A}_crf35.yuv"), width=576, height=324, backend="cpu")
    r.write(str(tmp_path / "out.json"))
    written = json.loads((tmp_path / "out.json").read_text())
    assert written["pooled_metrics"]["vmaf"]["mean"] == pytest.approx(r.pooled["vmaf"]["mean"], abs=1e-6)
    assert r.text("xml").startswith("<VMAF version=\"3.2.0\">")
    assert r.text("csv").splitlines()[0].startswith("Frame,")
    assert "12 frames, vmaf 80.537136" in repr(r)


def test_bad_input_is_named(raw):
    ref, dis = frames(raw)
    s = vmafhip.Scorer(576, 324, backend="cpu")
    y = ref[0, : 576 * 324].reshape(324, 576)
    with pytest.raises(vmafhip.VmafError, match=r"shape \(324, 570\)"):
        s.push((y[:, :570], y[:162, :288], y[:162, :288]), (y, y[:162, :288], y[:162, :288]))
    with pytest.raises(TypeError, match="dtype uint16"):
        s.push(ref[0].astype(np.uint16), dis[0])
    planes = (y, y[:162, :288], y[:162, :288])
    with pytest.raises(vmafhip.VmafError, match="reads host memory"):
        s.push(tuple(map(CudaTensor, planes)), tuple(map(CudaTensor, planes)))
    with pytest.raises(vmafhip.VmafError, match="given as its 3 planes"):
        s.push(CudaTensor(ref[0]), dis[0])
    with pytest.raises(vmafhip.VmafError, match="2 planes"):
        s.push((y, y), (y, y))
    with pytest.raises(vmafhip.VmafError, match="samples"):
        s.push(ref[0][:-1], dis[0][:-1])
    with pytest.raises(TypeError, match="NumPy array or a DLPack tensor"):
        s.push("frame", dis[0])
    s.push(ref[0], dis[0])
    s.flush()
    with pytest.raises(vmafhip.VmafError, match="after flush"):
        s.push(ref[1], dis[1])
    with pytest.raises(vmafhip.VmafError, match="no_such_model"):
        vmafhip.Scorer(576, 324, model="no_such_model")
    with pytest.raises(vmafhip.VmafError, match="no_such_feature"):
        vmafhip.Scorer(576, 324, features=["no_such_feature"])
    with pytest.raises(vmafhip.VmafError, match="backend"):
        vmafhip.Scorer(576, 324, backend="gpu-please")
    with pytest.raises(vmafhip.VmafError, match='on_gpu_error "later": use auto, fail, cpu, retry'):
        vmafhip.Scorer(576, 324, on_gpu_error="later")
    with pytest.raises(vmafhip.VmafError, match="width= and height="):
        vmafhip.score(raw(f"{A}_ref.yuv"), raw(f"{A}_crf35.yuv"))
    with pytest.raises(vmafhip.VmafError, match="whole frame"):
        vmafhip.score(raw(f"{A}_ref.yuv"), raw(f"{A}_crf35.yuv"), width=5760, height=3240, backend="cpu")


def test_the_built_in_models_are_inside():
    assert "vmaf_v0.6.1" in vmafhip.models()
    assert "vmaf_v1.0.16_3d0h" in vmafhip.models()


@pytest.mark.parametrize("name,size,bits,tag", [
    ("astronaut_576x324_420p8_12f", (576, 324), 8, "C420jpeg"),
    ("rocket_576x324_420p10_6f", (576, 324), 10, "C420p10"),
])
def test_y4m_files_score_as_their_raw_frames(raw, tmp_path, name, size, bits, tag):
    dist = "crf35" if bits == 8 else "crf30"
    w, h = size
    frame = w * h * 3 // 2 * (2 if bits > 8 else 1)
    paths = []
    for side in ("ref", dist):
        data = Path(raw(f"{name}_{side}.yuv")).read_bytes()
        out = tmp_path / f"{side}.y4m"
        with open(out, "wb") as f:
            f.write(f"YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 {tag}\n".encode())
            for k in range(len(data) // frame):
                f.write(b"FRAME\n" + data[k * frame:(k + 1) * frame])
        paths.append(str(out))
    y4m = vmafhip.score(*paths, backend="cpu")
    yuv = vmafhip.score(raw(f"{name}_ref.yuv"), raw(f"{name}_{dist}.yuv"), width=w, height=h,
                        bitdepth=bits, backend="cpu")
    assert len(y4m) == len(yuv) > 0
    for k in yuv.frames:
        assert np.array_equal(y4m.frames[k], yuv.frames[k]), k
    short = tmp_path / "short.y4m"
    short.write_bytes(Path(paths[1]).read_bytes()[: -frame // 2])
    with pytest.raises(vmafhip.VmafError, match="short.y4m"):
        vmafhip.score(paths[0], str(short), backend="cpu")


def test_defaults_are_the_librarys_and_the_stubs_say_the_same():
    """The engine settings' defaults come from the library's one declaration
    (the element's properties and the command's options read it too), and
    the type stubs spell the same values."""
    import ast
    import inspect

    defaults = vmafhip._vmafhip.defaults()
    assert defaults == {"model": "vmaf_v0.6.1", "backend": "auto", "device": 0, "threads": 0,
                        "subsample": 1, "on_gpu_error": "auto"}
    stub = ast.parse((Path(vmafhip.__file__).parent / "__init__.pyi").read_text())
    stubbed = {}
    for node in ast.walk(stub):
        if isinstance(node, ast.FunctionDef) and node.name in ("score", "__init__"):
            a = node.args
            for arg, value in zip(a.args[len(a.args) - len(a.defaults):] + a.kwonlyargs,
                                  a.defaults + a.kw_defaults):
                if value is not None and arg.arg in defaults:
                    stubbed.setdefault(node.name, {})[arg.arg] = ast.literal_eval(value)
    for fn, name in ((vmafhip.score, "score"), (vmafhip.Scorer.__init__, "__init__")):
        params = inspect.signature(fn).parameters
        for key, want in defaults.items():
            assert params[key].default == want, (name, key)
            assert stubbed[name][key] == want, (name, key)
