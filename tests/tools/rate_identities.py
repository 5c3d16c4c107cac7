#!/usr/bin/env python3
"""Checks that the rates of one --json frame share one denominator.

Reads the output of `ingero-top --replay FILE --json` (one JSON object a
line) and checks every frame (issue 28, "rates with different denominators
in the first window"):

  * the frame says its denominator: window_span_ns, the event time the
    window covers (min(window, time since the first event));
  * per op: rate x span = calls_win;
  * per op that moved bytes: bytes_per_s x span = bytes_win, and the
    bytes per call times the rate is bytes_per_s;
  * the op rows of every process and the process rows count the same calls
    at the same rate: the sum of the ops' rates is the sum of the
    processes' calls_per_s (and the calls_win sums agree);
  * no duration credited in the window (who preempted or woke a process:
    preemptors[].ns, wakers[].ns) is longer than the window span times the
    process's threads, and no duration a chain's words or no_chains_why say
    is "in the window" (or its feeder_wall_ns) is longer than a window
    (window_s: a chain is of the window it was judged in) times the
    threads of the busiest process.

A span under a second counts as a second (a first call is not 1000/s).
Tolerance: 0.5 % of the value or half a call (a byte count: half a call's
bytes), whichever is larger: the JSON writes 6 significant digits.
Prints one line per failure (at most 20 per recording) and exits 1 when
there is any; prints a count of what was checked otherwise.
"""
import json
import re
import sys

NS = 1e9
REL = 0.005
MAX_SHOWN = 20


def close(got, want, slack):
    return abs(got - want) <= max(REL * abs(want), slack)


UNIT = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
IN_WINDOW = re.compile(r"(?<![\w.])([0-9]+(?:\.[0-9]+)?) ?(ns|us|ms|s)\b"
                       r"((?: of [a-z' ]+?)?) in the window")


def window_texts(f):
    """(where, text) of every chain's words and of no_chains_why."""
    yield "no_chains_why", f.get("no_chains_why") or ""
    for c in f.get("chains", []):
        for k in ("summary", "explanation", "lacking"):
            yield f"{c['id']} {k}", c.get(k) or ""
        for t in c.get("timeline", []):
            yield f"{c['id']} timeline", t.get("text", "")


def check_texts(i, f, span, bad):
    """A duration said to be 'in the window' (a thread's wall time, the
    time it ran) is no longer than a window: per thread, so at most the
    window x the busiest process's threads. Evidence feeder_wall_ns
    likewise. A chain's words are of the window it was last judged in
    (at a second's end, a whole window_s), not of this frame's span."""
    threads = max([p.get("threads", 1) for p in f.get("procs", [])] + [1])
    cap = max(span, f["window_s"] * NS) * threads + 1e7
    n = 0
    for where, text in window_texts(f):
        for m in IN_WINDOW.finditer(text):
            v = float(m.group(1)) * UNIT[m.group(2)]
            n += 1
            if v > cap:
                bad.append(f"frame {i} (window {f['window_s']}s): {where}: "
                           f"{m.group(0)!r} is longer than the window")
    for c in f.get("chains", []):
        w = (c.get("evidence") or {}).get("feeder_wall_ns")
        if w is not None:
            n += 1
            if w > cap:
                bad.append(f"frame {i} (window {f['window_s']}s): {c['id']} feeder_wall_ns "
                           f"{w / NS:.2f}s is longer than the window")
    return n


def check_frame(i, f, bad):
    now, first = f["time_ns"], f["first_ns"]
    if "window_span_ns" in f:
        span = f["window_span_ns"]
    else:
        bad.append(f"frame {i}: no window_span_ns (the denominator is not said)")
        span = min(f["window_s"] * NS, now - first) if first else 0
    if first and span > now - first + 1:
        bad.append(f"frame {i}: window_span_ns {span} is more than the time since the "
                   f"first event ({now - first})")
    den = max(span, NS) / NS  # seconds
    checked = 0
    ops = f.get("ops", [])
    for o in ops:
        name, calls = o["op"], o["calls_win"]
        if not close(o["rate"] * den, calls, 0.5):
            bad.append(f"frame {i} ({(now - first) / NS:.1f}s, span {span / NS:.2f}s): {name} "
                       f"rate {o['rate']:g}/s x {den:.3f}s = {o['rate'] * den:.1f}, "
                       f"but calls_win {calls}")
        checked += 1
        if "bytes_win" in o and o["bytes_win"]:
            per_call = o["bytes_win"] / calls if calls else 0
            if not close(o["bytes_per_s"] * den, o["bytes_win"], per_call / 2):
                bad.append(f"frame {i}: {name} bytes_per_s {o['bytes_per_s']:g} x {den:.3f}s "
                           f"!= bytes_win {o['bytes_win']}")
            if not close(per_call * o["rate"], o["bytes_per_s"], per_call / 2 / den):
                bad.append(f"frame {i}: {name} {per_call:.0f} B/call x {o['rate']:g}/s = "
                           f"{per_call * o['rate']:.4g} B/s, but bytes_per_s "
                           f"{o['bytes_per_s']:g}")
            checked += 2
    procs = [p for p in f.get("procs", []) if p.get("cuda")]
    if ops and procs:
        op_rate = sum(o["rate"] for o in ops)
        proc_rate = sum(p["calls_per_s"] for p in procs)
        op_calls = sum(o["calls_win"] for o in ops)
        proc_calls = sum(p["calls_win"] for p in procs)
        if op_calls == proc_calls and not close(op_rate, proc_rate, 0.5 / den):
            bad.append(f"frame {i} ({(now - first) / NS:.1f}s): the ops' rates add up to "
                       f"{op_rate:.1f}/s, the processes' to {proc_rate:.1f}/s "
                       f"({op_calls} calls in the window on both sides)")
        checked += 1
    for p in f.get("procs", []):
        cap = max(span, NS) * max(1, p.get("threads", 1))
        for what in ("preemptors", "wakers"):
            for c in p.get(what, []):
                if c["ns"] > cap + 1e6:
                    bad.append(f"frame {i} ({(now - first) / NS:.1f}s, span {span / NS:.2f}s): "
                               f"{p['comm']}[{p['pid']}] {what[:-1]} {c['comm']}[{c['pid']}] "
                               f"{c['ns'] / NS:.2f}s in the window, more than span x "
                               f"{max(1, p.get('threads', 1))} threads")
                checked += 1
    return checked + check_texts(i, f, span, bad)


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "-"
    bad, frames, checked = [], 0, 0
    for i, line in enumerate(sys.stdin):
        f = json.loads(line)
        if f.get("type") != "frame":
            continue
        frames += 1
        checked += check_frame(i, f, bad)
    for b in bad[:MAX_SHOWN]:
        print(f"FAIL {name}: {b}")
    if len(bad) > MAX_SHOWN:
        print(f"FAIL {name}: ... and {len(bad) - MAX_SHOWN} more")
    if not frames:
        print(f"FAIL {name}: no frame")
        return 1
    if bad:
        return 1
    print(f"ok   {name}: {frames} frames, {checked} identities")
    return 0


if __name__ == "__main__":
    sys.exit(main())
