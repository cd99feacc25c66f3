#!/usr/bin/python3
"""A long soak of a live QA station, with faults.

    live_soak.py [--minutes M] [--every S] [--faults K,...] [--backend B] [--fault SPEC] [--decoder D] [--out DIR]

Sends a reference (a pan across the coffee cup, with grain: natural
content, 320x180 at 30 fps, near-lossless x264) and its transcode (x264
at 250 kbit/s, showing the reference 5 frames ahead) as MPEG-TS over
loopback UDP, and runs `vmafhip REF DIST --align auto` on them for M
minutes (default 60). Every S seconds (default 120) the transcode meets a
fault, in turn:
- drops: it drops a burst of 3 frames;
- stall: it sends nothing for 3 s, then goes on from the present frame;
- reconnect: it stops, and 2 s later a new encoder and muxer start (new
  timestamps from 0, a new MPEG-TS stream on the same port);
- caps: it changes to 256x144 for 20 s (the station scales it), then back;
- freeze (only with --faults naming it): the station itself is stopped
  (SIGSTOP) for 1.8 s, as a busy machine can hold it up.
With `--fault launch:frame=N` (backend hip) the station's GPU meets a fault
too (VMAFHIP_FAULT): it must go on on the CPU. N must come before the
first caps change, where the engine's frame count starts again.

Every 10 s it samples the station's resident memory and open file
descriptors, and scrapes its metrics endpoint, each scrape read by
prometheus_client's OpenMetrics parser. At the end it checks:
- every reference frame sent is counted once, scored, dropped or
  unscored (late or leading), and the station's own counts add up;
- the drops found are the bursts the transcode made, frame by frame, and
  no duplicate is reported (the transcode made none);
- no frame paired wrong (each scored above PAIRED_FLOOR);
- a gap was reported for each stall and reconnect;
- the resident memory's slope after the first 10 minutes, and the open
  descriptors, are flat; every scrape parsed and the counters never fell.
Prints the log (every sample goes to DIR/samples.csv), and exits 1 if a
check fails. Needs Debian's PyGObject and
python3-prometheus-client (/usr/bin/python3), x264enc, a built `vmafhip`
(--vmafhip, default target/release/vmafhip), and the pan's frames
(--frames: made first where missing, with `zstd`; --make-frames makes
them only, with any Python 3).
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

Gst = None  # GStreamer, imported by main() (making the frames needs none)

W, H, FPS = 320, 180, 30
LEAD = 5
FAULTS = "drops,stall,reconnect,caps"
BURST, STALL_S, RECONNECT_S, CAPS_S, FREEZE_S = 3, 3, 2, 20, 1.8
SAMPLE_S = 10
# The pan repeats after this many frames (512 positions, 12 clip frames,
# 7 grains): about 6 minutes.
PERIOD = 10752
# Every frame paired right scores above this: the transcode's frames score
# 74 and more against their own reference frames, while a frame paired one
# off scores 20 on average (0 at worst, 81 at best, where the pan turns).
PAIRED_FLOOR = 50
CLIP = "tests/data/golden/coffee_576x324_420p8_12f_ref.yuv.zst"


def make_frames(clip, path):
    """Writes the reference's frames, one whole period of them, to `path`
    (raw I420): a 320x180 window moving to and fro across the 576x324
    clip's 12 frames, 2 pixels a frame, with grain of -3..3 (from the
    sample's place and the frame, in 7 patterns) on the luma."""
    raw = subprocess.run(["zstd", "-dc", clip], check=True, capture_output=True).stdout
    sw, sh = 576, 324
    size = sw * sh * 3 // 2
    clips = [raw[i * size:(i + 1) * size] for i in range(len(raw) // size)]
    # Adding g and clipping to 0..255, as a byte table for each g.
    add = {g: bytes(min(255, max(0, v + g)) for v in range(256)) for g in range(-3, 4)}
    with open(path + ".part", "wb") as out:
        for t in range(PERIOD):
            p = (t * 2) % 512
            x = p if p < 256 else 511 - p
            x -= x % 2
            f = clips[t % len(clips)]
            luma = bytearray(W * H)
            for y in range(H):
                row = f[(y + 40) * sw + x:(y + 40) * sw + x + W]
                # The grain repeats every 7 samples along a row.
                for k in range(7):
                    g = (k * 7919 + y * 104729 + (t % 7) * 31) % 7 - 3
                    luma[y * W + k:(y + 1) * W:7] = row[k::7].translate(add[g])
            out.write(luma)
            for plane in (sw * sh, sw * sh * 5 // 4):
                for y in range(H // 2):
                    at = plane + (y + 20) * (sw // 2) + x // 2
                    out.write(f[at:at + W // 2])
    os.replace(path + ".part", path)


class Pan:
    """The reference's frames, read from a file of one period of them."""

    def __init__(self, path):
        self.data = open(path, "rb").read()
        self.size = W * H * 3 // 2
        self.count = len(self.data) // self.size

    def frame(self, t):
        at = (t % self.count) * self.size
        return self.data[at:at + self.size]


class Sender:
    """One H.264 stream in MPEG-TS on UDP, paced by its sink; each start
    is a new encoder and muxer with timestamps from 0."""

    def __init__(self, port, encoder):
        self.port, self.encoder = port, encoder
        self.pipeline = None

    def start(self):
        self.pipeline = Gst.parse_launch(
            f"appsrc name=src format=time caps=video/x-raw,format=I420,width={W},height={H},"
            f"framerate={FPS}/1 ! videoscale ! capsfilter name=size ! x264enc tune=zerolatency "
            f"speed-preset=ultrafast key-int-max={FPS} {self.encoder} ! mpegtsmux "
            f"! udpsink host=127.0.0.1 port={self.port} sync=true"
        )
        self.src = self.pipeline.get_by_name("src")
        self.first = None
        self.pipeline.set_state(Gst.State.PLAYING)

    def push(self, slot, data):
        if self.first is None:
            self.first = slot
        buf = Gst.Buffer.new_wrapped(data)
        buf.pts = (slot - self.first) * Gst.SECOND // FPS
        buf.duration = Gst.SECOND // FPS
        self.src.emit("push-buffer", buf)

    def resize(self, size):
        caps = f"video/x-raw,width={size[0]},height={size[1]}" if size else "video/x-raw"
        self.pipeline.get_by_name("size").set_property("caps", Gst.Caps.from_string(caps))

    def stop(self):
        self.src.emit("end-of-stream")
        self.pipeline.get_bus().timed_pop_filtered(5 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
        self.pipeline.set_state(Gst.State.NULL)
        self.pipeline = None


class Ledger:
    """What the senders did, slot by slot (a slot is a reference frame's
    time): the reference frames sent, the reference frames the transcode
    showed, dropped in bursts, or never had a chance to show (stalls,
    reconnects), and the faults with their slots."""

    def __init__(self):
        self.sent = 0
        self.shown = set()
        self.dropped = []
        self.missing = 0
        self.faults = []


def start_gstreamer():
    global Gst, text_string_to_metric_families
    import gi

    gi.require_version("Gst", "1.0")
    from gi.repository import Gst as gst
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse

    Gst, text_string_to_metric_families = gst, parse
    Gst.init(None)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def station(args, ports, out):
    env = dict(os.environ)
    gpu = []
    if args.fault:
        env["VMAFHIP_FAULT"] = args.fault
        # What a station on the GPU runs with: the CPU takes over at a GPU
        # error, and the GPU again once it opens.
        gpu = ["--on-gpu-error", "retry"]
    cmd = [
        args.vmafhip, f"udp://127.0.0.1:{ports[0]}", f"udp://127.0.0.1:{ports[1]}",
        "--align", "auto", "--window", "10", "--metrics", "0", "--backend", args.backend,
        "--duration", str(args.minutes * 60 + 15), "--progress", "-o", out, *gpu,
        *(["--decoder", args.decoder] if args.decoder else []),
    ]
    return subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env)


def read_stderr(proc, lines, said):
    with open(os.path.join(args_out, "station.log"), "w") as log:
        for line in proc.stderr:
            line = line.rstrip("\n")
            log.write(line + "\n")
            log.flush()
            if not line.startswith("live "):
                lines.append(line)
            for key in ("note: metrics at ", "note: scoring "):
                if line.startswith(key) and key not in said:
                    said[key] = line[len(key):]


def send(args, pan, ledger, senders, start, stop_at, station_pid):
    """Pushes a frame a slot to each sender, 0.1 s ahead of its time, and
    makes the faults."""
    ref, dist = senders
    kinds = args.faults.split(",")
    slot = 0
    fault_at = args.every * FPS
    fault = 0
    quiet_until = -1
    back_at = None
    caps_until = None
    while slot < stop_at:
        ahead = start + slot / FPS - 0.1 - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
        ref.push(slot, pan.frame(slot))
        ledger.sent += 1
        if slot == fault_at:
            kind = kinds[fault % len(kinds)]
            fault += 1
            fault_at += args.every * FPS
            ledger.faults.append((kind, slot))
            if kind == "drops":
                quiet_until = slot + BURST
                ledger.dropped += [slot + LEAD + k for k in range(BURST)]
            elif kind == "stall":
                quiet_until = slot + STALL_S * FPS
            elif kind == "reconnect":
                dist.stop()
                quiet_until = slot + RECONNECT_S * FPS
                back_at = quiet_until
            elif kind == "caps":
                dist.resize((256, 144))
                caps_until = slot + CAPS_S * FPS
            elif kind == "freeze":
                os.kill(station_pid, signal.SIGSTOP)
                threading.Timer(FREEZE_S, os.kill, (station_pid, signal.SIGCONT)).start()
        if caps_until == slot:
            dist.resize(None)
            caps_until = None
        if back_at == slot:
            dist.start()
            back_at = None
        if slot >= quiet_until:
            dist.push(slot, pan.frame(slot + LEAD))
            ledger.shown.add(slot + LEAD)
        elif ledger.faults[-1][0] != "drops":
            ledger.missing += 1
        slot += 1
    ref.stop()
    dist.stop()


def status(pid):
    """The fields of /proc/PID/status, by name (their first word)."""
    with open(f"/proc/{pid}/status") as f:
        return {k: v.split()[0] for k, _, v in (line.partition(":") for line in f) if v.strip()}


def resident_by_mapping(pid, threads):
    """The resident KiB of each kind of mapping (its file, [heap], [anon],
    ...), and the numbers of threads (given) and mappings."""
    kib, name, count = {}, None, 0
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = re.match(r"[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$", line)
            if head:
                name = head.group(1) or "[anon]"
                count += 1
            elif line.startswith("Rss:"):
                kib[name] = kib.get(name, 0) + int(line.split()[1])
    return kib, (threads, count)


def sample(proc, said, samples, scrapes, done, maps):
    """Every SAMPLE_S seconds: RSS, open descriptors, one scrape parsed;
    the resident memory by mapping at the first sample and the latest."""
    t0 = time.monotonic()
    while not done.wait(SAMPLE_S):
        try:
            fields = status(proc.pid)
            rss = int(fields["VmRSS"])
            fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
            maps[min(len(maps), 1)] = resident_by_mapping(proc.pid, int(fields["Threads"]))
        except (OSError, KeyError):
            return
        samples.append((time.monotonic() - t0, rss, fds))
        url = said.get("note: metrics at ")
        if not url:
            continue
        try:
            body = urllib.request.urlopen(url, timeout=5).read().decode()
            values = {}
            for family in text_string_to_metric_families(body):
                for s in family.samples:
                    values[s.name] = s.value
            scrapes.append(values)
        except Exception as e:  # any failure to fetch or parse is a finding
            scrapes.append({"error": repr(e)})


def slope_mib_per_hour(samples, after_s):
    """The least-squares slope of the resident memory after `after_s`."""
    pts = [(t / 3600, rss / 1024) for t, rss, _ in samples if t >= after_s]
    if len(pts) < 3:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx


def mapping_growth(maps):
    """What grew between the first sample and the last, by mapping."""
    if len(maps) < 2:
        return "memory by mapping: fewer than two samples"
    (first, t0), (last, t1) = maps[0], maps[1]
    grown = sorted(((last.get(k, 0) - first.get(k, 0), k) for k in set(first) | set(last)), reverse=True)
    top = ", ".join(f"{k} {d:+d}" for d, k in grown if d)[:600]
    return (f"memory by mapping, first sample to last (KiB): {top or 'none grew'}; "
            f"threads {t0[0]} to {t1[0]}; mappings {t0[1]} to {t1[1]}")


def results(out):
    frames, inputs, gaps = [], None, []
    with open(out) as f:
        for line in f:
            j = json.loads(line)
            if "frameNum" in j:
                frames.append(j["metrics"]["vmaf"])
            elif "inputs" in j:
                inputs = j["inputs"]
            elif "gap" in j:
                gaps.append(j["gap"])
    return frames, inputs, gaps


def check(ledger, lines, out, samples, scrapes, args):
    """The end checks; returns the failures."""
    failed = []

    def expect(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failed.append(what)

    frames, inputs, gaps = results(out)
    text = "\n".join(lines)
    drops = sorted(int(n) for n in re.findall(r"dropped REF's frame (\d+) ", text))
    repeats = re.findall(r"repeats REF's frame (\d+) ", text)
    # The reference frames before the distorted input's first: said by the
    # first offset found (later ones, after gaps, say where it was found
    # again).
    first = next((line for line in lines if "align=auto:" in line), "")
    lead = re.search(r"the reference's first (\d+) are not scored", first)
    leading = int(lead.group(1)) if lead else 0
    print(f"sent: {ledger.sent} reference frames; the transcode showed {len(ledger.shown)}, "
          f"dropped {len(ledger.dropped)} in bursts, missed {ledger.missing} in stalls and reconnects")
    print(f"faults: {len(ledger.faults)} ({', '.join(f'{k} at {s / FPS:.0f} s' for k, s in ledger.faults)})")
    print(f"station: {json.dumps(inputs, sort_keys=True)}")
    print(f"gaps reported: {len(gaps)}; " + "; ".join(json.dumps(g, sort_keys=True) for g in gaps))
    if inputs is None:
        expect(False, "the results end with their inputs line")
        return failed
    counted = inputs["reference_frames"]
    expect(counted == ledger.sent,
           f"every reference frame sent is counted: {counted} counted, {ledger.sent} sent")
    unscored = counted - inputs["scored_frames"] - inputs["dropped_frames"] + inputs["duplicated_frames"]
    expect(unscored == inputs["late_frames"] + leading,
           f"the counts add up: {counted} = {inputs['scored_frames']} scored + {inputs['dropped_frames']} dropped "
           f"- {inputs['duplicated_frames']} duplicated + {unscored} unscored "
           f"({inputs['late_frames']} late + {leading} leading)")
    expect(len(frames) == inputs["scored_frames"], f"{len(frames)} frame lines for {inputs['scored_frames']} scored")
    expect(drops == ledger.dropped, f"the drops are the bursts: found {drops}, made {ledger.dropped}")
    expect(not repeats, f"no duplicate reported (the transcode made none): {repeats}")
    low = [round(v, 2) for v in frames if v < PAIRED_FLOOR]
    expect(bool(frames) and not low,
           f"no frame paired wrong: {len(low)} of {len(frames)} scored below {PAIRED_FLOOR} {low[:10]} "
           f"(lowest {min(frames or [0]):.2f})")
    gaps_made = sum(1 for k, _ in ledger.faults if k in ("stall", "reconnect"))
    expect(len(gaps) >= gaps_made, f"a gap reported for each stall and reconnect: {len(gaps)} for {gaps_made}")
    if args.fault:
        faults = re.findall(r"GPU error at frame \d+", text)
        back = text.count("the GPU is back")
        expect(len(faults) == args.fault.count(":frame="),
               f"each GPU fault met and scoring went on: {faults}; the GPU back {back} times")
    after = min(600, args.minutes * 60 / 3)
    slope = slope_mib_per_hour(samples, after)
    rss = [s[1] for s in samples]
    print(f"RSS: {len(samples)} samples, first {rss[0] / 1024:.1f} MiB, last {rss[-1] / 1024:.1f} MiB, "
          f"max {max(rss) / 1024:.1f} MiB" if rss else "RSS: no sample")
    expect(slope is not None and abs(slope) < 2.0,
           f"RSS flat after {after / 60:.0f} min: slope {slope if slope is None else round(slope, 2)} MiB/h")
    fds = [s[2] for s in samples if s[0] >= after]
    expect(bool(fds) and max(fds) - min(fds) <= 2, f"open descriptors flat: {min(fds or [0])}..{max(fds or [0])}")
    errors = [s["error"] for s in scrapes if "error" in s]
    expect(bool(scrapes) and not errors, f"{len(scrapes)} scrapes, each parsed: {len(errors)} failed {errors[:2]}")
    scored = [s.get("vmafhip_frames_scored_total", 0) for s in scrapes if "error" not in s]
    expect(all(a <= b for a, b in zip(scored, scored[1:])), "vmafhip_frames_scored_total never fell")
    return failed


def check_gpu_faults(args, parser):
    """A GPU fault must come before the first caps change: the engine's
    frame count, which VMAFHIP_FAULT's frames count, starts again there,
    and may never reach a later one."""
    kinds = args.faults.split(",")
    if not args.fault or "caps" not in kinds:
        return
    first_caps = (kinds.index("caps") + 1) * args.every * FPS
    late = [int(n) for n in re.findall(r"frame=(\d+)", args.fault) if int(n) >= first_caps]
    if late:
        parser.error(f"--fault frames {late} come at or after the first caps change (frame {first_caps}), "
                     "where the engine's frame count starts again: they may never strike")


def main():
    global args_out
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=60)
    p.add_argument("--every", type=int, default=120)
    p.add_argument("--faults", default=FAULTS, help=f"the faults, in turn (default {FAULTS}; also freeze)")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--fault", default="")
    p.add_argument("--decoder", default="", help="the station's --decoder (its default if not given)")
    p.add_argument("--vmafhip", default="target/release/vmafhip")
    p.add_argument("--out", default="/tmp/vmafhip-live-soak")
    p.add_argument("--frames", default="/tmp/vmafhip-live-soak-pan.yuv",
                   help="the reference's frames (made first if missing)")
    p.add_argument("--make-frames", action="store_true", help="only make --frames")
    args = p.parse_args()
    check_gpu_faults(args, p)
    if not os.path.exists(args.frames):
        make_frames(CLIP, args.frames)
    if args.make_frames:
        return
    args_out = args.out
    os.makedirs(args.out, exist_ok=True)
    start_gstreamer()
    pan = Pan(args.frames)
    ports = (free_port(), free_port())
    out = os.path.join(args.out, "live.jsonl")
    proc = station(args, ports, out)
    lines, said, samples, scrapes, maps = [], {}, [], [], {}
    threading.Thread(target=read_stderr, args=(proc, lines, said), daemon=True).start()
    while "note: scoring " not in said:
        if proc.poll() is not None:
            sys.exit("the station ended before scoring:\n" + "\n".join(lines))
        time.sleep(0.1)
    print(f"station: {' '.join(proc.args)}")
    print(f"started {time.strftime('%Y-%m-%d %H:%M:%S')}; faults every {args.every} s: {args.faults}"
          + (f"; VMAFHIP_FAULT={args.fault}" if args.fault else ""))
    done = threading.Event()
    threading.Thread(target=sample, args=(proc, said, samples, scrapes, done, maps), daemon=True).start()
    ledger = Ledger()
    senders = (Sender(ports[0], "pass=quant quantizer=10"), Sender(ports[1], "bitrate=250"))
    for s in senders:
        s.start()
    send(args, pan, ledger, senders, time.monotonic() + 0.2, int(args.minutes * 60 * FPS), proc.pid)
    rc = proc.wait()
    done.set()
    print(f"ended {time.strftime('%Y-%m-%d %H:%M:%S')}; the station exited {rc}")
    print("\n".join(line for line in lines if not line.startswith("window ")))
    with open(os.path.join(args.out, "samples.csv"), "w") as f:
        f.write("seconds,rss_kib,fds\n")
        f.writelines(f"{t:.0f},{r},{n}\n" for t, r, n in samples)
    failed = check(ledger, lines, out, samples, scrapes, args)
    print(mapping_growth(maps))
    print("samples (s, RSS KiB, fds): " + " ".join(f"{t:.0f}:{r}:{f}" for t, r, f in samples[:: max(1, len(samples) // 24)]))
    print(f"{len(failed)} checks failed" if failed else "all checks passed")
    sys.exit(1 if failed or rc != 0 else 0)


if __name__ == "__main__":
    main()
