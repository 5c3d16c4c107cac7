#!/usr/bin/env python3
"""The fleet's cost on the viewing machine (issue 29: "under 5 % of a core
per 16 hosts", "stays responsive at 64 hosts").

Runs `ingero-top --ssh fh0,...,fhN-1 --batch --json -d 1` with
--ssh-program tests/bench/fleet_fake_host.py: each simulated host answers as
a remote `ingero-top --stream` does, a hello and one frame a second of an
8-GPU training host (3 processes, 8 GPUs, 8 NCCL ranks of one communicator
of 8N ranks, 20 collectives a second each, every arrival listed), with its
own clock error of up to +-150 ms. One rank (fh17's local rank 3) arrives 10
ms late to every collective; one host (the last) sends its hello and then
nothing, as a hung host does. After a warm-up (longer than the 10 s the
first table may wait for the hosts) the fleet's own CPU time (utime +
stime of its process, all threads, from /proc; the fake hosts are not
counted) is read over SECONDS, for 16 hosts and for 64; the warm-up's own
CPU is printed too.

Prints per case: the fleet's CPU as % of one core, the same per 16 hosts
(the target: < 5 %), the frame pickup latency (from a host writing a frame
to the fleet having read all of it: the pipe drained, seen by the host in
1 ms steps), the hosts live at the end, the straggler the fleet named, and
how long the fleet took to exit after SIGTERM. Exits 77 when ingero-top has
no --ssh.

    tests/bench/fleet_bench.py [--hosts 16,64] [--seconds 20] [--warmup 12]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FAKE = os.path.join(ROOT, "tests", "bench", "fleet_fake_host.py")
LATE_HOST, LATE_LOCAL, LATE_US = 17, 3, 10000


def cpu_s(pid):
    """utime + stime of the process (all its threads), seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def last_object(path):
    last = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    last = json.loads(line)
                except ValueError:
                    pass
    return last


def describe(obj, nhosts):
    """(live hosts, states by name, straggler text) from the fleet's JSON."""
    if obj is None:
        return 0, {}, "no JSON object"
    hosts = obj.get("hosts", [])
    states = {h.get("host", "?"): h.get("state", "?") for h in hosts}
    live = sum(1 for s in states.values() if s == "live")
    st = obj.get("straggler") or {}
    if st:
        text = "%s rank %s of %s, late %.1f ms mean (clock +-%.1f ms)" % (
            st.get("host"), st.get("rank"), st.get("nranks"),
            (st.get("late_mean_ns") or 0) / 1e6, (st.get("unc_ns") or 0) / 1e6)
    else:
        text = "none"
    return live, states, text


def run_case(ig, nhosts, seconds, warmup, tmp):
    hosts = ["fh%d" % i for i in range(nhosts)]
    stall = hosts[-1]
    log = os.path.join(tmp, "frames-%d.log" % nhosts)
    out = os.path.join(tmp, "fleet-%d.json" % nhosts)
    err = os.path.join(tmp, "fleet-%d.err" % nhosts)
    env = dict(os.environ, FLEET_FAKE_HOSTS=str(nhosts), FLEET_FAKE_STALL=stall,
               FLEET_FAKE_LOG=log, FLEET_FAKE_LATE="%d:%d:%d" % (LATE_HOST, LATE_LOCAL, LATE_US),
               FLEET_FAKE_EPOCH_NS=str(time.time_ns() - 10**10))
    cmd = [ig, "--ssh", ",".join(hosts), "--ssh-program", FAKE, "--ssh-jobs", "16",
           "--batch", "--json", "-d", "1"]
    with open(out, "w") as fo, open(err, "w") as fe:
        p = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, env=env)
    try:
        cs, tst = cpu_s(p.pid), time.monotonic()
        time.sleep(warmup)
        if p.poll() is not None:
            print("  the fleet exited early (%d): %s" % (p.returncode, open(err).read()[-400:]))
            return False
        c0, t0 = cpu_s(p.pid), time.monotonic()
        start_use = (c0 - cs) / (t0 - tst) * 100.0
        frames0 = sum(1 for _ in open(log)) if os.path.exists(log) else 0
        time.sleep(seconds)
        c1, t1 = cpu_s(p.pid), time.monotonic()
    finally:
        ts = time.monotonic()
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        exit_s = time.monotonic() - ts
    use = (c1 - c0) / (t1 - t0) * 100.0
    lat = []
    with open(log) as f:
        for i, line in enumerate(f):
            parts = line.split()
            if i >= frames0 and len(parts) == 3 and parts[2] != "-":
                lat.append(float(parts[2]))
    live, states, straggler = describe(last_object(out), nhosts)
    print("fleet of %d hosts, %.0f s after a %.0f s warm-up:" % (nhosts, t1 - t0, warmup))
    print("  CPU: %.2f %% of a core, %.2f %% per 16 hosts (target < 5 %%)" %
          (use, use * 16.0 / nhosts))
    print("  CPU in the first %.0f s (connections, the first table's wait): %.2f %% of a core" %
          (t0 - tst, start_use))
    print("  frame pickup latency: median %.1f ms, p99 %.1f ms, max %.1f ms (%d frames)" %
          (pct(lat, 0.5), pct(lat, 0.99), max(lat) if lat else float("nan"), len(lat)))
    print("  hosts live at the end: %d of %d (%s hung after its hello by design: %s, "
          "want stale)" % (live, nhosts, stall, states.get(stall, "?")))
    want = "fh%d rank %d" % (LATE_HOST, LATE_HOST * 8 + LATE_LOCAL) if nhosts > LATE_HOST \
        else "none"
    print("  straggler: %s (want %s)" % (straggler, want))
    print("  exit after SIGTERM: %.2f s (exit status %s)" % (exit_s, p.returncode))
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", default="16,64")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--warmup", type=float, default=12)
    a = ap.parse_args()
    ig = os.environ.get("IG") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "ingero-top")
    if not os.access(ig, os.X_OK):
        print("skip: %s not built" % ig)
        return 77
    helptext = subprocess.run([ig, "--help"], capture_output=True, text=True).stdout
    if "--ssh" not in helptext:
        print("skip: %s has no --ssh" % ig)
        return 77
    ok = True
    with tempfile.TemporaryDirectory(prefix="ig-fleet-bench.") as tmp:
        for n in [int(x) for x in a.hosts.split(",")]:
            ok = run_case(ig, n, a.seconds, a.warmup, tmp) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
