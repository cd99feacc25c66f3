"""Tensors in CUDA memory, read in place by the GPU engine: a small DLPack
producer over the CUDA driver (ctypes) holds each plane of the golden
astronaut pair in device memory; the scores equal the CPU engine's and
libvmaf's JSON. Skipped where no NVIDIA GPU is usable."""

import ctypes
import numpy as np
import pytest

import vmafhip
from conftest import GOLDEN, A, assert_like_libvmaf, frames


def cuda():
    try:
        cu = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    if cu.cuInit(0) or cu.cuDeviceGet(ctypes.byref(dev), 0):
        return None
    if cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) or cu.cuCtxSetCurrent(ctx):
        return None
    return cu


CU = cuda()
pytestmark = pytest.mark.skipif(CU is None, reason="no usable NVIDIA GPU (libcuda)")


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class CudaPlane:
    """A 2-D uint8/uint16 array copied into CUDA memory, rows `pitch`
    samples apart; it frees the memory when collected."""

    def __init__(self, a, pad=0):
        h, w = a.shape
        self.pitch = w + pad
        host = np.zeros((h, self.pitch), a.dtype)
        host[:, :w] = a
        self.ptr = ctypes.c_uint64()
        assert CU.cuMemAlloc_v2(ctypes.byref(self.ptr), host.nbytes) == 0
        assert CU.cuMemcpyHtoD_v2(self.ptr, host.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(host.nbytes)) == 0
        self.shape = (ctypes.c_int64 * 2)(h, w)
        self.strides = (ctypes.c_int64 * 2)(self.pitch, 1)
        self.managed = DLManagedTensor()
        t = self.managed.dl_tensor
        t.data, t.device, t.ndim = self.ptr.value, DLDevice(2, 0), 2
        t.dtype = DLDataType(1, a.dtype.itemsize * 8, 1)
        t.shape, t.strides = self.shape, self.strides
        self.streams = []

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None, **kw):
        self.streams.append(stream)
        return _new_capsule(ctypes.addressof(self.managed), b"dltensor", None)

    def __del__(self):
        CU.cuMemFree_v2(self.ptr)


def planes(packed, pad):
    y = packed[: 576 * 324].reshape(324, 576)
    u = packed[576 * 324: 576 * 324 + 288 * 162].reshape(162, 288)
    v = packed[576 * 324 + 288 * 162:].reshape(162, 288)
    return tuple(CudaPlane(p, pad) for p in (y, u, v))


@pytest.mark.parametrize("pad", [0, 64])
def test_cuda_tensors_are_scored_in_place_with_libvmafs_numbers(raw, pad):
    ref, dis = frames(raw)
    feats = ["psnr", "float_ssim", "float_ms_ssim"]
    s = vmafhip.Scorer(576, 324, features=feats, backend="hip")
    held = []
    for k in range(12):
        r, d = planes(ref[k], pad), planes(dis[k], pad)
        s.push(r, d)
        held += [r, d]
    gpu = s.flush()
    assert all(p.streams == [1] for pair in held for p in pair), "asked for the legacy default stream"
    assert "hip" in gpu.engine
    cpu = vmafhip.Scorer(576, 324, features=feats, backend="cpu")
    cpu.push(ref, dis)
    cpu = cpu.flush()
    for name in cpu.frames:
        assert np.array_equal(gpu.frames[name], cpu.frames[name]), name
    assert_like_libvmaf(gpu, GOLDEN / f"{A}_crf35.vmaf_v0.6.1.json")


def test_a_tensor_of_the_wrong_shape_is_named(raw):
    ref, _ = frames(raw)
    s = vmafhip.Scorer(576, 324, backend="hip")
    y, u, v = planes(ref[0], 0)
    with pytest.raises(vmafhip.VmafError, match=r"shape \[162, 288\]; expected \[324, 576\]"):
        s.push((u, u, v), (y, u, v))
