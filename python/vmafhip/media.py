"""Media files for :func:`vmafhip.score` through GStreamer's Python bindings
(PyGObject with GStreamer's introspection data): any file GStreamer decodes,
converted to the nearest planar YUV layout the engine reads, frames paired
in order. Used only where the bindings import."""

from typing import Any, Iterator, Optional, Tuple

import numpy as np

#: GStreamer's planar formats the engine reads: (pixel_format, bitdepth).
FORMATS = {
    "I420": ("420", 8),
    "Y42B": ("422", 8),
    "Y444": ("444", 8),
    "GRAY8": ("400", 8),
    "I420_10LE": ("420", 10),
    "I422_10LE": ("422", 10),
    "Y444_10LE": ("444", 10),
    "I420_12LE": ("420", 12),
    "I422_12LE": ("422", 12),
    "Y444_12LE": ("444", 12),
}

#: How long a decoder may go without a frame before it is called stuck.
STALL_SECONDS = 60


def gstreamer() -> Optional[Tuple[Any, Any]]:
    """GStreamer's ``Gst`` and ``GstVideo``, initialised, or None where the
    bindings are not installed."""
    try:
        import gi

        gi.require_version("Gst", "1.0")
        gi.require_version("GstVideo", "1.0")
        from gi.repository import Gst, GstVideo
    except (ImportError, ValueError):
        return None
    Gst.init(None)
    return Gst, GstVideo


class Decoded:
    """One decoded frame: its planes (2-D views with the buffer's strides),
    its layout and size."""

    def __init__(self, planes: tuple, pixel_format: str, bitdepth: int, width: int, height: int):
        self.planes, self.pixel_format, self.bitdepth = planes, pixel_format, bitdepth
        self.width, self.height = width, height

    @property
    def layout(self) -> Tuple[int, int, str, int]:
        return self.width, self.height, self.pixel_format, self.bitdepth


class Decoder:
    """A file's video frames, decoded by GStreamer (``decodebin``) and
    converted by ``videoconvert`` to one of :data:`FORMATS`."""

    def __init__(self, gst: Tuple[Any, Any], path: str, error: type):
        self.Gst, self.GstVideo = gst
        self.path, self.error = path, error
        formats = ",".join(FORMATS)
        self.pipeline = self.Gst.parse_launch(
            "filesrc name=src ! decodebin ! videoconvert ! "
            f"video/x-raw,format={{{formats}}} ! appsink name=sink sync=false max-buffers=4"
        )
        self.pipeline.get_by_name("src").set_property("location", path)
        self.sink = self.pipeline.get_by_name("sink")
        if self.pipeline.set_state(self.Gst.State.PLAYING) == self.Gst.StateChangeReturn.FAILURE:
            self._fail("GStreamer could not start decoding it")

    def _fail(self, why: str) -> None:
        self.close()
        raise self.error(f"{self.path}: {why}")

    def _bus_error(self) -> Optional[str]:
        msg = self.pipeline.get_bus().pop_filtered(self.Gst.MessageType.ERROR)
        if msg is None:
            return None
        err, _ = msg.parse_error()
        return err.message

    def frames(self) -> Iterator[Decoded]:
        """The frames in order; an error names the file and GStreamer's reason
        (looked for between short waits: an upstream error leaves the sink
        waiting, neither at its end nor flushing)."""
        Gst = self.Gst
        idle = 0
        while True:
            sample = self.sink.emit("try-pull-sample", Gst.SECOND // 10)
            if sample is not None:
                idle = 0
                yield self._decoded(sample)
                continue
            why = self._bus_error()
            if why is not None:
                self._fail(why)
            if self.sink.get_property("eos"):
                return
            idle += 1
            if idle >= 10 * STALL_SECONDS:
                self._fail(f"no frame decoded in {STALL_SECONDS} s")

    def _decoded(self, sample: Any) -> Decoded:
        info = self.GstVideo.VideoInfo.new_from_caps(sample.get_caps())
        name = self.GstVideo.video_format_to_string(info.finfo.format)
        pixel_format, bitdepth = FORMATS[name]
        data = sample.get_buffer().extract_dup(0, info.size)
        dtype = np.dtype(np.uint8 if bitdepth == 8 else "<u2")
        planes = []
        for p, (w, h) in enumerate(plane_sizes(pixel_format, info.width, info.height)):
            planes.append(
                np.ndarray(
                    (h, w),
                    dtype,
                    buffer=data,
                    offset=info.offset[p],
                    strides=(info.stride[p], dtype.itemsize),
                )
            )
        return Decoded(tuple(planes), pixel_format, bitdepth, info.width, info.height)

    def close(self) -> None:
        self.pipeline.set_state(self.Gst.State.NULL)


def plane_sizes(pixel_format: str, width: int, height: int) -> list:
    """Each plane's (width, height) in samples."""
    if pixel_format == "400":
        return [(width, height)]
    cw = (width + 1) // 2 if pixel_format in ("420", "422") else width
    ch = (height + 1) // 2 if pixel_format == "420" else height
    return [(width, height), (cw, ch), (cw, ch)]
