"""Resident memory of one process that opens a decoder again and again,
as a live station does at each reconnect: an H.264 stream decoded to its
end by a new pipeline each time, RSS after every fifth.

  python3 benches/decoder_reopen.py DECODER [TIMES] [FILE]
"""
import os
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def run(desc):
    p = Gst.parse_launch(desc)
    p.set_state(Gst.State.PLAYING)
    msg = p.get_bus().timed_pop_filtered(60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    p.set_state(Gst.State.NULL)
    if msg is None or msg.type == Gst.MessageType.ERROR:
        sys.exit(f"{desc}: {msg.parse_error() if msg else 'no EOS in 60 s'}")


def main():
    Gst.init(None)
    decoder = sys.argv[1]
    times = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    path = sys.argv[3] if len(sys.argv) > 3 else "/tmp/reopen.ts"
    if not os.path.exists(path):
        run("videotestsrc num-buffers=60 pattern=ball ! video/x-raw,format=I420,width=320,height=180,framerate=30/1 "
            f"! x264enc tune=zerolatency ! h264parse ! mpegtsmux ! filesink location={path}")
    if Gst.ElementFactory.find(decoder) is None:
        sys.exit(f"{decoder}: not installed")
    desc = f"filesrc location={path} ! tsdemux ! h264parse ! {decoder} ! video/x-raw ! fakesink"
    samples = []
    for i in range(1, times + 1):
        run(desc)
        if i % 5 == 0:
            samples.append((i, rss_kib()))
    first, last = samples[0], samples[-1]
    per = (last[1] - first[1]) / (last[0] - first[0])
    print(f"{decoder}: RSS after opens " + " ".join(f"{i}:{r}" for i, r in samples)
          + f" KiB; {per:.1f} KiB per open after the fifth")


main()
