"""Exact VMAF (Netflix libvmaf's numbers) on the GPU or the CPU.

Files::

    r = vmafhip.score("ref.y4m", "dist.y4m")
    r = vmafhip.score("ref.yuv", "dist.yuv", width=1920, height=1080,
                      pixel_format="420", bitdepth=8)
    r.pooled["vmaf"]["mean"], r.frames["vmaf"]

Arrays, frame after frame (NumPy, or anything with ``__dlpack__`` in host
memory)::

    s = vmafhip.Scorer(1920, 1080)
    s.push((y, u, v), (y2, u2, v2))
    r = s.flush()
"""

from __future__ import annotations

import itertools
import os
from typing import Any, Iterable, Optional, Sequence, Tuple

import numpy as np

from . import _vmafhip
from ._vmafhip import VmafError

__all__ = ["score", "Scorer", "Result", "VmafError", "models"]

#: Chroma plane size per pixel format, from the luma size.
_CHROMA = {
    "420": lambda w, h: ((w + 1) // 2, (h + 1) // 2),
    "422": lambda w, h: ((w + 1) // 2, h),
    "444": lambda w, h: (w, h),
    "400": None,
}


#: The engine settings' defaults, from the library's one declaration of
#: them (the element's properties and the command's options share it).
_D = _vmafhip.defaults()


def models() -> list:
    """The names of the built-in models (``model="vmaf_v0.6.1"`` and so on)."""
    return list(_vmafhip.models())


def _model_arg(model: str) -> str:
    """libvmaf's ``--model`` syntax from a name, a path or the syntax itself."""
    if "=" in model:
        return model
    if model.endswith(".json") or os.sep in model:
        return "path=" + model
    return "version=" + model


def _settings(model, features, backend, device, threads, subsample, on_gpu_error):
    """What scores, as the native module takes it."""
    return _vmafhip.Settings(
        _model_arg(model),
        list(features),
        backend,
        int(device),
        int(threads),
        int(subsample),
        str(on_gpu_error),
    )


class Result:
    """A stream's VMAF results.

    ``frames``: per-frame metrics by name, as float64 arrays (NaN where a
    frame has none; ``frames["frame"]`` the frame numbers).
    ``pooled``: pooled metrics as in libvmaf's JSON (name -> {"min", "max",
    "mean", "harmonic_mean"}). ``aggregates``: values over the whole stream
    (libvmaf's ``aggregate_metrics``). ``engine``: what scored.
    """

    def __init__(self, native: Any):
        self._native = native
        names = native.names()
        values = np.frombuffer(native.values(), dtype=np.float64)
        n = len(native.indices())
        table = values.reshape(n, len(names)) if names else np.empty((n, 0))
        self.frames = {"frame": np.asarray(native.indices(), dtype=np.int64)}
        for i, name in enumerate(names):
            self.frames[name] = table[:, i].copy()
        self.pooled = native.pooled()
        self.aggregates = dict(native.aggregates())
        self.engine = native.engine
        self.fps = native.fps

    def __len__(self) -> int:
        return len(self.frames["frame"])

    def __repr__(self) -> str:
        vmaf = [k for k in self.pooled if k.startswith("vmaf") and "_" not in k[4:]]
        score = ", ".join(f"{k} {self.pooled[k]['mean']:.6f}" for k in vmaf) or "no model score"
        return f"<vmafhip.Result: {len(self)} frames, {score}; {self.engine}>"

    def to_pandas(self):
        """The per-frame metrics as a pandas DataFrame indexed by frame (needs pandas)."""
        import pandas as pd

        cols = {k: v for k, v in self.frames.items() if k != "frame"}
        return pd.DataFrame(cols, index=pd.Index(self.frames["frame"], name="frame"))

    def text(self, format: str = "json") -> str:
        """The results in libvmaf's ``json``, ``xml``, ``csv`` or ``sub`` format."""
        return self._native.render(format)

    def write(self, path: str, format: Optional[str] = None) -> None:
        """Writes the results in libvmaf's format (by default from the extension)."""
        fmt = format or os.path.splitext(path)[1].lstrip(".").lower() or "json"
        with open(path, "w") as f:
            f.write(self.text(fmt))


def score(
    reference: str,
    distorted: str,
    model: str = _D["model"],
    features: Iterable[str] = (),
    backend: str = _D["backend"],
    *,
    width: Optional[int] = None,
    height: Optional[int] = None,
    pixel_format: str = "420",
    bitdepth: int = 8,
    device: int = _D["device"],
    threads: int = _D["threads"],
    subsample: int = _D["subsample"],
    on_gpu_error: str = _D["on_gpu_error"],
) -> Result:
    """VMAF of a file pair: Y4M (``.y4m``), raw planar YUV with ``width``,
    ``height``, ``pixel_format`` ("420", "422", "444", "400") and
    ``bitdepth`` given, or any other media file GStreamer decodes where its
    Python bindings are installed (frames paired in order; both files of
    one size and layout). ``model``: a built-in name, a JSON path, or libvmaf's
    ``--model`` syntax; ``features``: extra extractors in libvmaf's
    ``--feature`` syntax (``"psnr"``, ``"float_ssim=enable_db=true"``);
    ``backend``: "auto" (the GPU where one is usable), "hip" or "cpu";
    ``on_gpu_error``: what a GPU error mid-stream does, as the element's
    property and the command's option: "auto" (with backend "auto" the CPU
    takes over and the GPU is tried again; with "hip" the call fails),
    "fail", "cpu" or "retry". The CPU's taking over keeps a host copy of
    each frame in flight; "fail" keeps none."""
    reference, distorted = os.fspath(reference), os.fspath(distorted)
    settings = dict(model=model, features=features, backend=backend, device=device, threads=threads,
                    subsample=subsample, on_gpu_error=on_gpu_error)
    kinds = [_file_kind(p) for p in (reference, distorted)]
    if "media" in kinds and "raw" not in kinds:
        return _score_media(reference, distorted, settings)
    if kinds[0] != kinds[1]:
        raise VmafError(f"{reference} and {distorted}: one {kinds[0]} file and one {kinds[1]} file")
    y4m = [k == "y4m" for k in kinds]
    if not y4m[0] and (width is None or height is None):
        raise VmafError(f"{reference}: a raw file needs width= and height=")
    return Result(
        _vmafhip.score_files(
            (reference, distorted),
            y4m[0],
            (int(width or 0), int(height or 0)),
            str(pixel_format),
            int(bitdepth),
            _settings(model, features, backend, device, threads, subsample, on_gpu_error),
        )
    )


def _file_kind(path: str) -> str:
    """"y4m", "raw" (planar YUV: .yuv, .raw or no extension) or "media"."""
    ext = os.path.splitext(path)[1].lower()
    return "y4m" if ext == ".y4m" else "raw" if ext in (".yuv", ".raw", "") else "media"


def _score_media(reference: str, distorted: str, settings: dict) -> Result:
    """A media file pair decoded by GStreamer (its Python bindings) and
    scored frame by frame, in order."""
    from . import media

    gst = media.gstreamer()
    if gst is None:
        raise VmafError(
            f"{reference}: score() decodes media files other than raw .yuv and .y4m through "
            "GStreamer's Python bindings, which do not import here (Debian and Ubuntu: python3-gi "
            "and gir1.2-gst-plugins-base-1.0, in a virtual environment made with "
            "--system-site-packages); or score them with the vmafhip command"
        )
    decoders = [media.Decoder(gst, p, VmafError) for p in (reference, distorted)]
    try:
        scorer, first, n = None, None, 0
        for r, d in itertools.zip_longest(decoders[0].frames(), decoders[1].frames()):
            if r is None or d is None:
                short = reference if r is None else distorted
                raise VmafError(f"{short} ends after {n} frames but the other file goes on")
            if first is None:
                first = r.layout
                if d.layout != first:
                    raise VmafError(
                        f"{reference} is {_layout(r)} but {distorted} is {_layout(d)}: score() pairs "
                        "pictures of one size and layout (the vmafhip command scales)"
                    )
                scorer = Scorer(r.width, r.height, r.pixel_format, r.bitdepth, **settings)
            for path, f in ((reference, r), (distorted, d)):
                if f.layout != first:
                    raise VmafError(f"{path}: frame {n} is {_layout(f)}, the frames before were not")
            scorer.push(r.planes, d.planes)
            n += 1
        if scorer is None:
            raise VmafError(f"{reference}: no video frame decoded")
        return scorer.flush()
    finally:
        for dec in decoders:
            dec.close()


def _layout(f: Any) -> str:
    return f"{f.width}x{f.height} {f.pixel_format} {f.bitdepth}-bit"


#: DLPack device types: host memory, and the GPU memory the engine reads.
_HOST_KINDS = (1, 3)  # kDLCPU, kDLCUDAHost
_GPU_STREAM = {2: 1, 10: 0}  # kDLCUDA: the legacy default stream; kDLROCM: the default stream


def _device_kind(obj: Any) -> Optional[int]:
    """The DLPack device type of a tensor outside host memory, else None."""
    if isinstance(obj, np.ndarray) or not hasattr(obj, "__dlpack_device__"):
        return None
    kind = int(obj.__dlpack_device__()[0])
    return None if kind in _HOST_KINDS else kind


def _host_array(obj: Any, what: str) -> np.ndarray:
    """`obj` as a NumPy array over the same memory: NumPy arrays as they
    are, DLPack tensors in host memory through ``np.from_dlpack``."""
    if isinstance(obj, np.ndarray):
        return obj
    if hasattr(obj, "__dlpack_device__"):
        kind, index = obj.__dlpack_device__()
        if int(kind) not in _HOST_KINDS:
            names = {4: "OpenCL", 7: "Vulkan", 8: "Metal", 13: "CUDA managed"}
            raise VmafError(
                f"{what}: a tensor in {names.get(int(kind), f'DLPack device type {int(kind)}')} "
                f"memory (device {index}); vmafhip reads host, CUDA and ROCm memory"
            )
        return np.from_dlpack(obj)
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__array__"):
        return np.asarray(obj)
    raise TypeError(f"{what}: a NumPy array or a DLPack tensor, not {type(obj).__name__}")


class Scorer:
    """VMAF of frames given as arrays, frame after frame.

    ``push(reference, distorted)`` takes each picture as three planes
    ``(Y, U, V)`` (two-dimensional arrays, any strides), or one packed
    frame (the planes back to back, as raw YUV files hold them); uint8 for
    8 bits, uint16 deeper. A leading batch dimension, ``(N, H, W)`` per
    plane or ``(N, frame)`` packed, pushes N frames. Host memory is read in
    place, the GIL released while the engine works. Planes in GPU memory
    (DLPack tensors on CUDA or ROCm, each a 2-D tensor) are read in place
    by the GPU engine, after the work queued before them on the default
    stream. ``flush()`` ends the stream and returns its :class:`Result`.
    """

    def __init__(
        self,
        width: int,
        height: int,
        pixel_format: str = "420",
        bitdepth: int = 8,
        model: str = _D["model"],
        features: Iterable[str] = (),
        backend: str = _D["backend"],
        device: int = _D["device"],
        threads: int = _D["threads"],
        subsample: int = _D["subsample"],
        on_gpu_error: str = _D["on_gpu_error"],
    ):
        if str(pixel_format) not in _CHROMA:
            raise VmafError(f"pixel_format {pixel_format!r}: use 420, 422, 444 or 400")
        if width <= 0 or height <= 0:
            raise VmafError(f"a {width}x{height} picture")
        self.width, self.height = int(width), int(height)
        self.pixel_format, self.bitdepth = str(pixel_format), int(bitdepth)
        self._dtype = np.dtype(np.uint8 if bitdepth <= 8 else np.uint16)
        chroma = _CHROMA[self.pixel_format]
        self._shapes = [(self.height, self.width)]
        if chroma:
            cw, ch = chroma(self.width, self.height)
            self._shapes += [(ch, cw), (ch, cw)]
        # A contiguous packed frame's planes: (offset, bytes, width, height).
        item, at, self._packed = self._dtype.itemsize, 0, []
        for h, w in self._shapes:
            self._packed.append((at, h * w * item, w, h))
            at += h * w * item
        self._frame_samples = at // item
        self._native = _vmafhip.NativeScorer(
            self.pixel_format,
            self.bitdepth,
            _settings(model, features, backend, device, threads, subsample, on_gpu_error),
        )

    @property
    def engine(self) -> str:
        """What scores: the GPU engine (and on which device) or the CPU's."""
        return self._native.engine

    def _planes(self, picture: Any, what: str) -> Tuple[list, int]:
        """The picture's planes as checked arrays, and how many frames."""
        if isinstance(picture, (tuple, list)):
            if len(picture) != len(self._shapes):
                raise VmafError(
                    f"{what}: {len(picture)} planes; a {self.pixel_format} picture has {len(self._shapes)}"
                )
            planes = [_host_array(p, f"{what} plane {i}") for i, p in enumerate(picture)]
        else:
            planes = self._unpack(_host_array(picture, what), what)
        batch = planes[0].ndim == 3
        frames = planes[0].shape[0] if batch else 1
        for i, (p, shape) in enumerate(zip(planes, self._shapes)):
            where = f"{what} plane {i}"
            if p.dtype != self._dtype:
                raise TypeError(
                    f"{where}: dtype {p.dtype}; {self.bitdepth}-bit samples are {self._dtype.name}"
                )
            want = ((frames,) + shape) if batch else shape
            if p.shape != want:
                raise VmafError(f"{where}: shape {p.shape}; expected {want}")
        return planes, frames

    def _unpack(self, packed: np.ndarray, what: str) -> list:
        """A packed frame (or a batch of them) split into its planes."""
        sizes = [h * w for h, w in self._shapes]
        total = sum(sizes)
        if packed.dtype != self._dtype:
            raise TypeError(
                f"{what}: dtype {packed.dtype}; {self.bitdepth}-bit samples are {self._dtype.name}"
            )
        if packed.size == total:
            flat, batch = packed.reshape(1, total), False
        elif packed.ndim >= 2 and packed.size == packed.shape[0] * total:
            flat, batch = packed.reshape(packed.shape[0], total), True
        else:
            raise VmafError(
                f"{what}: {packed.size} samples; a packed {self.width}x{self.height} "
                f"{self.pixel_format} frame holds {total}"
            )
        planes, at = [], 0
        for (h, w), n in zip(self._shapes, sizes):
            p = flat[:, at : at + n].reshape(-1, h, w)
            planes.append(p if batch else p[0])
            at += n
        return planes

    @staticmethod
    def _plane_arg(p: np.ndarray) -> tuple:
        """(address, bytes, width, height, stride in samples) of a 2-D plane,
        made contiguous along rows first where it is not."""
        item = p.itemsize
        if p.strides[1] != item or p.strides[0] < p.shape[1] * item or p.strides[0] % item:
            p = np.ascontiguousarray(p)
        h, w = p.shape
        stride = p.strides[0] // item
        nbytes = (stride * (h - 1) + w) * item
        return p, (p.__array_interface__["data"][0], nbytes, w, h, stride)

    def _on_gpu(self, picture: Any) -> bool:
        planes = picture if isinstance(picture, (tuple, list)) else (picture,)
        return any(_device_kind(p) in _GPU_STREAM for p in planes)

    def _capsules(self, picture: Any, what: str) -> list:
        """A picture in GPU memory as DLPack capsules, each with its plane's size."""
        if not isinstance(picture, (tuple, list)) or len(picture) != len(self._shapes):
            raise VmafError(
                f"{what}: a picture in GPU memory is given as its {len(self._shapes)} planes, "
                "each a 2-D tensor"
            )
        out = []
        for i, (t, (h, w)) in enumerate(zip(picture, self._shapes)):
            kind = _device_kind(t)
            if kind not in _GPU_STREAM:
                raise VmafError(f"{what} plane {i}: in host memory while the others are on the GPU")
            out.append((t.__dlpack__(stream=_GPU_STREAM[kind]), w, h))
        return out

    def _direct_args(self, frame: Any) -> Optional[list]:
        """The plane arguments of one frame in the common layouts, found at
        little cost: a C-contiguous packed frame, or C-contiguous planes of
        the exact shapes, of the stream's dtype. None for anything else,
        which takes the general path (and its errors)."""
        dtype = self._dtype
        if type(frame) is np.ndarray:
            if frame.size == self._frame_samples and frame.dtype == dtype and frame.flags.c_contiguous:
                base = frame.ctypes.data
                return [(base + at, n, w, h, w) for at, n, w, h in self._packed]
            return None
        if type(frame) is tuple and len(frame) == len(self._shapes):
            args = []
            for p, shape in zip(frame, self._shapes):
                if not (
                    type(p) is np.ndarray and p.shape == shape and p.dtype == dtype and p.flags.c_contiguous
                ):
                    return None
                args.append((p.ctypes.data, p.nbytes, shape[1], shape[0], shape[1]))
            return args
        return None

    def push(self, reference: Any, distorted: Any) -> None:
        """One frame pair, or a batch (see the class)."""
        fast = self._direct_args(reference), self._direct_args(distorted)
        if fast[0] is not None and fast[1] is not None:
            # `reference` and `distorted` hold the memory for the call.
            self._native.push(fast[0], fast[1])
            return
        if self._on_gpu(reference) or self._on_gpu(distorted):
            self._native.push_device(
                self._capsules(reference, "reference"), self._capsules(distorted, "distorted")
            )
            return
        rp, rn = self._planes(reference, "reference")
        dp, dn = self._planes(distorted, "distorted")
        if rn != dn:
            raise VmafError(f"{rn} reference frames but {dn} distorted ones")
        batch = rp[0].ndim == 3
        for k in range(rn):
            held, args = [], []
            for planes in (rp, dp):
                side = []
                for p in planes:
                    arr, arg = self._plane_arg(p[k] if batch else p)
                    held.append(arr)
                    side.append(arg)
                args.append(side)
            self._native.push(args[0], args[1])
            del held

    def flush(self) -> Result:
        """The end of the stream: its results."""
        return Result(self._native.flush())
