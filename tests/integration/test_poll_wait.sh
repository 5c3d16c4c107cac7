#!/usr/bin/env bash
# needs: root
# A feeder that polls for its data sleeps again and again between two CUDA
# calls; one paced by its own clock sleeps once (docs/detection.md,
# "Polling waits"). Through the real probes, tests/progs/pollfeed.py:
#   poll   a consumer that polls a multiprocessing.Queue (get_nowait, then a
#          0.5 ms time.sleep) fed by a producer process slower than the GPU:
#          the top chain is poll_wait, MEDIUM (what it polls is not named),
#          its impact within 5 points of the time it measured asleep in
#          the wait (not its checks between naps, nor its run-queue wait), the poll's
#          line as its call site; GPU-bound does not say the host keeps up;
#   paced  the same loop pacing itself with one sleep a step: timer_sleep,
#          INFO, no poll_wait;
#   poll-select, paced-select  the same two with naps that are what
#          time.sleep is in Python 3.10 and older, a select() with no file
#          descriptors: a sleep call, not a wait with a timeout.
# (causegen's poll-eventfd and poll-unix, C consumers of a thread and of a
# process, are in the sweep.)
. "$(dirname "$0")/lib.sh"
need_root
PY=$ROOT/tests/progs/pollfeed.py
for mode in poll paced poll-select paced-select; do
	extra=()
	case $mode in paced*) extra=(--paced) ;; esac
	case $mode in *-select) extra+=(--nap select) ;; esac
	timeout 120 "$IG" --json --summary --no-system-libs -- python3 "$PY" \
		--lib "$B/shim/libcudart.so.12" --seconds 5 --producer-ms 5 "${extra[@]}" \
		--truth "$TMP/$mode.truth" >"$TMP/$mode.json" 2>"$TMP/$mode.err"
	expect_eq "$mode: exit status" "$?" 0
	python3 - "$TMP/$mode.json" "$TMP/$mode.truth" "$mode" >>"$TMP/check.txt" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
t = json.load(open(sys.argv[2]))
mode = sys.argv[3]
share = t["asleep_ns"] / t["wall_ns"]  # the checks between naps are host work
c = [x for x in s["chains"] if x["pid"] == t["pid"]]
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + f"{mode}: {what}")
classes = [(x["class"], x["severity"], round(x["impact"] * 100, 1)) for x in c]
if mode.startswith("paced"):
    ts = [x for x in c if x["class"] == "timer_sleep"]
    check(ts and ts[0]["severity"] == "INFO" and not [x for x in c if x["class"] == "poll_wait"],
          f"timer_sleep INFO, no poll_wait: {classes}")
    check(ts and ts[0]["summary"].endswith("(sleep calls)"), f"sleep calls: {ts and ts[0]['summary']}")
    sys.exit(0)
top = c[0] if c else None
check(top is not None and top["class"] == "poll_wait" and top["severity"] == "MEDIUM",
      f"the top chain is poll_wait, MEDIUM: {classes}")
check(top is not None and abs(top["impact"] - share) <= 0.05,
      f"impact {top and round(top['impact'] * 100, 1)}% within 5 points of the measured "
      f"{share * 100:.1f}%")
check(top is not None and "pollfeed.py" in (top.get("call_site") or [""])[0],
      f"call site: {top and top.get('call_site')}")
g = [x for x in c if x["class"] == "gpu_bound"]
check(not g or "host keeps up" not in g[0]["summary"], f"GPU-bound: {g and g[0]['summary']}")
PY
done
cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
finish
