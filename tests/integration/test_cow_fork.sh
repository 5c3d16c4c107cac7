#!/usr/bin/env bash
# needs: root
# Copy-on-write faults after a fork (docs/detection.md, "Copy on write
# after a fork"): a loop that writes its own buffer each step while a child
# it forked shares the buffer's pages copies each page at its first write.
# The collector tells those faults (writes to present pages) from the
# others; the words name the fork only where the process forked a child
# that runs no program of its own. Through the real probes,
# tests/progs/cowfork.py, each mode measuring its own time in the writes:
#   fork   a child forked each pass over the buffer (a checkpoint saved by
#          a forked process): page_faults worded "copy-on-write faults",
#          the last child named, impact within 5 points of its measure,
#          advice to fork less or share nothing; recorded, its replay says
#          the same;
#   fresh  a new mapping each pass: "faulting in fresh memory", as before;
#   zero   a new mapping read before it is written (the zero page, copied
#          at the write): most of the fault time copies on write, but
#          nothing was forked: fresh memory.
# causegen's cow-fork (C, a child that pauses) live: the advice's command,
# pasted, lists that child.
. "$(dirname "$0")/lib.sh"
need_root
pick_cpus 2
PY=$ROOT/tests/progs/cowfork.py

# judge SUMMARY TRUTH NAME WANT: WANT is "cow" or "fresh"
judge() {
	python3 - "$@" >>"$TMP/check.txt" <<'PY'
import json, sys
out, truth, name, want = sys.argv[1:5]
s = json.loads(open(out).read().splitlines()[-1])
t = json.load(open(truth))
pid = t["pid"]
share = t["write_ns"] / t["wall_ns"]
c = [x for x in s["chains"] if x["pid"] == pid]
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + f"{name}: {what}")
top = c[0] if c else None
check(top is not None and top["class"] == "page_faults",
      f"the top chain is page_faults: {[(x['class'], round(x['impact'] * 100, 1)) for x in c]}")
if not top or top["class"] != "page_faults":
    sys.exit(0)
check(abs(top["impact"] - share) <= 0.05,
      f"impact {top['impact'] * 100:.1f}% within 5 points of the measured {share * 100:.1f}%")
cow = top["evidence"].get("cow_fault_pct", 0)
if want == "cow":
    check(top["summary"].startswith("copy-on-write faults in python3[") or
          top["summary"].startswith("copy-on-write faults in causegen["), f"words: {top['summary']}")
    child = "cg-cowchild[" if "causegen" in top["summary"] else "python3["
    check(f"(the last: {child}" in top["summary"], f"names the last child {child}")
    recs = top["recommendations"]
    check(recs and recs[0].startswith("Fork less often") and
          recs[-1].endswith(f": ps --ppid {pid} -o pid,etime,args"), f"advice: {recs}")
    check(cow >= 50, f"copy-on-write {cow:.0f}% of the fault time")
else:
    check("faulting in fresh memory" in top["summary"], f"words: {top['summary']}")
    check(top["recommendations"][0].startswith("Reuse buffers"),
          f"advice: {top['recommendations'][:1]}")
    if name == "zero":  # the zero page copied at the write, nothing forked
        check(cow >= 50, f"copy-on-write {cow:.0f}% of the fault time, yet no fork")
PY
}

for mode in fork fresh zero; do
	rec=()
	[ $mode = fork ] && rec=(--record "$TMP/fork.db")
	timeout 120 "$IG" --json --summary --no-system-libs "${rec[@]}" -- taskset -c "${CPUS[1]}" \
		python3 "$PY" --lib "$B/shim/libcudart.so.12" --mode $mode --seconds 4 \
		--truth "$TMP/$mode.truth" >"$TMP/$mode.json" 2>"$TMP/$mode.err"
	expect_eq "$mode: exit status" "$?" 0
	judge "$TMP/$mode.json" "$TMP/$mode.truth" $mode "$([ $mode = fork ] && echo cow || echo fresh)"
done
"$IG" --replay "$TMP/fork.db" --json --summary >"$TMP/replay.json" 2>"$TMP/replay.err"
expect_eq "replay: exit status" "$?" 0
judge "$TMP/replay.json" "$TMP/fork.truth" replay cow

# causegen's child pauses: live, the advice's command lists it
"$B/tests/progs/causegen" --seconds 60 --cpu "${CPUS[1]}" --kernels 2 --kernel-us 1000 \
	--mech cow-fork:750 >/dev/null 2>&1 &
cg=$!
cleanup_hooks+=("kill $cg 2>/dev/null")
live_cmd "$cg" page_faults "ps " 'copy-on-write faults in causegen'
expect_eq "the pasted command" "$LIVE_CMD" "ps --ppid $cg -o pid,etime,args"
bash -c "$LIVE_CMD" >"$TMP/ps.txt" 2>&1
grep -q "causegen" "$TMP/ps.txt" && ok "it lists the child: $(tail -1 "$TMP/ps.txt")" ||
	bad "the command lists no child: $(cat "$TMP/ps.txt")"
kill "$cg"
wait "$cg" 2>/dev/null

cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
finish
