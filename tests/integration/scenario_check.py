#!/usr/bin/env python3
"""Checks the diagnosis of one demo scenario (tests/integration/scenario.sh).

Reads the live summary (--batch --summary --json), the summary of the replay
of its recording, the recording itself (causal_chains, every chain the run
recorded, also those resolved before the end) and the demo's -v log (which
pids are the scenario's). Prints one "ok"/"FAIL" line per check, exits 1 when
one failed.

  scenario_check.py --live L.json --replay R.json --db REC.db --log LIVE.err
      --class C --op OP --comm RE --severity SEV [--culprit KIND]
      [--evidence KEY>=V ...] [--forbid CLASS ...] [--summary RE]
      [--max-severity SEV] [--children-preempt-each-other RE] [--skip CLASS]
      [--allow CLASS]
      [--period-calls OP:N] [--measured KEY:TOL] [--measured-band KEY>=V]
      [--severity-from-impact]

--culprit: none (culprit_pid 0), self (the process itself), helper:COMM (a
helper the demo started, by comm), child:RE (a child of the process whose
chain-reported comm matches RE).

--period-calls OP:N: the top chain's period_ns evidence, in calls of OP (its
lifetime rate in the live summary), is N within 30 %: a period measured in
the run's own time, whatever the machine's speed.

--measured KEY:TOL: the top chain's impact_pct is within TOL points of
KEY=V, the share the scenario's main program measured of its own time by
its own clocks and printed at its end ("trainer: pid=PID ... KEY=V"): the
diagnosis judged against the workload's ground truth, as the sweep judges
it (tests/sweep/README.md), not against a number that depends on the
machine's disk or CPU. --measured-band KEY>=V: that measure is in the band
the workload sizes itself for (else the workload, not ingero-top, failed).

--severity-from-impact: the top chain's severity is the one the documented
thresholds (docs/detection.md: LOW from 5 %, MEDIUM from 15 %, HIGH from
30 %) give its own impact_pct (either side within 0.5 points of one).
"""
import argparse
import json
import re
import sqlite3
import sys

SEV = {"INFO": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3}
# docs/detection.md: severity follows impact (the detector's sev_low,
# sev_medium, sev_high); HIGH needs a named culprit and a confirmed split
SEV_FROM = [(30.0, "HIGH"), (15.0, "MEDIUM"), (5.0, "LOW"), (0.0, "INFO")]
fails = 0


def ok(msg):
    print("ok   " + msg)


def bad(msg):
    global fails
    fails += 1
    print("FAIL " + msg)


def check(cond, msg):
    (ok if cond else bad)(msg)
    return cond


def summary_of(path, what):
    try:
        lines = [l for l in open(path).read().splitlines() if l.startswith("{")]
    except OSError as e:
        bad(f"{what}: cannot read {path}: {e}")
        return None
    for l in reversed(lines):
        try:
            d = json.loads(l)
        except ValueError as e:
            bad(f"{what}: a line is not JSON: {e}")
            return None
        if d.get("type") == "summary":
            return d
    bad(f"{what}: no summary line in {path}")
    return None


def demo_pids(path):
    """pid -> (program, role) from the demo's -v log lines."""
    pids = {}
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return pids
    for m in re.finditer(r"demo \S+: (\S+)\[(\d+)\] (traced \(main\)|traced|helper)", text):
        pids[int(m.group(2))] = (m.group(1).split("/")[-1], m.group(3))
    return pids


def foreign(c, pids):
    """Says when a chain's culprit is no process of the scenario: load from
    elsewhere on the machine (another test run, a build) that the tool saw
    rightly. The check still fails: rerun on a quiet machine."""
    cp = c.get("culprit_pid", 0)
    if cp and cp not in pids:
        print(f"     note: culprit {c.get('culprit_comm')}[{cp}] is no process the demo "
              f"started: other load on its CPU? rerun when the machine is quiet")


def measured(path, pid):
    """KEY=VALUE numbers of the summary line the main program printed about
    itself ("trainer: pid=PID ..."), {} when there is none."""
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return {}
    for line in text.splitlines():
        if re.match(rf"\S+: pid={pid}( |$)", line):
            return {k: float(v) for k, v in re.findall(r"(\w+)=(-?[\d.]+)(?= |$)", line)}
    return {}


def severities_of(impact):
    """The severities the thresholds allow for an impact in %: one, or the
    two either side of a threshold it is within 0.5 points of."""
    ok = set()
    for d in (-0.5, 0, 0.5):
        ok.add(next(s for t, s in SEV_FROM if impact + d >= t))
    return ok


def chain_key(c):
    return (c["id"], c["class"], c["severity"], c["max_severity"], c["op"], c["pid"],
            c["culprit_pid"], c["summary"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--live", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--class", dest="cls", required=True)
    ap.add_argument("--op", required=True, help="op of the top chain ('' for none)")
    ap.add_argument("--comm", required=True, help="regex for the process name in the chain")
    ap.add_argument("--severity", required=True, help="minimum severity of the top chain")
    ap.add_argument("--max-severity", default="HIGH", help="maximum severity of the top chain")
    ap.add_argument("--culprit", default="none")
    ap.add_argument("--evidence", action="append", default=[])
    ap.add_argument("--skip", action="append", default=[],
                    help="a class not taken for the top chain (an INFO state beside the cause)")
    ap.add_argument("--allow", action="append", default=[],
                    help="a class that may rise above LOW beside the cause (a real second cause)")
    ap.add_argument("--forbid", action="append", default=[],
                    help="a class that must not appear at all, at any severity")
    ap.add_argument("--summary", default=None, help="regex the top chain's summary must match")
    ap.add_argument("--children-preempt-each-other", dest="children", default=None,
                    help="regex: at least two children of the process are preempted mostly "
                         "by another child matching it (workers on too few cores)")
    ap.add_argument("--period-calls", dest="period_calls", default=None,
                    help="OP:N: the period_s evidence is N calls of OP (within 30 %%)")
    ap.add_argument("--measured", default=None,
                    help="KEY:TOL: impact_pct within TOL points of the main program's KEY=V")
    ap.add_argument("--measured-band", dest="band", action="append", default=[],
                    help="KEY>=V: the main program's own measure is in its band")
    ap.add_argument("--severity-from-impact", dest="sev_impact", action="store_true",
                    help="the top chain's severity is the one its impact gives")
    a = ap.parse_args()

    live = summary_of(a.live, "live")
    replay = summary_of(a.replay, "replay")
    pids = demo_pids(a.log)
    main_pids = [p for p, (_, r) in pids.items() if r == "traced (main)"]
    helpers = {p: prog for p, (prog, r) in pids.items() if r == "helper"}
    if not check(len(main_pids) == 1, f"the demo log names its main process: {pids}"):
        return 1
    main_pid = main_pids[0]
    if not live:
        return 1

    st = live["status"]
    check(st.get("drops_kernel", 0) == 0 and st.get("drops_user", 0) == 0
          and st.get("record_dropped", 0) == 0,
          f"live: no events dropped (kernel {st.get('drops_kernel')}, user {st.get('drops_user')}, "
          f"recording {st.get('record_dropped')}; the reader waited for the recording's writer "
          f"{st.get('record_waits')} times, {st.get('record_wait_ns', 0) / 1e9:.2f} s)")
    chains = live["chains"]
    if not check(len(chains) > 0, "live: the summary lists chains"):
        return 1
    for c in chains:
        print(f"     live {c['severity']:6} {c['id']} {c['class']} {c['op']} "
              f"{c['comm']}[{c['pid']}] culprit {c['culprit_comm']}[{c['culprit_pid']}]: "
              f"{c['summary']}")

    # --- the top chain: class, op, process, culprit, severity -----------------------
    # CPU contention by a task that is neither the scenario's nor the tracer
    # that runs it (its parent) is load from elsewhere on a shared machine:
    # seen rightly, noted, and passed over for the top chain, as the chains
    # beside it are below (the sweep judges such runs against the outside
    # load the same way); the scenario's own cause is judged
    procs = {p["pid"]: p for p in live["procs"]}
    tracer = procs.get(main_pid, {}).get("ppid", 0)

    def outside_load(c):
        return (a.cls != "cpu_contention" and c["class"] == "cpu_contention" and
                c["culprit_pid"] not in pids and c["culprit_pid"] not in (main_pid, tracer))

    for c in chains:
        if c["class"] in a.skip:
            continue
        if not outside_load(c):
            break
        print(f"     note {c['id']} cpu_contention {c['severity']} by {c['culprit_comm']}"
              f"[{c['culprit_pid']}], no process of the scenario nor its tracer: load from "
              f"outside, passed over for the top chain (a quiet machine has none)")
    top = next((c for c in chains if c["class"] not in a.skip and not outside_load(c)),
               chains[0])
    check(top["class"] == a.cls, f"top chain class {top['class']} (want {a.cls})")
    if a.op != "*":
        check(top["op"] == a.op, f"top chain op '{top['op']}' (want '{a.op}')")
    check(top["pid"] == main_pid, f"top chain process pid {top['pid']} (want the demo's {main_pid})")
    check(re.fullmatch(a.comm, top["comm"]) is not None,
          f"top chain process comm {top['comm']} (want /{a.comm}/)")
    check(SEV[a.severity] <= SEV[top["severity"]] <= SEV[a.max_severity],
          f"top chain severity {top['severity']} (want {a.severity}..{a.max_severity})")
    check(top["active"], "top chain is active at the end")
    cp, cc = top["culprit_pid"], top["culprit_comm"]
    kind, _, arg = a.culprit.partition(":")
    if kind == "none":
        check(cp == 0, f"top chain has no culprit (got {cc}[{cp}])")
    elif kind == "self":
        check(cp == main_pid, f"culprit {cc}[{cp}] is the process itself [{main_pid}]")
    elif kind == "helper":
        check(cp in helpers and cc == arg,
              f"culprit {cc}[{cp}] is a helper {arg} the demo started {sorted(helpers)}")
    elif kind == "child":
        procs = {p["pid"]: p for p in live["procs"]}
        check(re.fullmatch(arg, cc) is not None and cp in procs and
              procs[cp]["ppid"] == main_pid,
              f"culprit {cc}[{cp}] is a child /{arg}/ of [{main_pid}]")
    else:
        bad(f"unknown --culprit {a.culprit}")
    if a.summary:
        check(re.search(a.summary, top["summary"]) is not None,
              f"top chain summary matches /{a.summary}/")
    for e in a.evidence:
        m = re.fullmatch(r"(\w+)(>=|<=)([-\d.]+)", e)
        if not m:
            bad(f"bad --evidence {e}")
            continue
        k, op, v = m.group(1), m.group(2), float(m.group(3))
        got = top["evidence"].get(k)
        check(got is not None and (got >= v if op == ">=" else got <= v),
              f"top chain evidence {k} = {got} ({op} {v})")

    truth = measured(a.log, main_pid) if a.measured or a.band else {}
    if (a.measured or a.band) and not truth:
        bad(f"the main program [{main_pid}] printed no measure of its own "
            f"(pid={main_pid} ... KEY=V)")
    for b in a.band:
        m = re.fullmatch(r"(\w+)(>=|<=)([-\d.]+)", b)
        if not m:
            bad(f"bad --measured-band {b}")
            continue
        k, op, v = m.group(1), m.group(2), float(m.group(3))
        got = truth.get(k)
        check(got is not None and (got >= v if op == ">=" else got <= v),
              f"the workload's own measure {k} = {got} ({op} {v}: the band it sizes itself "
              f"for; a miss is the workload's, not the diagnosis')")
    if a.measured and truth:
        k, _, tol = a.measured.partition(":")
        want, got = truth.get(k), top["evidence"].get("impact_pct")
        check(want is not None and got is not None and abs(got - want) <= float(tol),
              f"top chain impact_pct {got} within {tol} points of the workload's own "
              f"measure {k} = {want}")
    if a.sev_impact:
        imp = top["evidence"].get("impact_pct")
        allowed = severities_of(imp) if imp is not None else set()
        check(top["severity"] in allowed,
              f"top chain severity {top['severity']} is what its impact {imp} % gives "
              f"({'/'.join(sorted(allowed, key=SEV.get)) or '?'}: LOW from 5, MEDIUM from 15, "
              f"HIGH from 30)")

    if a.period_calls:
        op, _, n = a.period_calls.partition(":")
        rate = next((o["rate"] for o in live["ops"] if o["op"] == op), None)
        pns = top["evidence"].get("period_ns")
        period = pns / 1e9 if pns is not None else None
        calls = period * rate if period is not None and rate else None
        check(calls is not None and abs(calls - float(n)) <= 0.3 * float(n),
              f"top chain period {period} s x {op} rate {rate}/s = {calls} calls "
              f"(want {n} +-30 %)")

    if a.children:
        procs = {p["pid"]: p for p in live["procs"]}
        kids = [p for p in live["procs"] if p["ppid"] == main_pid]
        fighting = [p["pid"] for p in kids if p["preemptors"] and
                    re.fullmatch(a.children, p["preemptors"][0]["comm"]) and
                    p["preemptors"][0]["pid"] != p["pid"] and
                    procs.get(p["preemptors"][0]["pid"], {}).get("ppid") == main_pid]
        check(len(fighting) >= 2, f"{len(fighting)} of {len(kids)} children of [{main_pid}] are "
                                  f"preempted mostly by another child /{a.children}/")

    # --- no chain of a wrong class above LOW, at any time --------------------------
    for c in chains:
        if c["class"] != a.cls and c["class"] not in a.allow:
            if outside_load(c):
                print(f"     note {c['id']} cpu_contention by {c['culprit_comm']}"
                      f"[{c['culprit_pid']}], not the scenario's: load from outside")
                continue
            if not check(SEV[c["max_severity"]] <= SEV["LOW"],
                         f"live: {c['id']} {c['class']} stayed at or below LOW "
                         f"(max {c['max_severity']})"):
                foreign(c, pids)
        if c["class"] in a.forbid:
            bad(f"live: {c['id']} is a forbidden {c['class']} chain")
    try:
        db = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
        rows = db.execute("SELECT id, root_cause, severity, timeline FROM causal_chains "
                          "ORDER BY id").fetchall()
        db.close()
    except sqlite3.Error as e:
        bad(f"recording: cannot read causal_chains from {a.db}: {e}")
        rows = []
    check(any(r[1] == a.cls for r in rows), f"recording: holds a {a.cls} chain ({len(rows)} chains)")
    for cid, cls, sev, tl in rows:
        if cls in a.forbid:
            bad(f"recording: {cid} is a forbidden {cls} chain")
        if cls == a.cls or cls in a.allow or cls == "cpu_contention":
            continue  # live checked the culprit of contention chains
        # severity when last recorded, and every severity its timeline mentions
        # ("HIGH x detected", "severity LOW -> MEDIUM", "x again (MEDIUM)")
        said = set(re.findall(r"\b(INFO|LOW|MEDIUM|HIGH)\b", tl or "")) | {sev}
        worst = max(said, key=lambda s: SEV.get(s, 0))
        check(SEV.get(worst, 0) <= SEV["LOW"],
              f"recording: {cid} {cls} never above LOW (saw {sorted(said)})")

    # --- the replay says the same ---------------------------------------------------
    if replay:
        rc = replay["chains"]
        same = [chain_key(c) for c in chains] == [chain_key(c) for c in rc]
        if not same:
            for c in rc:
                print(f"     replay {c['severity']:6} {c['id']} {c['class']} {c['op']} "
                      f"{c['comm']}[{c['pid']}] culprit {c['culprit_comm']}[{c['culprit_pid']}]: "
                      f"{c['summary']}")
        check(same, f"replay: the same {len(rc)} chains as live (ids, classes, severities, ops, "
                    f"pids, culprits, summaries)")
        check(replay["mode"] == "replay", "replay: mode is replay")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
