#!/usr/bin/env python3
"""Judges one sweep case: causegen's own ground truth against the diagnosis
of `ingero-top --json --summary` (live, and the replay of its recording).

Used by sweep.py; also a command line tool:

  check.py --truth T.json --live L.json [--replay R.json] [--case NAME]
           [--intended CLASS ...] [--healthy]

prints one "ok"/"FAIL"/"note" line per check and exits 1 when one failed
(contract fields missing included). tests/sweep/README.md has the rules.
"""
import argparse
import json
import re
import sys

CLASSES = ["cpu_contention", "loader_wait", "block_io", "host_work", "timer_sleep", "gpu_bound",
           "sync_storm", "copy_dominated", "alloc_spikes", "memory_pressure", "cold_start",
           "cpu_quota", "file_io", "cold_read", "lock_wait", "gil_wait", "backpressure",
           "net_wait", "page_faults", "slow_burst", "stopped", "launch_blocking", "poll_wait"]
SEV = {"INFO": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3}
PARTS = ["gpu_wait", "api", "call_preempted", "host_cpu", "preempted", "io_wait", "task_wait",
         "sleep", "fault", "unknown", "throttled", "file_io", "cold_read", "mem_pressure",
         "lock_wait", "gil_wait", "backpressure", "net_wait", "stopped"]
# The part each class of the kernel's evidence is (the workload measures it
# by its mechanisms' rules: tests/sweep/README.md).
PART_OF = {"loader_wait": "task_wait", "timer_sleep": "sleep", "file_io": "file_io",
           "cold_read": "cold_read", "memory_pressure": "mem_pressure", "lock_wait": "lock_wait",
           "gil_wait": "gil_wait", "backpressure": "backpressure", "net_wait": "net_wait",
           "page_faults": "fault", "cpu_quota": "throttled", "stopped": "stopped"}
# States that are no incident (INFO): the top chain only when no other cause
# reaches LOW.
INFO_CLASSES = {"gpu_bound", "timer_sleep"}
CHAIN_FIELDS = ["class", "severity", "impact", "culprit_pid", "culprit_comm", "pid", "tid",
                "active"]
IMPACT_TOL = 0.07  # impact of a cause within 7 points of the workload's measure
TIE = 0.05  # two causes closer than this: either may be the top chain
QUIET = 0.03  # a cause under 3 % of wall time raises nothing above INFO
SEV_LOW = 0.05  # the detector's LOW threshold: a smaller problem is no top chain
REPLAY_TOL = 0.01  # live and replay impacts within 1 point
PARTS_SUM_TOL = 0.01  # the parts add up to wall_ns within 1 %
RESIDUE_MAX = 0.03  # the generator's unaccounted time, share of wall
DISTURBED = 0.08  # preempted share above which a case without hogs was disturbed
SELF_CULPRIT = {"host_work", "timer_sleep", "gpu_bound", "sync_storm", "copy_dominated",
                "alloc_spikes", "memory_pressure", "cold_start", "page_faults", "cpu_quota",
                "launch_blocking", "poll_wait"}


def pct(x):
    return f"{100 * x:.1f} %"


# --- the ground truth -------------------------------------------------------------

def truth_causes(t):
    """Share of the feeding thread's wall time that each cause explains, by the
    workload's own clocks. The causes partition the wall time (up to the
    off-CPU time of busy loops and the residue, ~0):
      cpu_contention  all run-queue wait (schedstat), in every phase
      host_work       on-CPU between CUDA calls in user code: host prep, the CPU
                      part of the loader/sleep phases and of the mechanisms
                      that wait, the generator's own residue
      gpu_bound       the GPU work the host waited for in launches and syncs
      sync_storm      launch + sync time not covered by GPU work: the GPU idle
                      because of the round trips themselves
      copy_dominated  in cudaMemcpy, not preempted
      alloc_spikes    in cudaMalloc/cudaFree, not preempted
      block_io        0: D-state waits outside file syscalls (none made)
    and one part each (PART_OF), the generator's measure of its mechanisms:
      loader_wait     blocked reading the loaders' pipe, a producer's socket
                      or eventfd
      timer_sleep     asleep in nanosleep, epoll, a timerfd, a timed condition
      file_io         all the time in write + fdatasync and the file mechanisms
                      (the kernel's copies on the CPU and the disk's waits)
      cold_read, page_faults, lock_wait, gil_wait, backpressure, net_wait,
      memory_pressure  their mechanisms (off time, or all of it)
      cpu_quota       off time of a loop that never sleeps, under a CPU quota
      poll_wait       the off time of the polling mechanisms (poll-*), the
                      part sleep less it is timer_sleep's
      launch_blocking with CUDA_LAUNCH_BLOCKING=1 (truth "launch_blocking"):
                      the smaller of the time in launches (not preempted) and
                      the rest, what overlap gives back; host work less the
                      launches' time (what the GPU's work would hide)"""
    W = t["wall_ns"]
    ph = t["phases"]

    def nopre(p):
        return ph[p]["wall_ns"] - ph[p]["preempted_ns"]

    if "throttled" in t["parts"]:  # the generator's parts by mechanism (README.md)
        p = t["parts"]
        cuda = p["gpu_wait"] + p["api"] - nopre("copy") - nopre("alloc")
        gpu = min(t["gpu"]["work_ns"], cuda)
        if "waited_ns" in t["gpu"]:  # the generator measured the wait itself
            gpu = t["gpu"]["waited_ns"]
        out = {
            "cpu_contention": (p["preempted"] + p["call_preempted"]) / W,
            "block_io": 0.0,  # D waits outside file syscalls: the generator makes none
            "host_work": p["host_cpu"] / W,
            "gpu_bound": gpu / W,
            "sync_storm": (cuda - gpu) / W,
            "copy_dominated": nopre("copy") / W,
            "alloc_spikes": nopre("alloc") / W,
        }
        for cls, part in PART_OF.items():
            out[cls] = p.get(part, 0) / W  # "stopped" since 2026-11-28
        # sleeping while it polls is the same part as a paced loop's sleep:
        # the polling mechanisms' off time is poll_wait's, the rest the timer's
        poll = sum(m["off_ns"] for m in t.get("mechs", []) if m.get("class") == "poll_wait")
        out["poll_wait"] = poll / W
        out["timer_sleep"] = max(0.0, out["timer_sleep"] - poll / W)
        if t.get("launch_blocking"):
            # each launch waited for its kernel: overlap would give back the
            # smaller of the launches' share and the rest; the host work the
            # GPU's would then hide is not host work's to claim
            launch = nopre("launch") / W
            out["launch_blocking"] = min(launch, 1 - launch)
            out["host_work"] = max(0.0, out["host_work"] - launch)
        return out
    cuda = nopre("launch") + nopre("sync")
    gpu = min(t["gpu"]["work_ns"], cuda)
    return {  # a truth written before the mechanisms: block I/O was the io phase's waits
        "cpu_contention": t["total"]["preempted_ns"] / W,
        "loader_wait": ph["loader"]["off_ns"] / W,
        "block_io": ph["io"]["off_ns"] / W,
        "host_work": t["parts"]["host_cpu"] / W,
        "timer_sleep": ph["sleep"]["off_ns"] / W,
        "gpu_bound": gpu / W,
        "sync_storm": (cuda - gpu) / W,
        "copy_dominated": nopre("copy") / W,
        "alloc_spikes": nopre("alloc") / W,
        "memory_pressure": 0.0,
    }


def unaccounted(t):
    """The generator's residue that no part explains: under a CPU quota its
    run-queue wait and off time are the quota's throttling, accounted."""
    res = t["residue"]
    if t.get("quota", {}).get("pct"):
        return res["wall_ns"] - res.get("preempted_ns", 0) - res.get("off_ns", 0)
    return res["wall_ns"]


def truth_problems(t):
    """Self-consistency of the generator's measure: [] when it holds."""
    bad = []
    W = t["wall_ns"]
    phases = sum(p["wall_ns"] for p in t["phases"].values()) + \
        sum(m["wall_ns"] + m.get("post", {}).get("wall_ns", 0) for m in t.get("mechs", [])
            if t.get("generator", "causegen") == "causegen")
    if phases + t["residue"]["wall_ns"] != W:
        bad.append(f"phases {phases} + residue {t['residue']['wall_ns']} != wall {W}")
    if unaccounted(t) > RESIDUE_MAX * W:
        bad.append(f"residue {pct(unaccounted(t) / W)} > {pct(RESIDUE_MAX)}")
    if sum(t["parts"].values()) != W:
        bad.append(f"parts add up to {sum(t['parts'].values())}, wall {W}")
    for name, p in t["phases"].items():
        if p["cpu_ns"] + p["preempted_ns"] > p["wall_ns"] * 1.02 + 50000:
            bad.append(f"phase {name}: cpu + preempted > wall")
    if t["steps"] < 3:
        bad.append(f"only {t['steps']} steps")
    return bad


def helpers_of(t, role):
    return {h["pid"]: h["comm"] for h in t["helpers"] if h["role"] == role}


# --- the diagnosis -----------------------------------------------------------------

def summary_of(path):
    """The last {"type": "summary"} object of an ingero-top --json output (one
    object a line), or a file holding one object; (None, reason) if none."""
    try:
        text = open(path, errors="replace").read()
    except OSError as e:
        return None, f"cannot read {path}: {e}"
    try:
        d = json.loads(text)
        if isinstance(d, dict) and d.get("type") == "summary":
            return d, ""
    except ValueError:
        pass
    for line in reversed([x for x in text.splitlines() if x.startswith("{")]):
        try:
            d = json.loads(line)
        except ValueError as e:
            return None, f"{path}: a line is not JSON: {e}"
        if isinstance(d, dict) and d.get("type") == "summary":
            return d, ""
    return None, f"{path}: no summary line"


def ordered(chains):
    """The contract's order: active chains first; within them and within the
    resolved ones, actionable chains (above INFO) before INFO ones (healthy
    states); then by impact, largest first."""
    def group(c):
        return (0 if c.get("active", True) else 1, 1 if c.get("severity") == "INFO" else 0)
    for a, b in zip(chains, chains[1:]):
        ga, gb = group(a), group(b)
        if ga > gb:
            return False
        ia, ib = a.get("impact"), b.get("impact")
        if ga == gb and isinstance(ia, (int, float)) and isinstance(ib, (int, float)) \
                and ib > ia + 1e-9:
            return False
    return True


def contract_problems(s, pid):
    """What the summary lacks of the contract (README.md), as short strings."""
    bad = []
    chains = s.get("chains")
    if not isinstance(chains, list):
        return ["no chains[]"]
    for i, c in enumerate(chains):
        miss = [f for f in CHAIN_FIELDS if f not in c]
        if miss:
            bad.append(f"chains[{i}] ({c.get('class', '?')}) lacks {', '.join(miss)}")
        if c.get("class") not in CLASSES:
            bad.append(f"chains[{i}] class {c.get('class')!r} is not a contract class")
        if c.get("severity") not in SEV:
            bad.append(f"chains[{i}] severity {c.get('severity')!r}")
        imp = c.get("impact")
        if imp is not None and not (isinstance(imp, (int, float)) and 0 <= imp <= 1):
            bad.append(f"chains[{i}] impact {imp!r} is not a fraction 0..1")
    if not ordered(chains):
        bad.append("chains[] are not ordered by impact (active first, INFO after the others)")
    proc = next((p for p in s.get("procs", []) if p.get("pid") == pid), None)
    if proc is None:
        bad.append(f"procs[] has no pid {pid}")
    elif not isinstance(proc.get("time"), dict):
        bad.append(f"procs[pid {pid}] has no time{{}}")
    else:
        tm = proc["time"]
        miss = [f for f in ("wall_ns", "tid", "parts") if f not in tm]
        miss += [f"parts.{p}" for p in PARTS if p not in tm.get("parts", {})]
        if miss:
            bad.append(f"procs[pid {pid}].time lacks {', '.join(miss)}")
    return bad


class Result:
    def __init__(self, name):
        self.name = name
        self.lines = []  # (kind, text): kind ok | FAIL | note
        self.contract = []
        self.true_top = None
        self.reported_top = None
        self.errors = {}  # class -> reported impact - true share (live)
        self.truth = {}
        self.unjudged = ""  # why the case could not be judged (the machine, not the tool)

    def add(self, ok, text):
        self.lines.append(("ok" if ok else "FAIL", text))
        return ok

    def note(self, text):
        self.lines.append(("note", text))

    @property
    def failed(self):
        return [t for k, t in self.lines if k == "FAIL"]

    @property
    def status(self):
        if self.unjudged:
            return "unjudged"
        if self.contract:
            return "contract"
        return "fail" if self.failed else "pass"

    def report(self):
        return "\n".join(f"{k:4} {t}" for k, t in self.lines)


def chain_text(c):
    return json.dumps(c, sort_keys=True)


def impact_of(chains, cls):
    """Summed impact of the chains of one class (None: a chain lacks it)."""
    mine = [c for c in chains if c.get("class") == cls]
    if any(not isinstance(c.get("impact"), (int, float)) for c in mine):
        return None
    return min(1.0, sum(c["impact"] for c in mine))


def helper_threads(t, roles):
    """{tid: comm} of the helper threads and processes in roles (a process's
    main thread: tid = pid)."""
    return {h["pid"]: h["comm"] for h in t["helpers"] if h["role"] in roles}


def names_device(r, c, t, pid, cp, cc):
    """The chain of a disk cause names its device or file system."""
    io = t["io"]
    names = [x for x in (io["disk"], io["dev"], io["fs"], io["source"]) if x]
    if io.get("mount") not in ("", "/"):
        names.append(io["mount"])
    text = chain_text(c)
    named = [n for n in names if re.search(r"(?<![\w/:])" + re.escape(n) + r"(?![\w:])", text)]
    ok = r.add(cp == pid, f"culprit {cc}[{cp}] is the process itself [{pid}]")
    return r.add(bool(named), f"the chain names the device or file system "
                              f"(one of {names}; found {named})") and ok


def check_culprit(r, c, t, disturbed):
    cls, cp, cc = c.get("class"), c.get("culprit_pid"), c.get("culprit_comm")
    ctid = c.get("culprit_tid") or 0
    pid = t["pid"]
    if cls in ("lock_wait", "gil_wait", "backpressure"):
        # the thread that let go: its tid and name, its process
        # (tid 0: a process's main thread, named by its pid)
        want = helper_threads(t, {"holder", "locker", "consumer", "pybusy"})
        return r.add(want.get(ctid or cp) == cc and cp in (pid, ctid or cp),
                     f"culprit thread {cc} (tid {ctid}) of [{cp}] is one of {sorted(want.items())}")
    if cls == "stopped":
        # the process that let it go on: the stopper's SIGCONT, the tracer
        # and the words say how: a tracer's ptrace stops, or signals
        want = helper_threads(t, {"stopper", "tracer"})
        how = {"stop-signal": "stopped by signals", "stop-ptrace": "stopped by a tracer"}
        words = [how[m["name"]] for m in t.get("mechs", []) if m["name"] in how]
        said = c.get("summary", "")
        return r.add(want.get(cp) == cc and not ctid and any(said.startswith(w) for w in words),
                     f"culprit {cc}[{cp}] is the process that stopped it {sorted(want.items())}, "
                     f"worded {words}: {said[:60]}")
    if cls == "net_wait":
        ports = [m["port"] for m in t.get("mechs", []) if m.get("port")]
        text = chain_text(c)
        named = [p for p in ports if f"127.0.0.1:{p}" in text]
        return r.add(bool(named), f"the chain names the peer 127.0.0.1:{ports}")
    if cls in ("file_io", "cold_read"):
        ok = names_device(r, c, t, pid, cp, cc)
        aio = any(m["name"] in ("file-aio", "file-uring") for m in t.get("mechs", []))
        said = c.get("summary", "")
        if cls == "file_io" and (aio or "asynchronous" in said):
            # waits for asynchronous I/O are worded so, and only those
            ok = r.add(aio == ("asynchronous reads and writes" in said),
                       f"asynchronous I/O worded so ({aio}): {said[:80]}") and ok
        return ok
    if cls == "cpu_contention" and t.get("own_hogs"):
        return r.add(cp == pid, f"culprit {cc}[{cp}] is the process itself: its own threads")
    if cls == "cpu_contention":
        hogs = helpers_of(t, "hog")
        if not hogs:
            return r.add(cp not in (None, pid) and disturbed,
                         f"culprit {cc}[{cp}]: preempted by outside load (no hogs in this case)")
        return r.add(hogs.get(cp) == cc, f"culprit {cc}[{cp}] is a hog {sorted(hogs.items())}")
    if cls == "loader_wait":
        # a program it ran each step and waited for (a new child each time):
        # one of those children by name, and the words say so
        kids = {"child-fork": t.get("comm"), "child-spawn": "sleep"}
        kid = [kids[m["name"]] for m in t.get("mechs", []) if m["name"] in kids]
        if kid:
            return r.add(cc in kid and cp not in (None, 0, pid) and
                         c.get("summary", "").startswith("child-process wait"),
                         f"culprit {cc}[{cp}] is a child it ran ({kid}), worded as a "
                         f"child-process wait: {c.get('summary', '')[:80]}")
        # a worker process by pid and name, or a producer thread of its own by name
        procs = {h["pid"]: h["comm"] for h in t["helpers"]
                 if h["role"] in ("loader", "producer") and not h.get("thread")}
        thrs = {h["comm"] for h in t["helpers"] if h["role"] == "producer" and h.get("thread")}
        ok = procs.get(cp) == cc or (cp == pid and cc in thrs)
        return r.add(ok, f"culprit {cc}[{cp}] is a producer {sorted(procs.items())} "
                         f"or a thread of its own {sorted(thrs)}")
    if cls == "block_io":
        return names_device(r, c, t, pid, cp, cc)
    if cls == "cpu_quota" and t.get("quota", {}).get("path"):
        # the culprit is the cgroup and its quota: named, with the file to raise
        q = t["quota"]
        text = chain_text(c)
        knob = "cpu.max" if q.get("v2") else "cpu.cfs_quota_us"
        cpus = f"{q['pct'] / 100:.2f} CPU"
        ok = r.add(cp in (0, pid), f"culprit {cc}[{cp}] is none or the process itself")
        return r.add(q["path"] in text and cpus in text and f"{q['path']}/{knob}" in text,
                     f"the chain names the cgroup {q['path']}, its {cpus} and {knob}") and ok
    if cls == "page_faults":
        # worded by mechanism: pages shared with a child it forked, copied
        # on write, or fresh memory
        cow = any(m["name"] == "cow-fork" for m in t.get("mechs", []))
        said = c.get("summary", "")
        ok = r.add(cp in (0, pid), f"culprit {cc}[{cp}] is none or the process itself")
        want = "copy-on-write faults in" if cow else "faulting in fresh memory"
        return r.add(want in said, f"worded \"{want}\": {said[:70]}") and ok
    if cls in SELF_CULPRIT:
        return r.add(cp in (0, pid), f"culprit {cc}[{cp}] is none or the process itself")
    return r.add(False, f"class {cls} has no culprit rule")


def check_parts(r, s, t, W):
    proc = next((p for p in s.get("procs", []) if p.get("pid") == t["pid"]), None)
    tm = proc.get("time") if proc else None
    if not isinstance(tm, dict) or not isinstance(tm.get("parts"), dict):
        return
    parts, wall = tm["parts"], tm.get("wall_ns") or 0
    r.add(tm.get("tid") == t["tid"], f"parts: feeding thread tid {tm.get('tid')} "
                                     f"(want {t['tid']})")
    if not wall or any(not isinstance(parts.get(p), (int, float)) for p in PARTS):
        r.add(False, "parts: wall_ns or a part is not a number")
        return
    total = sum(parts[p] for p in PARTS)
    r.add(abs(total - wall) <= PARTS_SUM_TOL * wall,
          f"parts add up to {total} of wall_ns {wall}")
    r.add(0.8 * W <= wall <= W + 3e9, f"parts: wall_ns {wall / 1e9:.2f} s "
                                      f"(workload {W / 1e9:.2f} s)")
    # Preempted inside a call or just after it is one part here: the
    # workload ends a phase by reading its own clocks (thread CPU time, a
    # system call that updates the scheduler's accounting), which is where
    # the scheduler most often preempts it, a few microseconds after the
    # call returned; its phase counts that wait, the trace rightly puts it
    # after the call.
    merged = {"preempted": ("call_preempted", "preempted")}
    for p in PARTS:
        if p == "call_preempted":
            continue
        group = merged.get(p, (p,))
        got = sum(parts[q] for q in group) / wall
        want = sum(t["parts"].get(q, 0) for q in group) / W  # older truths lack the new parts
        r.add(abs(got - want) <= IMPACT_TOL, f"part {'+'.join(group)} {pct(got)} "
                                             f"(workload {pct(want)})")


def check_replay(r, live, replay):
    def key(c):
        return (c.get("class"), c.get("culprit_pid"), c.get("pid"))

    lc = {key(c): c for c in live.get("chains", [])}
    rc = {key(c): c for c in replay.get("chains", [])}
    r.add(sorted(lc, key=str) == sorted(rc, key=str),
          f"replay: the same chains as live ({len(rc)} vs {len(lc)})")
    for k in sorted(set(lc) & set(rc), key=str):
        a, b = lc[k], rc[k]
        same = a.get("severity") == b.get("severity")
        ia, ib = a.get("impact"), b.get("impact")
        if isinstance(ia, (int, float)) and isinstance(ib, (int, float)):
            same = same and abs(ia - ib) <= REPLAY_TOL
        elif ia is not None or ib is not None:
            same = False
        r.add(same, f"replay: {k[0]} culprit [{k[1]}]: {b.get('severity')} {ib} "
                    f"(live {a.get('severity')} {ia})")


def check_case(name, truth, live, replay=None, intended=(), healthy=False):
    """All assertions for one case; returns a Result. live/replay: summaries."""
    r = Result(name)
    t = truth
    W = t["wall_ns"]
    causes = truth_causes(t)
    r.truth = causes
    for p in truth_problems(t):
        r.add(False, f"truth: {p}")
    hogs = helpers_of(t, "hog")
    disturbed = not hogs and not t.get("own_hogs") and causes["cpu_contention"] > DISTURBED
    if disturbed:
        r.note(f"disturbed: {pct(causes['cpu_contention'])} preempted by outside load "
               f"(no hogs in this case); judged against the measure")
    # the largest cause is the largest problem: waiting for a busy GPU is the
    # healthy state, a loop paced by its own timer idle by design (INFO): the
    # top chain only when nothing else reaches LOW
    ranked = sorted(causes.items(), key=lambda kv: (kv[0] in INFO_CLASSES, -kv[1]))
    if ranked[0][1] < SEV_LOW:
        ranked = sorted(causes.items(), key=lambda kv: -kv[1])
    r.true_top = ranked[0][0]
    r.note("truth: " + ", ".join(f"{c} {pct(v)}" for c, v in ranked if v >= 0.005))

    r.contract = contract_problems(live, t["pid"])
    for p in r.contract:
        r.add(False, f"contract: {p}")
    chains = live.get("chains") or []
    for c in chains:
        r.note(f"live {c.get('severity', '?'):6} {c.get('class')} impact {c.get('impact')} "
               f"{c.get('comm', '')}[{c.get('pid')}] culprit "
               f"{c.get('culprit_comm')}[{c.get('culprit_pid')}]")
    for c in chains:
        if c.get("pid") != t["pid"]:
            r.add(False, f"a {c.get('class')} chain for pid {c.get('pid')}, not the workload's "
                         f"{t['pid']}")

    # the top chain is the largest cause, with the right culprit
    top = chains[0] if chains else None
    r.reported_top = top.get("class") if top else "none"
    if top is None:
        r.add(r.true_top == "gpu_bound", f"no chains; the largest cause is {r.true_top} "
                                         f"{pct(ranked[0][1])}")
    else:
        tc = top.get("class")
        got = causes.get(tc)
        ok = tc == r.true_top or (got is not None and got >= ranked[0][1] - TIE)
        r.add(ok, f"top chain {tc} ({pct(got) if got is not None else 'not measured'}); "
                  f"the largest cause is {r.true_top} {pct(ranked[0][1])}"
                  + (" (tie)" if ok and tc != r.true_top else ""))
        if top.get("pid") == t["pid"]:
            r.add(top.get("tid") == t["tid"], f"top chain tid {top.get('tid')} "
                                              f"(feeding thread {t['tid']})")
        if tc in CLASSES:
            check_culprit(r, top, t, disturbed)

    # impacts: the intended causes, the largest one, every class with a chain
    judged = set(intended) | {r.true_top} | {c.get("class") for c in chains}
    for cls in sorted(judged & set(causes)):
        imp = impact_of(chains, cls)
        if imp is None:
            r.add(False, f"impact of {cls}: a chain has no impact (workload {pct(causes[cls])})")
            continue
        r.errors[cls] = imp - causes[cls]
        r.add(abs(imp - causes[cls]) <= IMPACT_TOL,
              f"impact of {cls} {pct(imp)} (workload {pct(causes[cls])}, ± {pct(IMPACT_TOL)})")

    # quiet causes stay INFO; healthy loops stay at or below LOW
    for c in chains:
        cls, sev = c.get("class"), c.get("severity")
        share = causes.get(cls, 0.0)
        if cls in causes and share < QUIET:
            r.add(SEV.get(sev, 9) <= SEV["INFO"],
                  f"{cls} at {pct(share)} of wall time raises {sev} (at most INFO)")
        if cls == "cold_start":
            r.add(sev == "INFO", f"cold_start is {sev} (always INFO)")
    if healthy:
        sick = {c: v for c, v in causes.items() if c != "gpu_bound" and v >= 0.10}
        if sick:
            r.note(f"healthy by design, but the measure says {sick}: healthy rule not applied")
        else:
            for c in chains:
                r.add(SEV.get(c.get("severity"), 9) <= SEV["LOW"],
                      f"healthy loop: {c.get('class')} is {c.get('severity')} (at most LOW)")

    check_parts(r, live, t, W)
    if replay is not None:
        check_replay(r, live, replay)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", required=True)
    ap.add_argument("--live", required=True)
    ap.add_argument("--replay")
    ap.add_argument("--case", default="case")
    ap.add_argument("--intended", action="append", default=[])
    ap.add_argument("--healthy", action="store_true")
    a = ap.parse_args()
    try:
        truth = json.load(open(a.truth))
    except (OSError, ValueError) as e:
        print(f"FAIL truth: cannot read {a.truth}: {e}")
        return 1
    live, why = summary_of(a.live)
    if live is None:
        print(f"FAIL live: {why}")
        return 1
    replay = None
    if a.replay:
        replay, why = summary_of(a.replay)
        if replay is None:
            print(f"FAIL replay: {why}")
            return 1
    r = check_case(a.case, truth, live, replay, a.intended, a.healthy)
    print(r.report())
    print(f"{a.case}: {r.status}")
    return 0 if r.status == "pass" else 1


if __name__ == "__main__":
    sys.exit(main())
