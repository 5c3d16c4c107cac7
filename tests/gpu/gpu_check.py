#!/usr/bin/env python3
"""The verdict of tests/gpu/real_gpu_check.sh: reads what the script left in
OUT and compares ingero-top's numbers with the workload's own and with the
meters sampled beside it (nvidia-smi, or nvml-read on the shim). Writes
OUT/verdict.txt (one line per comparison: PASS, FAIL or INFO, then the
figures) and exits 0 when nothing failed, 1 when something did, 3 when the
machine refused BPF or uprobes.

usage: gpu_check.py OUT MODE     (MODE: real or shim)
"""
import json
import os
import statistics
import sys

OUT, MODE = sys.argv[1], sys.argv[2]
lines, failed = [], []


def say(kind, what, detail=""):
    line = f"{kind:4} {what}" + (f": {detail}" if detail else "")
    lines.append(line)
    print(line)
    if kind == "FAIL":
        failed.append(what)


def path(name):
    return os.path.join(OUT, name)


def read_text(name):
    try:
        with open(path(name), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def kv(name):
    """A "key value" file (the workload's report and expect files)."""
    out = {}
    for line in read_text(name).splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            out[parts[0]] = parts[1].strip()
    return out


def summary(name):
    """The last summary object of a --json run, or None."""
    last = None
    for line in read_text(name).splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if obj.get("type") == "summary":
            last = obj
    return last


def within(got, want, rel, absolute):
    return abs(got - want) <= max(rel * abs(want), absolute)


def fmt_us(ns):
    return f"{ns / 1000:.1f}us"


REFUSALS = ("Operation not permitted", "cannot attach uprobe", "BTF", "bpf() refused",
            "failed to load", "Permission denied", "not supported", "needs root", "CAP_BPF")


def refused():
    """What the machine refused when the traced runs could not start: the
    FAIL lines of `ingero-top check` (privileges, BTF, ring buffer,
    tracepoints, uprobes), else the runs' own words; None otherwise."""
    for run in ("stacks", "nostacks"):
        rc = read_text(f"{run}.rc").strip()
        if rc in ("", "0") or summary(f"{run}.json") is not None:
            continue
        fails = [" ".join(l.split()) for l in read_text("check.txt").splitlines()
                 if l.startswith("FAIL")]
        if fails:
            return "; ".join(fails)
        hits = [l for l in read_text(f"{run}.err").splitlines() if any(r in l for r in REFUSALS)]
        if hits:
            return hits[0]
    return None


# ---- counts --------------------------------------------------------------------
def check_counts(run, summ, expect):
    ops = {o["op"]: o.get("calls_life", o.get("calls")) for o in summ.get("ops", [])}
    want = {k: int(v) for k, v in expect.items() if k != "pid" and int(v) > 0}
    bad = [f"{op} {ops.get(op, 0)}/{n}" for op, n in sorted(want.items()) if ops.get(op, 0) != n]
    total = sum(want.values())
    if bad:
        say("FAIL", f"{run}: per-op counts equal the workload's own", "got/want " + ", ".join(bad))
    else:
        say("PASS", f"{run}: per-op counts equal the workload's own",
            f"{len(want)} ops, {total} calls, every one exact")
    extra = {op: n for op, n in ops.items() if op not in want and n}
    if extra:
        say("INFO", f"{run}: other ops seen (driver calls the runtime made, nested)",
            ", ".join(f"{op} {n}" for op, n in sorted(extra.items())))
    return ops


# ---- durations -------------------------------------------------------------------
def load_events():
    calls, gpus, procs = [], [], []
    for line in read_text("events.jsonl").splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        kind = e.get("kind")
        if kind == "call":
            calls.append(e)
        elif kind == "gpu":
            gpus.append(e)
        elif kind == "gpuproc":
            procs.append(e)
    return calls, gpus, procs


def check_durations(calls, rep, summ):
    stream = rep.get("stream_timed", "").lower()
    syncs = [e["dur_ns"] for e in calls
             if e.get("op") == "cudaStreamSynchronize" and e.get("stream", "").lower() == stream
             and str(e.get("pid")) == rep.get("pid")]
    iters = int(rep.get("timed_iters", 0))
    if len(syncs) != iters:
        say("FAIL", "timed syncs found in the recording", f"{len(syncs)} on stream {stream}, want {iters}")
        return
    ig_med = statistics.median(syncs)
    host_med = int(rep["timed_sync_host_ns_median"])
    ev_med = int(rep["timed_kernel_event_ns_median"])
    ok = within(ig_med, host_med, 0.03, 30000)
    say("PASS" if ok else "FAIL", "timed sync: ingero-top's median = the workload's host clock",
        f"{fmt_us(ig_med)} vs {fmt_us(host_med)} (3% or 30us), {iters} syncs")
    ok = within(ig_med, ev_med, 0.05, 100000)
    say("PASS" if ok else "FAIL", "timed sync: ingero-top's median = the kernel's CUDA-event time",
        f"{fmt_us(ig_med)} vs {fmt_us(ev_med)} (5% or 100us; the sync starts just after the launch)")
    op = {o["op"]: o for o in summ.get("ops", [])}.get("cudaStreamSynchronize")
    host_sum, n = int(rep["sync_host_ns_sum"]), int(rep["sync_calls"])
    if op:
        ig_sum = op["time_ns"]
        ok = within(ig_sum, host_sum, 0.03, n * 20000) and ig_sum <= host_sum * 1.001 + 1e6
        say("PASS" if ok else "FAIL", "all syncs: ingero-top's total time = the host clock's",
            f"{ig_sum / 1e6:.1f}ms vs {host_sum / 1e6:.1f}ms over {n} calls "
            f"(3% or 20us a call, never more than the host saw)")


# ---- NVML against nvidia-smi ----------------------------------------------------------
def load_meters():
    """[(unix ns, [device rows], {pid: MiB})] from meters.txt."""
    out = []
    for line in read_text("meters.txt").splitlines():
        tag, _, rest = line.partition(" ")
        if tag == "T":
            out.append((int(rest), [], {}))
        elif tag == "G" and out:
            f = rest.split(",")
            try:
                out[-1][1].append([float(x) if x not in ("", "[N/A]") else None for x in f])
            except ValueError:
                pass
        elif tag == "P" and out:
            pid, _, mib = rest.partition(",")
            try:
                out[-1][2][int(pid)] = float(mib)
            except ValueError:
                pass
    return [m for m in out if m[1]]


def nearest(meters, ts):
    best = min(meters, key=lambda m: abs(m[0] - ts), default=None)
    return best if best and abs(best[0] - ts) <= 1.0e9 else None


def check_nvml(gpus, procs, rep):
    meters = load_meters()
    dev0 = [g for g in gpus if g.get("dev") == 0]
    if not dev0:
        say("FAIL" if MODE == "real" else "INFO", "NVML samples in the recording", "none")
        return
    if not meters:
        say("FAIL", "meters sampled beside ingero-top", "none (nvidia-smi not answering?)")
        return
    pairs = [(g, nearest(meters, g["ts_ns"])) for g in dev0]
    pairs = [(g, m) for g, m in pairs if m]
    if len(pairs) < 3:
        say("FAIL", "NVML samples paired with nvidia-smi's within 1 s", f"{len(pairs)}")
        return
    exact = MODE == "shim"

    def compare(what, got_of, want_of, tol, unit):
        diffs = []
        for g, m in pairs:
            got, want = got_of(g), want_of(m[1][0])
            if got is not None and want is not None:
                diffs.append(got - want)
        if not diffs:
            say("INFO", f"NVML {what}", "no value on one side")
            return
        med = statistics.median(abs(d) for d in diffs)
        ok = med == 0 if exact else med <= tol
        say("PASS" if ok else "FAIL", f"NVML {what} = nvidia-smi's at the same moments",
            f"median |difference| {med:.1f}{unit} over {len(diffs)} pairs "
            f"(allowed {0 if exact else tol}{unit}; signed median {statistics.median(diffs):+.1f})")

    mib = 1048576
    compare("utilisation", lambda g: g.get("util_gpu_pct"), lambda r: r[0], 15, " points")
    total = pairs[0][1][1][0][4] or 81559
    compare("memory used", lambda g: g["mem_used"] / mib if "mem_used" in g else None,
            lambda r: r[2], max(64, total * 0.01), " MiB")
    compare("power", lambda g: g["power_mw"] / 1000 if "power_mw" in g else None,
            lambda r: r[5], 30, " W")
    compare("temperature", lambda g: g.get("temp_c"), lambda r: r[6], 3, " C")
    pid = int(rep.get("pid", 0))
    mine = [p for p in procs if p.get("pid") == pid and "mem_used" in p]
    diffs = []
    for p in mine:
        m = nearest(meters, p["ts_ns"])
        if m and pid in m[2]:
            diffs.append(p["mem_used"] / mib - m[2][pid])
    if not diffs:
        say("FAIL", "NVML memory of the workload's process", "not listed on one side")
        return
    med = statistics.median(abs(d) for d in diffs)
    say("PASS" if med <= 2 else "FAIL", "NVML memory of the workload's process = nvidia-smi's",
        f"median |difference| {med:.1f} MiB over {len(diffs)} pairs "
        f"({mine[-1]['mem_used'] / mib:.0f} MiB)")


# ---- the time split against the scheduler ------------------------------------------------
def check_split(run, summ, rep):
    """The preempted time of the workload's split (between and inside calls)
    is the scheduler's: a call frame left open (an entry seen, its return
    not) would count every later interval as inside a call and lose it."""
    procs = [p for p in summ.get("procs", []) if str(p.get("pid")) == rep.get("pid")]
    if not procs or not procs[0].get("off_preempt_ns"):
        return
    p = procs[0]
    t = p["time"]["parts"]
    split = t.get("preempted", 0) + t.get("call_preempted", 0) + t.get("throttled", 0)
    ratio = split / p["off_preempt_ns"]
    say("PASS" if ratio >= 0.9 else "FAIL", f"{run}: the time split keeps the preempted time",
        f"{split / 1e9:.2f}s in the split of {p['off_preempt_ns'] / 1e9:.2f}s the scheduler saw "
        f"({ratio:.0%}, want >= 90%)")


# ---- the contention phase's culprit ------------------------------------------------------
def check_culprit(run, summ, rep):
    wall = int(rep.get("contention_wall_ns", 0))
    delay = int(rep.get("contention_run_delay_ns", 0))
    if not wall:
        say("INFO", f"{run}: no contention phase")
        return
    share = delay / wall
    if share < 0.2:
        say("FAIL", f"{run}: the hog delayed the feeder (its own run_delay)",
            f"only {share:.0%} of {wall / 1e9:.1f}s: the phase did not contend")
        return
    chains = [c for c in summ.get("chains", []) if c.get("class") == "cpu_contention"]
    named = [c for c in chains if c.get("culprit_comm") == "gpu-hog"
             and str(c.get("culprit_pid")) == rep.get("hog_pid")]
    if named:
        c = named[0]
        say("PASS", f"{run}: the hog is named the culprit of the contention",
            f"{c['id']} {c['severity']} impact {c['impact']:.0%}; the feeder's own run_delay "
            f"{share:.0%} of the phase")
    else:
        seen = ", ".join(f"{c.get('class')} by {c.get('culprit_comm')}" for c in summ.get("chains", []))
        say("FAIL", f"{run}: the hog is named the culprit of the contention",
            f"chains: {seen or 'none'}; run_delay {share:.0%}")


# ---- attached to a running process -----------------------------------------------------
def check_attach():
    rc = read_text("attach.rc").strip()
    if not rc:
        return
    say("PASS" if rc == "0" else "FAIL", "attach (--pid): Ctrl-C after the process exited ends it",
        f"exit {rc}" + (" (killed by the 120 s timeout)" if rc == "124" else ""))
    summ = summary("attach.json")
    rep = kv("attach.report")
    if summ is None:
        say("FAIL", "attach (--pid): a JSON summary", "none")
        return
    ops = {o["op"]: o.get("calls_life", 0) for o in summ.get("ops", [])}
    steps = int(rep.get("contention_steps", 0))
    seen = ops.get("cudaStreamSynchronize", 0)
    late = "late" in read_text("attach.err")
    ok = 0 < seen <= int(kv("stacks.expect").get("cudaStreamSynchronize", 1 << 60)) + steps
    say("PASS" if ok and late else "FAIL", "attach (--pid): calls seen from the attach on",
        f"{seen} cudaStreamSynchronize of the {steps} contention steps and before; "
        f"{'says' if late else 'does not say'} it attached late")
    check_culprit("attach", summ, rep)
    check_split("attach", summ, rep)


# ---- CUDA_LAUNCH_BLOCKING=1 ---------------------------------------------------------------
def report_blocking():
    """INFO: the launches' p50 beside the run without it, the feeding
    thread's parts (a spinning wait is api, a sleeping one gpu_wait), the
    chains, and whether the environment was read."""
    b, n = summary("blocking.json"), summary("nostacks.json")
    if not b:
        return
    def p50(s, op):
        return next((o.get("p50_ns", 0) for o in (s or {}).get("ops", []) if o.get("op") == op), 0)
    pid = next((p.get("pid") for p in b.get("procs", []) if p.get("cuda")), None)
    parts = next((p.get("time", {}).get("parts", {}) for p in b.get("procs", [])
                  if p.get("pid") == pid), {})
    wall = sum(parts.values()) or 1
    top = {k: round(100 * v / wall, 1) for k, v in parts.items() if v >= 0.02 * wall}
    chains = [f"{c['class']} {c['severity']} {100 * c['impact']:.0f}%" for c in b.get("chains", [])]
    say("INFO", "CUDA_LAUNCH_BLOCKING=1: cudaLaunchKernel p50",
        f"{fmt_us(p50(b, 'cudaLaunchKernel'))} (without it {fmt_us(p50(n, 'cudaLaunchKernel'))}); "
        f"parts % {top}; chains {chains}; exit {read_text('blocking.rc').strip()}")


# ---- cost -----------------------------------------------------------------------------------
def report_cost(reps):
    base = reps.get("untraced")
    if not base:
        return
    b = float(base.get("launch_cost_ns_per_call", 0) or 0)
    for run in ("stacks", "nostacks"):
        r = reps.get(run)
        if not r or not b:
            continue
        t = float(r.get("launch_cost_ns_per_call", 0) or 0)
        walls = [(k[6:-3], int(r[k]) / max(1, int(base[k]))) for k in sorted(r) if k.startswith("phase_")]
        say("INFO", f"cost, {run}: cudaLaunchKernel host time per call",
            f"{t:.0f}ns traced vs {b:.0f}ns untraced = {t / b:.2f}x (+{t - b:.0f}ns a call); "
            "phase wall ratios " + " ".join(f"{k} {v:.2f}x" for k, v in walls))


def main():
    why = refused()
    if why:
        say("FAIL", "the machine refused what ingero-top needs", why)
        write(3)
    reps = {r: kv(f"{r}.report") for r in ("untraced", "stacks", "nostacks")}
    for run in ("untraced", "stacks", "nostacks"):
        rc = read_text(f"{run}.rc").strip()
        say("PASS" if rc == "0" else "FAIL", f"{run}: the workload ran to the end", f"exit {rc}")
    check = read_text("check.txt")
    if MODE == "real":
        nv = [l for l in check.splitlines() if " nvml " in f" {l} "]
        say("PASS" if nv and "device meters on" in nv[0] else "FAIL", "check: NVML device meters",
            nv[0].strip() if nv else "no nvml line")
    fails = [l for l in check.splitlines() if l.startswith("FAIL")]
    say("FAIL" if fails else "PASS", "check: no FAIL line", "; ".join(fails))
    sums = {r: summary(f"{r}.json") for r in ("stacks", "nostacks", "replay")}
    for run, summ in sums.items():
        if summ is None:
            say("FAIL", f"{run}: a JSON summary", "none")
            continue
        expect = kv(f"{'stacks' if run == 'replay' else run}.expect")
        check_counts(run, summ, expect)
        check_culprit(run, summ, reps["stacks" if run == "replay" else run])
        check_split(run, summ, reps["stacks" if run == "replay" else run])
    calls, gpus, procs = load_events()
    if sums["stacks"]:
        check_durations(calls, reps["stacks"], sums["stacks"])
    check_nvml(gpus, procs, reps["stacks"])
    check_attach()
    report_blocking()
    report_cost(reps)
    write(1 if failed else 0)


def write(rc):
    head = f"{'PASS' if rc == 0 else 'FAIL'} real_gpu_check ({MODE}): " + (
        f"{len(failed)} failed: " + "; ".join(failed) if failed else "every comparison holds")
    with open(path("verdict.txt"), "w") as f:
        f.write(head + "\n" + "\n".join(lines) + "\n")
    print(head)
    sys.exit(rc)


if __name__ == "__main__":
    main()
