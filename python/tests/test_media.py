"""vmafhip.score of media files through GStreamer's Python bindings: golden
pairs re-muxed losslessly into Matroska score as libvmaf scored their raw
frames; broken, short and mismatched files are named. Skipped where the
bindings do not import (python/test.sh runs this file in a virtual
environment that sees the system's python3-gi)."""

from pathlib import Path

import pytest

import vmafhip
from conftest import GOLDEN, assert_like_libvmaf
from vmafhip import media

GST = media.gstreamer()
pytestmark = pytest.mark.skipif(GST is None, reason="GStreamer's Python bindings do not import")


def mux(raw_path: str, out: Path, size, gst_format: str, frames: int = 0) -> str:
    """The raw file's frames (the first `frames`, or all) encoded losslessly
    (FFV1, GStreamer's libav encoder) in Matroska: the same samples after a
    real decoder."""
    Gst, _ = GST
    w, h = size
    if frames:
        bpp = 2 if "10" in gst_format else 1
        cut = out.with_suffix(".part.yuv")
        cut.write_bytes(Path(raw_path).read_bytes()[: frames * w * h * 3 // 2 * bpp])
        raw_path = str(cut)
    p = Gst.parse_launch(
        f"filesrc name=src ! rawvideoparse width={w} height={h} format={gst_format} framerate=25/1 "
        "! avenc_ffv1 ! matroskamux ! filesink name=sink"
    )
    p.get_by_name("src").set_property("location", raw_path)
    p.get_by_name("sink").set_property("location", str(out))
    p.set_state(Gst.State.PLAYING)
    msg = p.get_bus().timed_pop_filtered(120 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    p.set_state(Gst.State.NULL)
    assert msg is not None and msg.type == Gst.MessageType.EOS, msg and msg.parse_error()
    return str(out)


@pytest.mark.parametrize("name,dist,gst_format,json_name", [
    ("astronaut_576x324_420p8_12f", "crf35", "i420", "astronaut_576x324_420p8_12f_crf35.vmaf_v0.6.1.json"),
    ("rocket_576x324_420p10_6f", "crf30", "i420-10le", "rocket_576x324_420p10_6f_crf30.vmaf_v0.6.1.json"),
])
def test_matroska_files_score_as_libvmaf_scored_their_frames(raw, tmp_path, name, dist, gst_format, json_name):
    ref = mux(raw(f"{name}_ref.yuv"), tmp_path / "ref.mkv", (576, 324), gst_format)
    dis = mux(raw(f"{name}_{dist}.yuv"), tmp_path / "dis.mkv", (576, 324), gst_format)
    # The golden command lines' features (manifest.json).
    r = vmafhip.score(ref, dis, features=["psnr", "float_ssim", "float_ms_ssim"], backend="cpu")
    assert_like_libvmaf(r, GOLDEN / json_name)


def test_media_errors_name_the_file_and_the_problem(raw, tmp_path):
    name = "astronaut_576x324_420p8_12f"
    ref = mux(raw(f"{name}_ref.yuv"), tmp_path / "ref.mkv", (576, 324), "i420")
    short = mux(raw(f"{name}_crf35.yuv"), tmp_path / "short.mkv", (576, 324), "i420", frames=5)
    with pytest.raises(vmafhip.VmafError, match=r"short\.mkv ends after 5 frames"):
        vmafhip.score(ref, short, backend="cpu")
    small = tmp_path / "small.mkv"
    mux(raw(f"{name}_crf35.yuv"), small, (288, 162), "i420", frames=3)
    with pytest.raises(vmafhip.VmafError, match="576x324 420 8-bit but .*small.mkv is 288x162"):
        vmafhip.score(ref, str(small), backend="cpu")
    text = tmp_path / "notes.mp4"
    text.write_text("these are not video frames\n" * 100)
    with pytest.raises(vmafhip.VmafError, match="notes.mp4"):
        vmafhip.score(str(text), ref, backend="cpu")
    with pytest.raises(vmafhip.VmafError, match="one media file and one raw file"):
        vmafhip.score(ref, raw(f"{name}_crf35.yuv"), width=576, height=324)


def test_without_the_bindings_the_error_says_what_to_install(raw, tmp_path, monkeypatch):
    ref = mux(raw("astronaut_576x324_420p8_12f_ref.yuv"), tmp_path / "ref.mkv", (576, 324), "i420")
    monkeypatch.setattr(media, "gstreamer", lambda: None)
    with pytest.raises(vmafhip.VmafError, match="python3-gi"):
        vmafhip.score(ref, ref)
