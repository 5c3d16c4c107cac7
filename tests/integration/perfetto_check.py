#!/usr/bin/env python3
"""Structural check of an `ingero-top export --perfetto` file (Chrome
trace-event JSON), for tests/integration/test_perfetto.sh.

    perfetto_check.py TRACE.json [--expect KEY=N ...] [--since NS] [--until NS]
                      [--pids P,P] [--nodes N]

Checks: the file is one valid JSON object with traceEvents (and no
displayTimeUnit); every event has
ph, name, pid and tid (ints) and, but metadata, a ts; every complete slice
("X") has a dur >= 0; on each thread track the slices are nested or
disjoint; top-level strings need no JSON escape and no top-level value is
an array (Perfetto's tokenizer reads those keys itself); every track with
slices has a thread_name and every pid with
events a process_name; every flow start ("s") has exactly one flow end
("f", bp "e") with the same id, later in time, each inside a slice of its
own track; otherData.counts agree with what the file holds. --expect
KEY=N: the number of calls (cat cuda), offcpu, flows, chains, instants,
counters must be N. --since/--until (Unix ns): every slice overlaps the
range. --pids: every cuda/offcpu slice belongs to one of them (real pids).
--nodes N: the real pids of N nodes live in N separate namespaces.
Prints one line per finding and a summary; exits 1 when anything is wrong."""
import collections
import json
import sys

NODE_SHIFT = 22
WAKER_BASE = 0x40000000
HOST_BASE = 0x7F000000

bad = []


def fail(msg):
    if len(bad) < 40:
        print("FAIL " + msg)
    bad.append(msg)


def main():
    args = sys.argv[1:]
    path = args.pop(0)
    expect, since, until, pids, nodes = {}, None, None, None, None
    while args:
        a = args.pop(0)
        if a == "--expect":
            k, v = args.pop(0).split("=")
            expect[k] = int(v)
        elif a == "--since":
            since = int(args.pop(0))
        elif a == "--until":
            until = int(args.pop(0))
        elif a == "--pids":
            pids = {int(p) for p in args.pop(0).split(",")}
        elif a == "--nodes":
            nodes = int(args.pop(0))
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("not an object with a traceEvents array")
        return finish()
    if "displayTimeUnit" in doc:
        fail("displayTimeUnit present (some Perfetto versions read ts in that unit)")
    evs = doc["traceEvents"]
    base = doc["otherData"]["ts_base_unix_ns"]
    counts = doc["otherData"]["counts"]

    slices = collections.defaultdict(list)  # (pid, tid) -> [(start, end, name)]
    flows_s, flows_f = {}, {}
    names_t, names_p, used_p = set(), set(), set()
    by_cat = collections.Counter()
    for i, e in enumerate(evs):
        for k in ("ph", "name", "pid", "tid"):
            if k not in e:
                fail(f"event {i} has no {k}: {e}")
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            fail(f"event {i}: pid/tid not integers")
            continue
        if not isinstance(e.get("name"), str) or not e["name"]:
            fail(f"event {i}: empty name")
        # Perfetto's tokenizer reads the top-level keys itself: no arrays,
        # and strings without escapes (it aborts the whole file otherwise)
        for k, v in e.items():
            if isinstance(v, list):
                fail(f"event {i}: top-level array {k}")
            if isinstance(v, str) and any(c in '"\\' or not " " <= c <= "~" for c in v):
                fail(f"event {i}: top-level {k} {v!r} needs an escape")
        ph = e["ph"]
        if ph == "M":
            nm = e.get("args", {}).get("name")
            if not nm:
                fail(f"metadata {i} without args.name")
            if e["name"] == "thread_name":
                names_t.add((e["pid"], e["tid"]))
            elif e["name"] == "process_name":
                names_p.add(e["pid"])
            continue
        if not isinstance(e.get("ts"), (int, float)):
            fail(f"event {i}: no numeric ts")
            continue
        # timestamps on the 1/8 us grid: exact
        if (e["ts"] * 8) != int(e["ts"] * 8):
            fail(f"event {i}: ts {e['ts']} not on the 1/8 us grid")
        used_p.add(e["pid"])
        t8 = int(e["ts"] * 8)
        if ph == "X":
            d = e.get("dur")
            if not isinstance(d, (int, float)) or d < 0:
                fail(f"slice {i}: bad dur {d}")
                continue
            by_cat[e.get("cat")] += 1
            slices[(e["pid"], e["tid"])].append((t8, t8 + int(d * 8), e["name"]))
            if e.get("cat") in ("cuda", "offcpu"):
                check_range(i, e, base, since, until)
                if pids is not None and e["pid"] & ((1 << NODE_SHIFT) - 1) not in pids:
                    fail(f"slice {i} of pid {e['pid']} outside --pids")
        elif ph in ("s", "f"):
            tab = flows_s if ph == "s" else flows_f
            if e["id"] in tab:
                fail(f"flow id {e['id']}: two '{ph}' events")
            tab[e["id"]] = (e["pid"], e["tid"], t8, e)
        elif ph == "i":
            by_cat[e.get("cat")] += 1
        elif ph == "C":
            by_cat["counter"] += 1
        else:
            fail(f"event {i}: unexpected ph {ph}")

    # nested or disjoint, per thread track
    for track, sl in slices.items():
        sl.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for s, en, name in sl:
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack and en > stack[-1][1]:
                fail(f"track {track}: {name} [{s},{en}] overlaps {stack[-1][2]} "
                     f"[{stack[-1][0]},{stack[-1][1]}] partially")
            stack.append((s, en, name))
        if track not in names_t:
            fail(f"track {track} has slices but no thread_name")
    for p in used_p:
        if p not in names_p:
            fail(f"pid {p} has events but no process_name")

    # flows: paired, ordered, each end inside a slice of its track
    def inside(track, t8):
        return any(s <= t8 < en or (s == en == t8) for s, en, _ in slices.get(track, ()))

    for fid, (pid, tid, t8, e) in flows_s.items():
        if fid not in flows_f:
            fail(f"flow {fid}: start without end")
            continue
        fp, ft, f8, fe = flows_f[fid]
        if fe.get("bp") != "e":
            fail(f"flow {fid}: end without bp e")
        if f8 <= t8:
            fail(f"flow {fid}: ends at {f8}, not after its start {t8}")
        if not inside((pid, tid), t8) or not inside((fp, ft), f8):
            fail(f"flow {fid}: an end is not inside a slice of its track")
        if e.get("cat") != fe.get("cat") or e.get("name") != fe.get("name"):
            fail(f"flow {fid}: start and end differ in cat or name")
    for fid in flows_f:
        if fid not in flows_s:
            fail(f"flow {fid}: end without start")

    got = {"calls": by_cat["cuda"], "offcpu": by_cat["offcpu"], "flows": len(flows_s),
           "chains": by_cat["chain"], "instants": by_cat["process"],
           "counters": by_cat["counter"]}
    for k, v in got.items():
        if counts.get(k) != v:
            fail(f"otherData.counts.{k} = {counts.get(k)}, the file holds {v}")
    if by_cat["wakeup"] != len(flows_s):
        fail(f"{by_cat['wakeup']} wake-up slices for {len(flows_s)} flows")
    for k, v in expect.items():
        if got.get(k) != v:
            fail(f"{k}: {got.get(k)} in the file, want {v}")
        else:
            print(f"ok   {k} = {v}")

    if nodes is not None:
        real = collections.defaultdict(set)
        for (pid, tid) in slices:
            if pid < WAKER_BASE:
                real[pid >> NODE_SHIFT].add(pid & ((1 << NODE_SHIFT) - 1))
        if len(real) != nodes:
            fail(f"slices in {len(real)} pid namespaces, want {nodes}")
    nslices = sum(len(v) for v in slices.values())
    print(f"{path}: {len(evs)} events, {nslices} slices on {len(slices)} tracks, "
          f"{len(flows_s)} flows, {len(names_p)} processes")
    return finish()


def check_range(i, e, base, since, until):
    start = base + round(e["ts"] * 1000)
    end = start + round(e["dur"] * 1000)
    slack = 125  # the grid
    if since is not None and end + slack < since:
        fail(f"slice {i} ends before --since")
    if until is not None and start - slack > until:
        fail(f"slice {i} starts after --until")


def finish():
    if bad:
        print(f"{len(bad)} problem(s)")
        return 1
    print("structure ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
