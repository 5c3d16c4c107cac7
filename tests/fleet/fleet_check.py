#!/usr/bin/env python3
"""Checks the output of `ingero-top --ssh ... --batch [--json]` against
expectations (tests/integration/test_fleet_ssh.sh).

  fleet_check.py check OUT EXPECT.json [--quiet]
      OUT: the fleet's --json lines; judges the LAST fleet object. Prints
      "ok ..." / "FAIL ..." per expectation (nothing with --quiet); exit 0
      when every one holds.
  fleet_check.py text OUT EXPECT.json [--quiet]
      OUT: the text tables of --batch; judges the last complete table
      (tables end with a blank line) by the "rows" expectations.
  fleet_check.py ever OUT HOST STATE
      prints how many fleet objects had HOST in STATE.
  fleet_check.py first OUT HOST STATE
      seconds from the first fleet object to the first with HOST in STATE
      (-1 when never).
  fleet_check.py show OUT
      the last fleet object, one line per host (for the logs).

EXPECT.json:
  {"hosts": {NAME: {"state": S, "why": EXACT, "why_re": REGEX, "why_not_re": REGEX,
                    "chain": {"class": C, "severity": S, "culprit_comm": X,
                              "culprit_pid": N, "comm": X},
                    "no_high": true, "straggler": true|false}},
   "straggler": {"host": H, "rank": R, "late_min_ns": A, "late_max_ns": B}
                 or null (none may be named),
   "first": NAME (hosts[0] of the ordered list),
   "rows": {NAME: REGEX matched against the host's row(s) in text mode}}
"""
import json
import re
import sys


def fleet_objects(path):
    objs = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if o.get("type") == "fleet":
                objs.append(o)
    return objs


def by_name(obj):
    return {h.get("host"): h for h in obj.get("hosts", [])}


class Judge:
    def __init__(self, quiet):
        self.quiet, self.fails = quiet, 0

    def ok(self, cond, what):
        if not cond:
            self.fails += 1
        if not self.quiet:
            print(("ok   " if cond else "FAIL ") + what)


def check_host(j, name, h, want):
    if h is None:
        j.ok(False, "%s: not in the fleet's hosts" % name)
        return
    line = "%s: state %s, why %r" % (name, h.get("state"), h.get("why"))
    if "state" in want:
        j.ok(h.get("state") == want["state"], "%s (want state %s)" % (line, want["state"]))
    if "why" in want:
        j.ok(h.get("why") == want["why"], "%s: why is exactly %r" % (name, want["why"]))
    if "why_re" in want:
        j.ok(re.search(want["why_re"], h.get("why") or "") is not None,
             "%s: why %r matches /%s/" % (name, h.get("why"), want["why_re"]))
    if "why_not_re" in want:
        j.ok(re.search(want["why_not_re"], h.get("why") or "") is None,
             "%s: why %r does not say /%s/" % (name, h.get("why"), want["why_not_re"]))
    chains = h.get("chains") or []
    if "chain" in want:
        c = chains[0] if chains else {}
        for k, v in want["chain"].items():
            j.ok(c.get(k) == v, "%s: worst chain %s = %r (want %r; chain: %s)" %
                 (name, k, c.get(k), v, c.get("summary", "none")))
    if want.get("no_high"):
        high = [c.get("summary") for c in chains if c.get("severity") == "HIGH"]
        j.ok(not high, "%s: no HIGH chain (%s)" % (name, high or "none"))
    if "straggler" in want:
        j.ok(bool(h.get("straggler")) == want["straggler"],
             "%s: marked straggler = %s (want %s)" % (name, h.get("straggler"), want["straggler"]))


def check(path, expect, quiet):
    j = Judge(quiet)
    objs = fleet_objects(path)
    if not objs:
        j.ok(False, "no fleet JSON object in %s" % path)
        return j.fails
    last = objs[-1]
    hosts = by_name(last)
    for name, want in expect.get("hosts", {}).items():
        check_host(j, name, hosts.get(name), want)
    if "first" in expect:
        first = (last.get("hosts") or [{}])[0].get("host")
        j.ok(first == expect["first"], "first host in the order: %s (want %s)" %
             (first, expect["first"]))
    if "straggler" in expect:
        st, want = last.get("straggler"), expect["straggler"]
        if want is None:
            j.ok(st is None, "no straggler named (%s)" % st)
        elif st is None:
            j.ok(False, "straggler: none named (want %s rank %s)" % (want["host"], want["rank"]))
        else:
            j.ok(st.get("host") == want["host"] and st.get("rank") == want["rank"],
                 "straggler: %s rank %s of %s, last in %s of %s collectives (want %s rank %s)" %
                 (st.get("host"), st.get("rank"), st.get("nranks"), st.get("last_count"),
                  st.get("collectives"), want["host"], want["rank"]))
            late = st.get("late_mean_ns") or 0
            j.ok(want.get("late_min_ns", 0) <= late <= want.get("late_max_ns", 1 << 62),
                 "straggler: late by %.2f ms after the others' median (want %.2f..%.2f ms; clock +-%.2f ms)" %
                 (late / 1e6, want.get("late_min_ns", 0) / 1e6,
                  want.get("late_max_ns", 0) / 1e6, (st.get("unc_ns") or 0) / 1e6))
    return j.fails


def last_table(path):
    text = open(path, errors="replace").read()
    blocks = [b for b in text.split("\n\n") if b.strip()]
    if not text.endswith("\n\n") and blocks:
        blocks = blocks[:-1]  # the last table is still being written
    return blocks[-1] if blocks else ""


def check_text(path, expect, quiet):
    j = Judge(quiet)
    table = last_table(path)
    if not table:
        j.ok(False, "no complete table in %s" % path)
        return j.fails
    for name, regex in expect.get("rows", {}).items():
        j.ok(re.search(regex, table, re.M) is not None,
             "text: a row of %s matches /%s/" % (name, regex))
    if not quiet and j.fails:
        print("the last table:\n" + table)
    return j.fails


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd in ("check", "text"):
        expect = json.load(open(sys.argv[3]))
        quiet = "--quiet" in sys.argv
        fails = (check if cmd == "check" else check_text)(path, expect, quiet)
        return 1 if fails else 0
    objs = fleet_objects(path)
    if cmd == "ever":
        print(sum(1 for o in objs if by_name(o).get(sys.argv[3], {}).get("state") == sys.argv[4]))
        return 0
    if cmd == "first":
        for o in objs:
            if by_name(o).get(sys.argv[3], {}).get("state") == sys.argv[4]:
                print("%.1f" % ((o["time_ns"] - objs[0]["time_ns"]) / 1e9))
                return 0
        print(-1)
        return 0
    if cmd == "show":
        if not objs:
            print("(no fleet object)")
            return 0
        last = objs[-1]
        print("straggler: %s" % json.dumps(last.get("straggler")))
        for h in last.get("hosts", []):
            c = (h.get("chains") or [{}])[0]
            print("  %-8s %-11s frames %-3s connects %-2s why %r chain %s %s by %s[%s]" % (
                h.get("host"), h.get("state"), h.get("frames"), h.get("connects"), h.get("why"),
                c.get("severity", "-"), c.get("class", "-"), c.get("culprit_comm", "-"),
                c.get("culprit_pid", "-")))
        return 0
    print("usage: fleet_check.py check|text|ever|first|show OUT ...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
