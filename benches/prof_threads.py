#!/usr/bin/env python3
"""Where a command's wall clock goes, without a profiler (the GPU machine has
none): runs the command, samples every thread's state in /proc every 2 ms,
and timestamps each line it writes to stderr (its progress lines, and the
milestones GST_DEBUG=vmafhip-command:5 prints).

    prof_threads.py CMD [ARGS...]

Prints the wall clock; per thread name, the share of samples in which it was
running (R) or in uninterruptible sleep (D) and its CPU seconds; then the
stderr lines with their times since the start (progress lines thinned to
about 25).
"""
import collections
import os
import subprocess
import sys
import threading
import time


def stderr_lines(stream, t0, out):
    """Appends (seconds since t0, line) for each line or carriage-return
    update on stream."""
    buf = b""
    while True:
        chunk = stream.read1(4096)
        if not chunk:
            return
        buf += chunk
        while True:
            ends = [i for i in (buf.find(b"\r"), buf.find(b"\n")) if i >= 0]
            if not ends:
                break
            i = min(ends)
            text = buf[:i].decode(errors="replace").replace("\x1b[K", "").strip()
            buf = buf[i + 1:]
            if text:
                out.append((time.monotonic() - t0, text))


def sample(pid, states, ticks):
    """One look at every thread of pid: its state counted under its name,
    its CPU ticks (user + system) kept by thread id."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            stat = open(f"/proc/{pid}/task/{tid}/stat").read()
        except OSError:
            continue
        close = stat.rfind(")")
        name = stat[stat.find("(") + 1:close]
        fields = stat[close + 2:].split()
        states[name][fields[0]] += 1
        ticks[tid] = (name, int(fields[11]) + int(fields[12]))


def main():
    t0 = time.monotonic()
    child = subprocess.Popen(sys.argv[1:], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    lines = []
    threading.Thread(target=stderr_lines, args=(child.stderr, t0, lines), daemon=True).start()
    states = collections.defaultdict(collections.Counter)
    ticks = {}
    samples = 0
    while child.poll() is None:
        sample(child.pid, states, ticks)
        samples += 1
        time.sleep(0.002)
    wall = time.monotonic() - t0
    print(f"wall {wall:.3f} s, {samples} samples, rc {child.returncode}")
    cpu = collections.Counter()
    for name, t in ticks.values():
        cpu[name] += t
    hz = os.sysconf("SC_CLK_TCK")
    for name, c in sorted(states.items(), key=lambda kv: -kv[1]["R"]):
        share = lambda s: 100 * c[s] / max(samples, 1)
        print(f"  {name:18s} R {share('R'):5.1f}%  D {share('D'):5.1f}%  cpu {cpu[name] / hz:.2f} s")
    step = max(1, len(lines) // 25)
    for k, (t, text) in enumerate(lines):
        if k % step == 0 or k == len(lines) - 1 or not text.startswith("frame"):
            print(f"  {t:7.3f} {text[:600]}")


if __name__ == "__main__":
    main()
