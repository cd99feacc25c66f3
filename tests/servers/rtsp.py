#!/usr/bin/python3
"""A loopback RTSP server for the live QA tests (gst-rtsp-server through
Debian's PyGObject): /ref and /dist serve DIR/ref.yuv and DIR/dist.yuv
(320x180 I420, 30 fps) as H.264, the reference near-lossless and the
distorted at a low bitrate, paced in real time from each client's PLAY.
Prints "port N" once it listens, then serves until killed.

Usage: rtsp.py DIR [PORT [MOUNT=FILE ...]]
PORT 0 (the default) picks a free one; MOUNT=FILE serves DIR/FILE at
/MOUNT instead of the pair (a transcoder restarted on later content).
"""
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


def mount(server, path, source, encoder):
    """Serves raw file `source`, encoded by `encoder`'s options, at `path`."""
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(
        f"( filesrc location={source} ! rawvideoparse width=320 height=180 "
        "format=i420 framerate=30/1 ! x264enc tune=zerolatency "
        f"speed-preset=ultrafast key-int-max=30 {encoder} "
        "! rtph264pay name=pay0 pt=96 config-interval=1 )"
    )
    server.get_mount_points().add_factory(path, factory)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    port = sys.argv[2] if len(sys.argv) > 2 else "0"
    mounts = dict(m.split("=", 1) for m in sys.argv[3:]) or {
        "ref": "ref.yuv",
        "dist": "dist.yuv",
    }
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(port)
    for name, file in mounts.items():
        quality = "pass=quant quantizer=10" if name == "ref" else "bitrate=250"
        mount(server, f"/{name}", f"{directory}/{file}", quality)
    if server.attach(None) == 0:
        sys.exit("rtsp.py: the server could not listen")
    print(f"port {server.get_bound_port()}", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
