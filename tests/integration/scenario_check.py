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
      [--period-calls OP:N]

--culprit: none (culprit_pid 0), self (the process itself), helper:COMM (a
helper the demo started, by comm), child:RE (a child of the process whose
chain-reported comm matches RE).

--period-calls OP:N: the top chain's period_ns evidence, in calls of OP (its
lifetime rate in the live summary), is N within 30 %: a period measured in
the run's own time, whatever the machine's speed.
"""
import argparse
import json
import re
import sqlite3
import sys

SEV = {"INFO": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3}
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
    top = next((c for c in chains if c["class"] not in a.skip), chains[0])
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
            if c["class"] == "cpu_contention" and c["culprit_pid"] not in pids and \
                    c["culprit_pid"] != main_pid:
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
