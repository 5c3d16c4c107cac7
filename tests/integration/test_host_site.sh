#!/usr/bin/env bash
# needs: root
# The call site of host work (docs/detection.md, "The call site of host
# work"): a thread that makes CUDA calls, caught by the 100 Hz tick running
# its own code between calls, has its stack sampled; the host_work chain
# carries where it ran most. Through the real probes:
#   python  tests/progs/hostsite.py, host work in decode() (1.5 ms a step)
#           and log_step() (0.3 ms): the call site is decode()'s (busy()
#           under it), its share of the samples within 10 points of
#           decode's share of the host work it measured; recorded, the
#           replay names the same; --events lists the samples;
#   c       causegen's host phase: spin_until under main, in causegen.c (or
#           main's line alone: the site shows its first sample's stack);
#   none    the same Python loop with --no-stacks: the chain, no call site.
. "$(dirname "$0")/lib.sh"
need_root
pick_cpus 2
PY=(python3 "$ROOT/tests/progs/hostsite.py" --lib "$B/shim/libcudart.so.12" --seconds 4)

run_ig() { # NAME IG-OPTIONS... -- CMD...
	local n=$1
	shift
	timeout 120 "$IG" --json --summary --no-system-libs "$@" >"$TMP/$n.json" 2>"$TMP/$n.err"
	expect_eq "$n: exit status" "$?" 0
}
run_ig python --record "$TMP/py.db" -- taskset -c "${CPUS[1]}" "${PY[@]}" --truth "$TMP/py.truth"
"$IG" --replay "$TMP/py.db" --json --summary >"$TMP/replay.json" 2>"$TMP/replay.err"
expect_eq "replay: exit status" "$?" 0
run_ig c -- "$B/tests/progs/causegen" --seconds 3 --cpu "${CPUS[1]}" --kernels 2 \
	--kernel-us 1000 --host-us 1500 --truth "$TMP/c.truth"
run_ig none --no-stacks -- taskset -c "${CPUS[1]}" "${PY[@]}" --truth "$TMP/none.truth"
n=$("$IG" --replay "$TMP/py.db" --events 2>/dev/null | awk '$2 == "sample"' | wc -l)
[ "$n" -ge 100 ] && ok "--events lists $n samples" || bad "--events lists $n samples (want >= 100)"

python3 - "$TMP" >>"$TMP/check.txt" <<'PY'
import json, sys
tmp = sys.argv[1]
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
for name, truth in (("python", "py"), ("replay", "py"), ("c", "c"), ("none", "none")):
    s = json.loads(open(f"{tmp}/{name}.json").read().splitlines()[-1])
    t = json.load(open(f"{tmp}/{truth}.truth"))
    hw = [x for x in s["chains"] if x["pid"] == t["pid"] and x["class"] == "host_work"]
    check(bool(hw), f"{name}: a host_work chain: {[x['class'] for x in s['chains']]}")
    if not hw:
        continue
    site = hw[0].get("call_site") or []
    pct = hw[0]["evidence"].get("call_site_pct")
    if name == "none":
        check(not site and pct is None, f"{name}: no call site without stacks: {site}")
    elif name == "c":
        # the site's stack is its first sample's: one whose walk skipped a
        # frame (the vDSO's clock_gettime keeps no frame pointer) shows main's
        # line, not spin_until's
        check(site and (site[0].startswith("spin_until") or site[0].startswith("main+")) and
              "causegen.c:" in " ".join(site),
              f"{name}: call site spin_until or its call in main, causegen.c: {site}")
    else:
        want = 100 * t["decode_ns"] / (t["decode_ns"] + t["log_ns"])
        check(len(site) >= 2 and "in busy()" in site[0] and "in decode()" in site[1] and
              "log_step" not in " ".join(site), f"{name}: call site decode(): {site}")
        check(pct is not None and abs(pct - want) <= 10,
              f"{name}: {pct and round(pct, 1)}% of the samples there, decode() "
              f"{want:.1f}% of the host work it measured")
PY
cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
finish
