#!/usr/bin/env python3
"""Benchmarks swift-pjsua against the C pjsua app built from the same pjproject tree.

Puts identical sipp UAC loads on (a) `swiftpjsua listen` auto-answering and (b) the C
`pjsua` app (--null-audio --auto-answer 200 --no-vad), one after the other, each on its
own fresh process, same call limit, same UDP transport on 127.0.0.1, and reports the
figures side by side with the ratio engine/C. Python 3 standard library only.

    Benchmarks/bench.py --swiftpjsua .build/release/swiftpjsua            # full run (~12 min)
    Benchmarks/bench.py --smoke --swiftpjsua .build/debug/swiftpjsua      # a few seconds

Writes results.md, results.csv (one row per figure), steps.csv (one row per sipp run)
and results.json into --out (default .build/bench/<UTC time>). Exit status 0 when the
run completed (targets missed or not); in --smoke mode, 0 only when both sides
completed calls and the engine wrote its event-latency file.
"""

import argparse
import csv
import ctypes
import json
import math
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCENARIO = os.path.join(HERE, "uac_timed.xml")
MAX_CALLS = 1024  # both sides; PJSUA_MAX_CALLS of the build, read from `swiftpjsua version` in main()
ENGINE, C_APP = "engine", "c"
ECHO = "echo"  # the engine with `listen --echo`, in the echo phase only
REALTIME_PRIORITY = 10
SIDES = (ENGINE, C_APP)


def log(text):
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", flush=True)


# --- ports and /proc ---------------------------------------------------------------------

def free_udp_port(also_free=()):
    """A UDP port on 127.0.0.1 that is free now, with `port + d` free too for each d."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if all(port + d < 65536 and not udp_bound(port + d) for d in also_free):
            return port
    raise RuntimeError("no free UDP port")


def udp_bound(port):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return False
        except OSError:
            return True


def cpu_seconds(pid):
    """User + system CPU time of a process, in seconds (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_kb(pid, key):
    """A `VmRSS`/`VmHWM` line of /proc/PID/status, in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def die_with_parent():
    """In the child before exec: get SIGTERM when the harness dies, so no server outlives it."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def percentile(sorted_values, fraction):
    """Nearest-rank percentile of an ascending list; None when empty."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


# --- the two servers ----------------------------------------------------------------------

class Server:
    """One auto-answering user agent under test, in its own fresh process."""

    def __init__(self, side, paths, workdir, tag, stats=False, realtime=False):
        self.side = side
        self.port = free_udp_port()
        self.out_path = os.path.join(workdir, f"{tag}-{side}.out")
        stats = stats or side == ECHO
        self.stats_path = os.path.join(workdir, f"{tag}-{side}-events.txt") if stats and side != C_APP else None
        if side in (ENGINE, ECHO):
            argv = [paths.swiftpjsua, "listen", "--port", str(self.port), "--bind", "127.0.0.1",
                    "--max-calls", str(MAX_CALLS), "--quiet",
                    # The C app has no admission limits: neither side refuses the load.
                    "--rate-limit", "off", "--max-ringing", "off"]
            if side == ECHO:
                # Every call's received frames go back into it through the frame API.
                argv += ["--echo"]
            if self.stats_path:
                argv += ["--stats-file", self.stats_path]
            self.ready_text = "listening on udp"
        else:
            argv = [paths.pjsua, "--null-audio", "--auto-answer", "200", "--no-vad",
                    "--max-calls", str(MAX_CALLS), "--no-tcp", "--ip-addr", "127.0.0.1",
                    "--bound-addr", "127.0.0.1", "--local-port", str(self.port),
                    "--log-level", "0", "--app-log-level", "0"]
            # The app prints its menu once it has started and then reads commands from
            # standard input; it quits on end of input, so the pipe stays open until stop().
            self.ready_text = "Call Commands"
        if realtime:
            # Diagnostic only: SCHED_FIFO for every thread of the server, so that waking a
            # thread does not wait behind other processes' time slices.
            argv = ["chrt", "-f", str(REALTIME_PRIORITY)] + argv
        self.out = open(self.out_path, "wb")
        self.proc = subprocess.Popen(argv, stdout=self.out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.PIPE if side == C_APP else subprocess.DEVNULL,
                                     preexec_fn=die_with_parent)
        self.pid = self.proc.pid
        self._wait_ready()

    def output(self):
        with open(self.out_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def _wait_ready(self, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.side} exited at start ({self.proc.returncode}):\n{self.output()[-2000:]}")
            if self.ready_text in self.output() and udp_bound(self.port):
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.side} not ready after {timeout} s:\n{self.output()[-2000:]}")

    def alive(self):
        return self.proc.poll() is None

    def cpu(self):
        return cpu_seconds(self.pid)

    def rss_kb(self):
        return status_kb(self.pid, "VmRSS")

    def hwm_kb(self):
        return status_kb(self.pid, "VmHWM")

    def anon_kb(self):
        return status_kb(self.pid, "RssAnon")

    def stop(self):
        """Asks the process to quit (the app's `q` command, the engine's SIGTERM); kills it
        after 10 s. Returns the exit status."""
        if self.proc.poll() is None:
            try:
                if self.side == C_APP:
                    self.proc.stdin.write(b"q\n")
                    self.proc.stdin.flush()
                    self.proc.stdin.close()
                else:
                    self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
                self.proc.kill()
                self.proc.wait()
        self.out.close()
        return self.proc.returncode

    def event_latency(self):
        """The engine's --stats-file: {'delivery': {'events': N, 'p50_us': …, 'p99_us': …, 'max_us': …}}
        (and with --echo: {'echo': {'calls': …, 'frames': …, 'dropped': …, 'underflows': …}})."""
        result = {}
        if not self.stats_path or not os.path.exists(self.stats_path):
            return result
        with open(self.stats_path) as f:
            for line in f:
                parts = line.split()
                if len(parts) > 1 and all("=" in p for p in parts[1:]):
                    result[parts[0]] = {k: float(v) for k, v in (p.split("=") for p in parts[1:])}
        return result


def start_server(side, paths, workdir, tag, **options):
    """A ready server; one retry, since the port picked can be taken before the server binds it."""
    try:
        return Server(side, paths, workdir, tag, **options)
    except RuntimeError as error:
        log(f"{side} did not start ({str(error).splitlines()[0]}); retrying once")
        return Server(side, paths, workdir, tag + "-retry", **options)


# --- sipp ----------------------------------------------------------------------------------

@dataclass
class Step:
    """One sipp run against one server, and what it measured."""
    phase: str
    side: str
    rate: int
    hold_ms: int
    calls: int
    successful: int = 0
    failed: int = 0
    sipp_exit: int = -1
    achieved_cps: float = 0.0
    setup_p50_ms: float = None
    setup_p99_ms: float = None
    setup_max_ms: float = None
    cpu_s: float = 0.0
    rss_kb: int = 0
    hwm_kb: int = 0
    anon_kb: int = 0
    server_alive: bool = True
    load: str = ""
    setups_us: list = field(default_factory=list, repr=False)
    # Media steps held 10 s or more: UDP datagrams the machine sent while sipp ran, what the
    # calls' RTP both ways should have been, and datagrams dropped for a full receive buffer.
    udp_out: int = 0
    rtp_expected: int = 0
    udp_rcvbuf_errors: int = 0
    # A failure found outside sipp (the echo phase: frames dropped), empty when none.
    extra_failure: str = ""

    @property
    def media_delivered(self):
        """At least 90 % of the RTP both ways went out, and under 1 % was dropped."""
        if not self.rtp_expected:
            return True
        return self.udp_out >= 0.9 * self.rtp_expected and self.udp_rcvbuf_errors <= 0.01 * self.rtp_expected

    @property
    def passed(self):
        return (self.sipp_exit == 0 and self.failed == 0 and self.successful == self.calls
                and self.server_alive and self.achieved_cps >= 0.9 * self.rate and self.media_delivered
                and not self.extra_failure)

    def row(self):
        d = asdict(self)
        d.pop("setups_us")
        d["passed"] = self.passed
        return d


def udp_counters():
    """The machine's UDP counters (/proc/net/snmp): OutDatagrams and RcvbufErrors."""
    try:
        with open("/proc/net/snmp") as f:
            lines = [l.split() for l in f if l.startswith("Udp:")]
        values = dict(zip(lines[0][1:], (int(v) for v in lines[1][1:])))
        return values.get("OutDatagrams", 0), values.get("RcvbufErrors", 0)
    except (OSError, IndexError, ValueError):
        return 0, 0


def run_sipp(server, workdir, phase, rate, calls, hold_ms, limit=None, media=False, rss_samples=None):
    """Runs sipp's UAC (Benchmarks/uac_timed.xml) against `server` and measures the server.
    With `rss_samples` (a list), appends (time, VmRSS KiB) about once a second while sipp runs."""
    tag = f"{phase}-{server.side}-{rate}cps-{hold_ms}ms-{calls}"
    sipp_port = free_udp_port()
    media_port = free_udp_port(also_free=(2,))
    stats = os.path.join(workdir, f"{tag}.csv")
    setups = os.path.join(workdir, f"{tag}-setup.log")
    expected = calls / rate + hold_ms / 1000
    argv = ["sipp", "-sf", SCENARIO, f"127.0.0.1:{server.port}", "-i", "127.0.0.1", "-mi", "127.0.0.1",
            "-p", str(sipp_port), "-mp", str(media_port), "-r", str(rate), "-m", str(calls),
            "-d", str(hold_ms), "-nostdin", "-trace_stat", "-stf", stats, "-fd", "1",
            "-trace_logs", "-log_file", setups,
            "-timeout", f"{int(expected + 20)}s", "-timeout_error"]
    if limit:
        argv += ["-l", str(limit)]
    if media:
        argv += ["-rtp_echo"]
    step = Step(phase=phase, side=server.side, rate=rate, hold_ms=hold_ms, calls=calls, load=loadavg())
    if media and hold_ms >= 10000:
        # Each call holds PCMU at 50 packets/s each way (the server's, and sipp's echo).
        step.rtp_expected = int(calls * 50 * (hold_ms / 1000) * 2)
    udp0 = udp_counters()
    cpu0 = server.cpu()
    with open(os.path.join(workdir, f"{tag}-sipp.out"), "wb") as out:
        sipp = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + expected + 60
        while sipp.poll() is None and time.monotonic() < deadline:
            if rss_samples is not None and server.alive():
                rss_samples.append((time.time(), server.rss_kb()))
            try:
                sipp.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        if sipp.poll() is None:
            sipp.kill()
        step.sipp_exit = sipp.wait()
    udp1 = udp_counters()
    step.udp_out, step.udp_rcvbuf_errors = udp1[0] - udp0[0], udp1[1] - udp0[1]
    step.server_alive = server.alive()
    if step.server_alive:
        step.cpu_s = server.cpu() - cpu0
        step.rss_kb = server.rss_kb()
        step.hwm_kb = server.hwm_kb()
        step.anon_kb = server.anon_kb()
    step.successful, step.failed = sipp_counters(stats)
    sent, step.setups_us = setup_times(setups)
    if len(sent) > 1 and sent[-1] > sent[0]:
        step.achieved_cps = (len(sent) - 1) / (sent[-1] - sent[0])
    elif len(sent) == calls:
        step.achieved_cps = float(rate)
    ordered = sorted(step.setups_us)
    if ordered:
        step.setup_p50_ms = percentile(ordered, 0.50) / 1000
        step.setup_p99_ms = percentile(ordered, 0.99) / 1000
        step.setup_max_ms = ordered[-1] / 1000
    return step


def sipp_counters(path):
    """`SuccessfulCall(C)` and `FailedCall(C)` from the last line of sipp's statistics CSV."""
    try:
        with open(path) as f:
            rows = list(csv.reader(f, delimiter=";"))
        header, last = rows[0], rows[-1]
        return int(last[header.index("SuccessfulCall(C)")]), int(last[header.index("FailedCall(C)")])
    except (OSError, IndexError, ValueError):
        return 0, 0


def setup_times(path):
    """INVITE send instants (s) and INVITE→200 setup times (µs) from the scenario's log lines.

    sipp's rtd statistics count whole milliseconds; the scenario logs gettimeofday() when it
    sends the INVITE and when it takes the 200, which is the same interval at 1 µs."""
    sent, setups = [], []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 5 and parts[0] == "setup":
                    s0, u0, s1, u1 = (int(float(p)) for p in parts[1:])
                    sent.append(s0 + u0 / 1e6)
                    setups.append((s1 - s0) * 1_000_000 + (u1 - u0))
    except OSError:
        pass
    sent.sort()
    return sent, setups


# --- phases --------------------------------------------------------------------------------

def ordered_sides(i):
    """Alternates which side goes first, so drift in the machine's load hits both alike."""
    return SIDES if i % 2 == 0 else SIDES[::-1]


def phase_rates(cfg, paths, workdir, steps):
    """Highest rate with zero failed calls, stepping up; a side stops at its first failure."""
    best = {}
    i = 0
    for hold in cfg.holds_ms:
        stopped = set()
        for rate in cfg.rates:
            for side in ordered_sides(i):
                if side in stopped:
                    continue
                server = start_server(side, paths, workdir, f"rate-{hold}ms-{rate}")
                step = run_sipp(server, workdir, "rate", rate, int(rate * cfg.step_seconds), hold)
                server.stop()
                steps.append(step)
                log(f"rate {rate:>3} cps, {hold:>4} ms calls, {side:>6}: {step.successful}/{step.calls} ok, "
                    f"{step.failed} failed, {step.achieved_cps:.0f} cps achieved, "
                    f"setup p99 {fmt(step.setup_p99_ms)} ms -> {'pass' if step.passed else 'FAIL'}")
                if step.passed:
                    best[(side, hold)] = rate
                else:
                    stopped.add(side)
            i += 1
    return best


def phase_steady(cfg, paths, workdir, steps, realtime=False):
    """Setup latency, CPU per 1000 calls, peak RSS and event latency at one steady rate.
    Two halves in the order engine, C, C, engine, so that drift in the machine's load over
    the phase falls on both sides alike; latencies are pooled, CPU and calls summed, and the
    event latency is the worse half's (the histograms stay in the engine process).
    With `realtime`, the same (shorter) load on servers running SCHED_FIFO: a diagnostic that
    separates what the code costs from how long the shared machine's scheduler makes a woken
    thread wait."""
    phase = "steady-rt" if realtime else "steady"
    calls = max(1, (cfg.realtime_calls if realtime else cfg.steady_calls) // 2)
    halves = {ENGINE: [], C_APP: []}
    for i, side in enumerate((ENGINE, C_APP, C_APP, ENGINE)):
        server = start_server(side, paths, workdir, f"{phase}-{i + 1}", stats=True, realtime=realtime)
        step = run_sipp(server, workdir, f"{phase}-{i + 1}", cfg.steady_rate, calls, cfg.steady_hold_ms)
        server.stop()
        steps.append(step)
        halves[side].append((step, server.event_latency()))
    out = {}
    for side, runs in halves.items():
        first = runs[0][0]
        pooled = Step(phase=phase, side=side, rate=cfg.steady_rate, hold_ms=cfg.steady_hold_ms,
                      calls=sum(r.calls for r, _ in runs), load=first.load)
        pooled.successful = sum(r.successful for r, _ in runs)
        pooled.failed = sum(r.failed for r, _ in runs)
        pooled.sipp_exit = max(r.sipp_exit for r, _ in runs)
        pooled.cpu_s = sum(r.cpu_s for r, _ in runs)
        pooled.hwm_kb = max(r.hwm_kb for r, _ in runs)
        pooled.rss_kb = max(r.rss_kb for r, _ in runs)
        pooled.anon_kb = max(r.anon_kb for r, _ in runs)
        pooled.server_alive = all(r.server_alive for r, _ in runs)
        pooled.achieved_cps = min(r.achieved_cps for r, _ in runs)
        pooled.setups_us = [u for r, _ in runs for u in r.setups_us]
        ordered = sorted(pooled.setups_us)
        if ordered:
            pooled.setup_p50_ms = percentile(ordered, 0.50) / 1000
            pooled.setup_p99_ms = percentile(ordered, 0.99) / 1000
            pooled.setup_max_ms = ordered[-1] / 1000
        latencies = [ev for _, ev in runs if ev.get("delivery")]
        events = max(latencies, key=lambda ev: ev["delivery"].get("p99_us", 0)) if latencies else {}
        if events:
            events = {"delivery": dict(events["delivery"],
                                       events=sum(ev["delivery"].get("events", 0) for ev in latencies))}
        out[side] = (pooled, events)
        log(f"{phase} {cfg.steady_rate} cps, {side:>6}: {pooled.successful}/{pooled.calls} ok, setup p50 "
            f"{fmt(pooled.setup_p50_ms)} p99 {fmt(pooled.setup_p99_ms)} ms, cpu {pooled.cpu_s:.2f} s, "
            f"peak rss {pooled.hwm_kb} KiB{' (events ' + str(events) + ')' if side == ENGINE else ''}")
    return out


def phase_rss(cfg, paths, workdir, steps):
    """RSS growth per 1000 calls after a warm-up: one continuous sipp run of warm-up plus
    measured calls at one rate, RSS sampled every second, calls completed at each sample
    read from sipp's per-second statistics, least-squares slope over the measured part.

    pjsip keeps each finished call's transactions (and their memory) for Timer I/J, 32 s
    on UDP, so RSS climbs for the first 32 s of any load before it levels off; the warm-up
    must be longer than that at the measured rate."""
    out = {}
    for side in SIDES[::-1]:
        server = start_server(side, paths, workdir, "rss")
        samples = []
        total = cfg.rss_warmup + cfg.rss_measured
        step = run_sipp(server, workdir, "rss", cfg.rss_rate, total, cfg.rss_hold_ms, rss_samples=samples)
        server.stop()
        steps.append(step)
        progress = sipp_progress(os.path.join(workdir, f"rss-{side}-{cfg.rss_rate}cps-{cfg.rss_hold_ms}ms-{total}.csv"))
        points = [(calls_at(progress, t), kb) for t, kb in samples]
        measured = [(c, kb) for c, kb in points if cfg.rss_warmup <= c < total]
        slope = least_squares_slope(measured) * 1000 if len(measured) > 2 else None
        at_warm = measured[0][1] if measured else None
        out[side] = {"growth_kb_per_1000": slope, "all_passed": step.passed, "calls": step.successful,
                     "rss_after_warmup_kb": at_warm, "rss_at_end_kb": measured[-1][1] if measured else None,
                     "points": points}
        log(f"rss {side:>6}: {step.successful}/{total} ok, RSS {at_warm} KiB after {cfg.rss_warmup} calls, "
            f"{out[side]['rss_at_end_kb']} KiB at {measured[-1][0] if measured else '-'} -> {fmt(slope)} KiB per 1000 calls"
            f"{'' if step.passed else ' (some calls failed)'}")
    return out


def sipp_progress(path):
    """(epoch seconds, successful calls so far) from each line of sipp's statistics CSV."""
    rows = []
    try:
        with open(path) as f:
            table = list(csv.reader(f, delimiter=";"))
        header = table[0]
        t, ok = header.index("CurrentTime"), header.index("SuccessfulCall(C)")
        for row in table[1:]:
            rows.append((float(row[t].split("\t")[-1]), int(row[ok])))
    except (OSError, IndexError, ValueError):
        pass
    return rows


def calls_at(progress, when):
    """Calls completed at `when`, interpolated between sipp's once-a-second counts."""
    before = [(t, c) for t, c in progress if t <= when]
    after = [(t, c) for t, c in progress if t > when]
    if not before:
        return 0
    if not after:
        return before[-1][1]
    (t0, c0), (t1, c1) = before[-1], after[0]
    return round(c0 + (c1 - c0) * (when - t0) / (t1 - t0))


def least_squares_slope(points):
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0


def phase_media(cfg, paths, workdir, steps):
    """Most concurrent calls holding RTP (sipp -rtp_echo reflects what the UA sends) for the
    hold time without a failed call; a side stops at its first failure."""
    best, holding = {}, {}
    stopped = set()
    levels = list(cfg.media_levels)
    if cfg.media_extend:
        # Past the listed levels, keep climbing by the last step until both sides failed,
        # up to the compiled call limit.
        step = levels[-1] - levels[-2] if len(levels) > 1 else levels[-1]
        while levels[-1] + step <= MAX_CALLS:
            levels.append(levels[-1] + step)
    for i, level in enumerate(levels):
        if len(stopped) == len(SIDES):
            break
        for side in ordered_sides(i):
            if side in stopped:
                continue
            server = start_server(side, paths, workdir, f"media-{level}")
            step = run_sipp(server, workdir, "media", min(level, cfg.media_setup_rate), level,
                            cfg.media_hold_ms, limit=level, media=True)
            server.stop()
            steps.append(step)
            rtp = (f", udp out {step.udp_out}/{step.rtp_expected} expected, {step.udp_rcvbuf_errors} dropped"
                   if step.rtp_expected else "")
            log(f"media {level:>3} calls x {cfg.media_hold_ms / 1000:.0f} s, {side:>6}: {step.successful}/{level} ok, "
                f"{step.failed} failed, cpu {step.cpu_s:.1f} s{rtp} -> {'pass' if step.passed else 'FAIL'}")
            if step.passed:
                best[side] = level
                holding[(side, level)] = step.cpu_s / (cfg.media_hold_ms / 1000 + level / cfg.media_setup_rate)
            else:
                stopped.add(side)
    for side in SIDES:
        if side not in stopped:
            log(f"media: {side} passed every level up to the compiled limit of {MAX_CALLS} calls")
    return best, holding


def phase_echo(cfg, paths, workdir, steps):
    """The media phase's load on two engines: plain auto-answer, and `listen --echo`, where
    each call has a frame stream and a frame writer (the echo bot). A step fails for the echo
    side also when any frame was dropped. Returns ({side: best level}, {(side, level): cores},
    {level: echo counters})."""
    best, holding, counters = {}, {}, {}
    stopped = set()
    for i, level in enumerate(cfg.echo_levels):
        if len(stopped) == 2:
            break
        for side in ((ENGINE, ECHO) if i % 2 == 0 else (ECHO, ENGINE)):
            if side in stopped:
                continue
            server = start_server(side, paths, workdir, f"echo-{level}")
            step = run_sipp(server, workdir, "echo", min(level, cfg.media_setup_rate), level,
                            cfg.media_hold_ms, limit=level, media=True)
            server.stop()
            echo = server.event_latency().get("echo", {}) if side == ECHO else {}
            if side == ECHO:
                counters[level] = echo
                if echo.get("dropped", 1) != 0:
                    step.extra_failure = f"{int(echo.get('dropped', -1))} frames dropped"
                elif echo.get("calls", 0) < step.successful:
                    step.extra_failure = f"echo ran on {int(echo.get('calls', 0))} of {step.successful} calls"
            steps.append(step)
            extra = (f", {int(echo.get('frames', 0))} frames echoed, {int(echo.get('dropped', -1))} dropped, "
                     f"{int(echo.get('underflows', -1))} underflows" if side == ECHO else "")
            log(f"echo {level:>3} calls x {cfg.media_hold_ms / 1000:.0f} s, {side:>6}: {step.successful}/{level} ok, "
                f"{step.failed} failed, cpu {step.cpu_s:.1f} s{extra} -> {'pass' if step.passed else 'FAIL'}")
            if step.passed:
                best[side] = level
                holding[(side, level)] = step.cpu_s / (cfg.media_hold_ms / 1000 + level / cfg.media_setup_rate)
            else:
                stopped.add(side)
    return best, holding, counters


def echo_markdown(cfg, best, holding, counters):
    lines = ["| Figure | Unit | listen --echo | listen | echo/plain |", "|---|---|--:|--:|--:|"]
    e, p = best.get(ECHO, 0), best.get(ENGINE, 0)
    lines.append(f"| Concurrent calls held {cfg.media_hold_ms // 1000} s, zero failures (echo: and no dropped frame) "
                 f"| calls | {e} | {p} | {fmt(ratio(e, p))}x |")
    common = [l for l in cfg.echo_levels if (ECHO, l) in holding and (ENGINE, l) in holding]
    for level in common:
        lines.append(f"| CPU while holding {level} calls | cores | {fmt(holding[(ECHO, level)])} "
                     f"| {fmt(holding[(ENGINE, level)])} | {fmt(ratio(holding[(ECHO, level)], holding[(ENGINE, level)]))}x |")
    for level, c in sorted(counters.items()):
        lines.append(f"| Echo at {level} calls: frames echoed / dropped / underflows | frames "
                     f"| {int(c.get('frames', 0))} / {int(c.get('dropped', -1))} / {int(c.get('underflows', -1))} | - | - |")
    return "\n".join(lines)


# --- report --------------------------------------------------------------------------------

def fmt(value, digits=3):
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:.0f}"


def kib_to_mib(kb):
    return None if kb is None else kb / 1024


def ratio(engine, c):
    if not isinstance(engine, (int, float)) or not isinstance(c, (int, float)) or c == 0:
        return None
    return engine / c


def figures(cfg, rates, steady, realtime, rss, media, holding):
    """(figure, unit, engine, C, target text, met) rows; ratio is engine/C."""
    rows = []
    for hold in cfg.holds_ms:
        e, c = rates.get((ENGINE, hold), 0), rates.get((C_APP, hold), 0)
        rows.append((f"Sustained rate, {hold} ms calls, zero failures", "calls/s", e, c,
                     ">= 1.0x C", e >= c))
    es, cs = steady[ENGINE][0], steady[C_APP][0]
    rows.append((f"Setup latency p50 (INVITE->200) at {cfg.steady_rate} cps", "ms", es.setup_p50_ms,
                 cs.setup_p50_ms, "", None))
    met = es.setup_p99_ms is not None and cs.setup_p99_ms is not None and es.setup_p99_ms <= 1.05 * cs.setup_p99_ms
    rows.append((f"Setup latency p99 (INVITE->200) at {cfg.steady_rate} cps", "ms", es.setup_p99_ms,
                 cs.setup_p99_ms, "<= 1.05x C", met))
    per_k = lambda s: s.cpu_s / s.successful * 1000 if s.successful else None
    rows.append((f"CPU per 1000 calls at {cfg.steady_rate} cps, {cfg.steady_hold_ms} ms calls", "s",
                 per_k(es), per_k(cs), "", None))
    rows.append(("Peak RSS in that run (VmHWM)", "MiB", es.hwm_kb / 1024, cs.hwm_kb / 1024, "", None))
    rows.append(("Anonymous RSS at its end (RssAnon: heap and stacks, no library pages)", "MiB",
                 es.anon_kb / 1024, cs.anon_kb / 1024, "", None))
    eg, cg = rss[ENGINE]["growth_kb_per_1000"], rss[C_APP]["growth_kb_per_1000"]
    # RSS moves in 4 KiB pages: a difference under one page per 1000 calls is noise.
    met = eg is not None and cg is not None and eg <= max(cg, 0) + 4
    rows.append((f"RSS growth per 1000 calls after {cfg.rss_warmup} warm-up, over the next "
                 f"{cfg.rss_measured} ({cfg.rss_rate} cps)", "KiB", eg, cg, "<= C (+4 KiB)", met))
    rows.append((f"RSS after {cfg.rss_warmup} calls at {cfg.rss_rate} cps (pjsip holds 32 s of transactions)",
                 "MiB", kib_to_mib(rss[ENGINE]["rss_after_warmup_kb"]), kib_to_mib(rss[C_APP]["rss_after_warmup_kb"]),
                 "", None))
    rows.append((f"Concurrent calls with RTP held {cfg.media_hold_ms // 1000} s, zero failures", "calls",
                 media.get(ENGINE, 0), media.get(C_APP, 0), "", None))
    common = [level for level in cfg.media_levels if (ENGINE, level) in holding and (C_APP, level) in holding]
    if common:
        level = common[-1]
        rows.append((f"CPU while holding {level} calls with RTP", "cores", holding[(ENGINE, level)],
                     holding[(C_APP, level)], "", None))
    rows += event_rows(steady[ENGINE][1], "", with_target=True)
    if realtime:
        er, cr = realtime[ENGINE][0], realtime[C_APP][0]
        rows.append((f"Diagnostic, SCHED_FIFO: setup latency p50 at {cfg.steady_rate} cps", "ms",
                     er.setup_p50_ms, cr.setup_p50_ms, "", None))
        rows.append((f"Diagnostic, SCHED_FIFO: setup latency p99 at {cfg.steady_rate} cps", "ms",
                     er.setup_p99_ms, cr.setup_p99_ms, "", None))
        rows += event_rows(realtime[ENGINE][1], "Diagnostic, SCHED_FIFO: ", with_target=False)
    return rows


def event_rows(latency, prefix, with_target):
    rows = []
    for name, label in (("delivery", "event delivery, callback -> consumer"),):
        d = latency.get(name, {})
        for key, text in (("p50_us", "p50"), ("p99_us", "p99"), ("max_us", "max")):
            target, ok = ("", None)
            if with_target and name == "delivery" and key == "p99_us":
                target, ok = "< 100 us", d.get(key) is not None and d[key] < 100
            title = f"{prefix}{label} {text} ({int(d.get('events', 0))} events)"
            rows.append((title[0].upper() + title[1:], "us", d.get(key), "n/a (no hop)", target, ok))
    return rows


def markdown(rows):
    lines = ["| Figure | Unit | swiftpjsua | C pjsua | engine/C | Target | Met |",
             "|---|---|--:|--:|--:|---|---|"]
    for name, unit, e, c, target, met in rows:
        r = ratio(e, c)
        c_text = fmt(c)
        met_text = "" if met is None else ("yes" if met else "**no**")
        lines.append(f"| {name} | {unit} | {fmt(e)} | {c_text} | {fmt(r) + 'x' if r is not None else '-'} "
                     f"| {target} | {met_text} |")
    return "\n".join(lines)


def steps_markdown(steps):
    """Every sipp run of the rate and media phases, both sides side by side."""
    lines = ["| Phase | Rate (cps) | Hold (ms) | Calls | Side | OK | Failed | Achieved cps | Setup p50 / p99 (ms) "
             "| Server CPU (s) | Result |", "|---|--:|--:|--:|---|--:|--:|--:|--:|--:|---|"]
    for st in steps:
        if st.phase not in ("rate", "media", "echo"):
            continue
        lines.append(f"| {st.phase} | {st.rate} | {st.hold_ms} | {st.calls} | {st.side} | {st.successful} | {st.failed} "
                     f"| {st.achieved_cps:.0f} | {fmt(st.setup_p50_ms)} / {fmt(st.setup_p99_ms)} | {st.cpu_s:.2f} "
                     f"| {'pass' if st.passed else 'FAIL'} |")
    return "\n".join(lines)


def write_sections(path, sections):
    """Replaces the text between `<!-- name -->` and `<!-- /name -->` for each section."""
    with open(path) as f:
        text = f.read()
    for name, body in sections.items():
        start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
        if start not in text:
            continue
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1] if end in rest else rest
        text = f"{head}{start}\n{body}\n{end}{tail}"
    with open(path, "w") as f:
        f.write(text)


def machine(tool=None):
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    def version(argv):
        try:
            text = subprocess.run(argv, capture_output=True, text=True, timeout=10)
            return (text.stdout + text.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "?"
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
            "sipp": version(["sipp", "-v"]).strip() or version(["sipp", "-v"]),
            "pjproject": (version([tool, "version"]).removeprefix("pjproject ").removesuffix(" loaded") if tool
                          else version(["pkg-config", "--modversion", "libpjproject"])),
            "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)}


def linked_libpj(binary):
    """The real path of the libpj.so.* the dynamic linker resolves for `binary`, or None."""
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if name.startswith("libpj.so") and rest:
            return os.path.realpath(rest.split(" (")[0].strip())
    return None


def matching_pjsua(tool, app=None):
    """The C pjsua app built from the same pjproject tree as `tool` (the app installed beside
    the libpj that `tool` loads, unless `app` is given) and None, or None and why not."""
    lib = linked_libpj(tool)
    if lib is None:
        return None, f"cannot tell which libpj {tool} loads (ldd)"
    if app is None:
        app = os.path.join(os.path.dirname(os.path.dirname(lib)), "bin", "pjsua")
    if not os.access(app, os.X_OK):
        return None, f"no C pjsua app at {app} (installed by scripts/provision.sh beside the pjproject it builds)"
    theirs = linked_libpj(app)
    if theirs != lib:
        return None, f"{app} loads {theirs}, not the {lib} that {tool} loads: the two would not compare one pjproject"
    return app, None


# --- main -------------------------------------------------------------------------------------

@dataclass
class Config:
    rates: tuple = (50, 100, 200, 400)
    holds_ms: tuple = (100, 1000)
    step_seconds: float = 10
    steady_rate: int = 100
    steady_calls: int = 3000
    steady_hold_ms: int = 1000
    rss_rate: int = 200
    rss_hold_ms: int = 100
    rss_warmup: int = 10000
    rss_measured: int = 6000
    media_levels: tuple = (100, 200, 300, 400)
    media_extend: bool = True
    media_hold_ms: int = 30000
    media_setup_rate: int = 100
    realtime_calls: int = 1500
    echo_levels: tuple = (100, 200, 300, 400)


SMOKE = Config(rates=(50,), holds_ms=(100,), step_seconds=1, steady_rate=50, steady_calls=50,
               steady_hold_ms=100, rss_rate=50, rss_warmup=50, rss_measured=100,
               media_levels=(4,), media_extend=False, media_hold_ms=1000, media_setup_rate=50, realtime_calls=0,
               echo_levels=(4,))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--swiftpjsua", default=os.path.join(ROOT, ".build/release/swiftpjsua"))
    parser.add_argument("--pjsua", help="the C pjsua app (default: the one installed with the pjproject "
                        "that --swiftpjsua loads); it must load the same libpj")
    parser.add_argument("--check-apps", action="store_true",
                        help="print the C pjsua app that matches --swiftpjsua and exit 0, or why none does and exit 1")
    parser.add_argument("--out", help="results folder (default .build/bench/<UTC time>)")
    parser.add_argument("--docs", help="also write this run's machine and results into the marked sections "
                        "of this Markdown file (docs/BENCHMARKS.md)")
    parser.add_argument("--smoke", action="store_true", help="a few seconds of load per side; checks calls completed")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply call counts and hold times (e.g. 0.2 for a quick look); full run is 1")
    parser.add_argument("--only", help="comma-separated phases: rates,steady,realtime,rss,media,echo "
                        "(default all but echo; echo compares `listen --echo` with plain `listen`)")
    parser.add_argument("--echo-levels", help="comma-separated concurrent-call levels for the echo phase "
                        "(default 100,200,300,400)")
    parser.add_argument("--media-levels", help="comma-separated concurrent-call levels for the media phase, "
                        "climbing on by the last step until both sides fail (default 100,200,300,400)")
    args = parser.parse_args()

    if not os.access(args.swiftpjsua, os.X_OK):
        sys.exit(f"bench: {args.swiftpjsua} is not an executable (run `make bench`, or pass --swiftpjsua)")
    app, why = matching_pjsua(args.swiftpjsua, args.pjsua)
    if args.check_apps:
        print(app or why)
        return 0 if app else 1
    if app is None:
        sys.exit(f"bench: skipped, no C app to compare with: {why}")
    paths = argparse.Namespace(swiftpjsua=os.path.abspath(args.swiftpjsua), pjsua=app)
    global MAX_CALLS
    try:
        version = subprocess.run([paths.swiftpjsua, "version"], capture_output=True, text=True, timeout=10).stdout
        MAX_CALLS = int(next(l for l in version.splitlines() if l.startswith("call limit:")).split(":")[1])
    except (OSError, StopIteration, ValueError, subprocess.TimeoutExpired):
        log(f"could not read the build's call limit from `{paths.swiftpjsua} version`; using {MAX_CALLS}")
    log(f"engine {paths.swiftpjsua} and C app {app}, both on {linked_libpj(app)}")

    cfg = SMOKE if args.smoke else Config()
    if args.scale != 1.0 and not args.smoke:
        k = args.scale
        cfg = Config(step_seconds=max(1, cfg.step_seconds * k), steady_calls=max(50, int(cfg.steady_calls * k)),
                     rss_warmup=max(50, int(cfg.rss_warmup * k)), rss_measured=max(50, int(cfg.rss_measured * k)),
                     media_hold_ms=max(1000, int(cfg.media_hold_ms * k)),
                     realtime_calls=max(50, int(cfg.realtime_calls * k)))
    if args.media_levels:
        cfg.media_levels = tuple(int(level) for level in args.media_levels.split(","))
    if args.echo_levels:
        cfg.echo_levels = tuple(int(level) for level in args.echo_levels.split(","))
    phases = set((args.only or "rates,steady,realtime,rss,media").split(","))
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    workdir = os.path.abspath(args.out or os.path.join(ROOT, ".build", "bench", stamp + ("-smoke" if args.smoke else "")))
    os.makedirs(workdir, exist_ok=True)

    started = time.monotonic()
    info = {"started_utc": stamp, "machine": machine(paths.swiftpjsua), "load_at_start": loadavg(), "config": asdict(cfg),
            "smoke": args.smoke}
    log(f"{'smoke' if args.smoke else 'full'} run into {workdir}; load average {info['load_at_start']}")
    steps = []
    rates = phase_rates(cfg, paths, workdir, steps) if "rates" in phases else {}
    steady = phase_steady(cfg, paths, workdir, steps) if "steady" in phases else None
    realtime = None
    if "realtime" in phases and cfg.realtime_calls:
        if os.geteuid() == 0 and shutil.which("chrt"):
            realtime = phase_steady(cfg, paths, workdir, steps, realtime=True)
        else:
            log("skipping the real-time diagnostic: needs root and chrt")
    rss = phase_rss(cfg, paths, workdir, steps) if "rss" in phases else None
    media, holding = phase_media(cfg, paths, workdir, steps) if "media" in phases else ({}, {})
    if "echo" in phases:
        echo_best, echo_holding, echo_counters = phase_echo(cfg, paths, workdir, steps)
        echo_table = echo_markdown(cfg, echo_best, echo_holding, echo_counters)
        with open(os.path.join(workdir, "results-echo.md"), "w") as f:
            f.write(f"Echo phase, load average {loadavg()} at its end.\n\n{echo_table}\n")
        print()
        print(echo_table)
        print()
        if args.docs and not args.smoke and args.scale == 1.0:
            write_sections(args.docs, {"echo": f"Run {stamp}, load average {loadavg()} at its end.\n\n{echo_table}"})
            log(f"wrote the echo results into {args.docs}")
    info["load_at_end"] = loadavg()
    info["minutes"] = round((time.monotonic() - started) / 60, 1)

    with open(os.path.join(workdir, "steps.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(steps[0].row().keys()) if steps else ["phase"])
        writer.writeheader()
        for step in steps:
            writer.writerow(step.row())

    if steady is None or rss is None:
        log(f"partial run ({','.join(sorted(phases))}); steps in {workdir}/steps.csv")
        return 0

    rows = figures(cfg, rates, steady, realtime, rss, media, holding)
    table = markdown(rows)
    with open(os.path.join(workdir, "results.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["figure", "unit", "swiftpjsua", "c_pjsua", "ratio_engine_over_c", "target", "met"])
        for name, unit, e, c, target, met in rows:
            r = ratio(e, c)
            num = lambda v: round(v, 4) if isinstance(v, (int, float)) else ("" if v is None else v)
            writer.writerow([name, unit, num(e), num(c),
                             "" if r is None else round(r, 4), target, "" if met is None else met])
    m = info["machine"]
    header = (f"Run {stamp}, {info['minutes']} min, load average {info['load_at_start']} at start and "
              f"{info['load_at_end']} at end; {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, "
              f"Linux {m['kernel']}, pjproject {m['pjproject']}, {m['sipp']}.")
    with open(os.path.join(workdir, "results.md"), "w") as f:
        f.write(header + "\n\n" + table + "\n\nEvery rate and media step:\n\n" + steps_markdown(steps) + "\n")
    info.update(rates={f"{s}-{h}ms": r for (s, h), r in rates.items()}, media=media,
                rss={s: {k: v for k, v in d.items()} for s, d in rss.items()},
                event_latency=steady[ENGINE][1])
    with open(os.path.join(workdir, "results.json"), "w") as f:
        json.dump(info, f, indent=2, default=str)
    print()
    print(header)
    print()
    print(table)
    print()
    if args.docs and (args.smoke or args.scale != 1.0 or args.only):
        log(f"not a full run: {args.docs} left as it is")
    elif args.docs:
        machine_text = (f"{m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, Linux {m['kernel']}; "
                        f"pjproject {m['pjproject']}; {m['sipp']}; Python {platform.python_version()}.")
        write_sections(args.docs, {"machine": machine_text,
                                   "results": header + "\n\n" + table + "\n\nEvery rate and media step:\n\n"
                                   + steps_markdown(steps)})
        log(f"wrote the results into {args.docs}")
    log(f"done in {info['minutes']} min; results in {workdir}")

    if args.smoke:
        problems = []
        for side in SIDES:
            if steady[side][0].successful == 0:
                problems.append(f"{side}: no call completed")
            if not any(s.side == side and s.phase == "media" and s.successful > 0 for s in steps):
                problems.append(f"{side}: no call with media completed")
        if steady[ENGINE][1].get("delivery", {}).get("events", 0) == 0:
            problems.append("engine: no event latency written")
        for problem in problems:
            log(f"smoke: {problem}")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
