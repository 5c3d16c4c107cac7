#!/usr/bin/env bash
# needs: root
# Synchronous launches (docs/detection.md, "Synchronous launches"): with
# CUDA_LAUNCH_BLOCKING=1 each launch returns once its kernel has ended (the
# shim does as the driver does), so the loop's host work and the GPU's take
# turns. Through the real probes, two ways the variable gets there:
#   python   tests/progs/launchblock.py sets it with os.environ before its
#            first CUDA call (its live environment only, not
#            /proc/PID/environ): "the program sets it itself", the advice's
#            command shows its command line;
#   started  causegen started with it in its environment (spinning waits,
#            the driver's default): "it came with the job", the advice's
#            command, pasted on the live process, prints the variable;
# each measuring its own time in launches: the top chain is
# launch_blocking, HIGH, its impact within 5 points of the smaller of that
# share and the rest (what overlap gives back), no launch-overhead chain.
# The same loops without it (and with CUDA_LAUNCH_BLOCKING=0): no such
# chain. A recording keeps the environment's evidence: its replay says the
# same; with those rows deleted, launches asleep in the driver (sync mode
# block) whose syncs find nothing left say it unconfirmed (MEDIUM).
# PYTORCH_NO_CUDA_MEMORY_CACHING=1 beside allocations every step: the
# allocation chain's first advice unsets it.
. "$(dirname "$0")/lib.sh"
need_root
pick_cpus 2
PY_LIB=$B/shim/libcudart.so.12
CG=(--seconds 3 --cpu "${CPUS[1]}" --kernels 4 --kernel-us 400 --host-us 1500)

# judge SUMMARY TRUTH NAME WANT: WANT is "confirmed", "unconfirmed" or "none"
judge() {
	python3 - "$@" >>"$TMP/check.txt" <<'PY'
import json, sys
out, truth, name, want = sys.argv[1:5]
s = json.loads(open(out).read().splitlines()[-1])
t = json.load(open(truth))
pid = t["pid"]
if "phases" in t:  # causegen
    launch, wall = t["phases"]["launch"]["wall_ns"], t["wall_ns"]
else:
    launch, wall = t["launch_ns"], t["wall_ns"]
share = launch / wall
impact = min(share, 1 - share)
c = [x for x in s["chains"] if x["pid"] == pid]
lb = [x for x in c if x["class"] == "launch_blocking"]
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + f"{name}: {what}")
if want == "none":
    check(not lb, f"no synchronous launches chain: {[x['class'] for x in c]}")
    sys.exit(0)
top = c[0] if c else None
check(top is not None and top["class"] == "launch_blocking",
      f"the top chain is launch_blocking: {top and (top['class'], top['summary'])}")
if not lb:
    sys.exit(0)
x = lb[0]
sev = "HIGH" if want == "confirmed" else "MEDIUM"
check(x["severity"] == sev, f"severity {x['severity']}, want {sev}")
check(abs(x["impact"] - impact) <= 0.05,
      f"impact {x['impact'] * 100:.1f}% within 5 points of the measured {impact * 100:.1f}% "
      f"(launches {share * 100:.1f}% of its time)")
check(not [y for y in c if y["class"] in ("launch_bound", "sync_storm")],
      f"no launch overhead or sync storm: {[y['class'] for y in c]}")
recs = x["recommendations"]
if name == "python":
    cmd = f"ps -o args= -p {pid}"
    check(recs and "sets it itself" in recs[0] and recs[0].endswith(": " + cmd), f"advice: {recs}")
elif want == "confirmed":
    cmd = f"xargs -0 -n1 < /proc/{pid}/environ | grep CUDA_LAUNCH"
    check(recs and "came with the job" in recs[0] and recs[0].endswith(": " + cmd),
          f"advice: {recs}")
else:
    check("did not record its environment" in x["explanation"], f"why: {x['explanation']}")
    check("(not recorded)" in (x.get("lacking") or ""), f"lacking: {x.get('lacking')}")
PY
}

run_ig() { # NAME CMD...: a --json --summary run
	local n=$1
	shift
	timeout 120 "$IG" --json --summary --no-system-libs "$@" >"$TMP/$n.json" 2>"$TMP/$n.err"
	expect_eq "$n: exit status" "$?" 0
}

# the program sets it itself; the same program without it
run_ig python -- python3 "$ROOT/tests/progs/launchblock.py" --lib "$PY_LIB" --seconds 3 \
	--truth "$TMP/python.truth"
judge "$TMP/python.json" "$TMP/python.truth" python confirmed
run_ig python-none -- python3 "$ROOT/tests/progs/launchblock.py" --lib "$PY_LIB" --seconds 3 \
	--no-env --truth "$TMP/python-none.truth"
judge "$TMP/python-none.json" "$TMP/python-none.truth" python-none none

# started with it, recorded; without it, and with 0
run_ig started --record "$TMP/started.db" -- env CUDA_LAUNCH_BLOCKING=1 \
	"$B/tests/progs/causegen" "${CG[@]}" --sync-mode spin --truth "$TMP/started.truth"
judge "$TMP/started.json" "$TMP/started.truth" started confirmed
for v in unset 0; do
	if [ $v = unset ]; then set -- env -u CUDA_LAUNCH_BLOCKING; else set -- env CUDA_LAUNCH_BLOCKING=0; fi
	run_ig "started-$v" -- "$@" "$B/tests/progs/causegen" "${CG[@]}" --sync-mode spin \
		--truth "$TMP/started-$v.truth"
	judge "$TMP/started-$v.json" "$TMP/started-$v.truth" "started-$v" none
done

# the recording: its replay says the same; without the environment's rows,
# launches asleep in the driver say it unconfirmed
"$IG" --replay "$TMP/started.db" --json --summary >"$TMP/replay.json" 2>"$TMP/replay.err"
expect_eq "replay: exit status" "$?" 0
judge "$TMP/replay.json" "$TMP/started.truth" replay confirmed
run_ig asleep --record "$TMP/asleep.db" -- env CUDA_LAUNCH_BLOCKING=1 \
	"$B/tests/progs/causegen" "${CG[@]}" --sync-mode block --truth "$TMP/asleep.truth"
judge "$TMP/asleep.json" "$TMP/asleep.truth" asleep confirmed
envk=$(sqlite3 "$TMP/asleep.db" "SELECT COUNT(*) FROM events WHERE kind = 14")
[ "$envk" -ge 1 ] && ok "the recording holds $envk environment rows" || bad "no environment rows recorded"
sqlite3 "$TMP/asleep.db" "DELETE FROM events WHERE kind = 14"
"$IG" --replay "$TMP/asleep.db" --json --summary >"$TMP/noenv.json" 2>"$TMP/noenv.err"
expect_eq "replay without the environment: exit status" "$?" 0
judge "$TMP/noenv.json" "$TMP/asleep.truth" asleep-noenv unconfirmed

# PyTorch's caching allocator off: a loop that allocates every step (as
# PyTorch then does) started with PYTORCH_NO_CUDA_MEMORY_CACHING=1; the
# allocation chain's first advice unsets it
run_ig nocache -- env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$B/tests/progs/causegen" --seconds 3 \
	--cpu "${CPUS[1]}" --kernels 4 --kernel-us 400 --host-us 500 --allocs 4 --alloc-us 300 \
	--truth "$TMP/nocache.truth"
python3 - "$TMP/nocache.json" "$TMP/nocache.truth" >>"$TMP/check.txt" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
pid = json.load(open(sys.argv[2]))["pid"]
c = [x for x in s["chains"] if x["pid"] == pid and x["class"] == "alloc_spikes"]
recs = c[0]["recommendations"] if c else []
want = f": xargs -0 -n1 < /proc/{pid}/environ | grep CUDA_MEMORY"
ok = bool(recs) and recs[0].startswith("Unset PYTORCH_NO_CUDA_MEMORY_CACHING") and recs[0].endswith(want)
print(("ok   " if ok else "FAIL ") + f"nocache: the allocation chain's first advice unsets it: {recs[:1]}")
PY

# the advice pasted on a live chain: it prints the variable
env CUDA_LAUNCH_BLOCKING=1 "$B/tests/progs/causegen" --seconds 60 --cpu "${CPUS[1]}" \
	--kernels 4 --kernel-us 400 --host-us 1500 --sync-mode spin >/dev/null 2>&1 &
cg=$!
cleanup_hooks+=("kill $cg 2>/dev/null")
live_cmd "$cg" launch_blocking "xargs " '"class":"launch_blocking"'
expect_eq "the pasted command" "$LIVE_CMD" "xargs -0 -n1 < /proc/$cg/environ | grep CUDA_LAUNCH"
expect_eq "what it prints" "$(bash -c "$LIVE_CMD")" "CUDA_LAUNCH_BLOCKING=1"
kill "$cg"
wait "$cg" 2>/dev/null

cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
finish
