#!/usr/bin/env bash
# needs: root
# A feeder that starts a program each step and waits for it to end
# (subprocess.run, os.system) is not fed by it: the chain says so
# (docs/detection.md, "Waits for a child process"). Through the real
# probes, causegen's two mechanisms, each measuring its own wait:
#   child-fork   fork(), the child sleeps 3 ms and exits, waitpid();
#   child-spawn  posix_spawn of /bin/sleep 0.003, waitpid();
# the top chain is loader_wait worded as a child-process wait naming the
# last child (causegen for a fork, sleep for the spawn), its impact within
# 7 points of the share causegen measured off CPU in the mechanism, and
# its advice the non-blocking start and a strace of the process's pid.
# And a contrast: input-unix (a producer process the feeder reads a socket
# from, also its child) keeps the input words. Then Python reading a
# program's output each step (subprocess.run with capture_output=True).
. "$(dirname "$0")/lib.sh"
need_root
pick_cpus 2
for m in child-fork child-spawn input-unix; do
	mech_run "$m:3000"
	PYTHONPATH=$ROOT/tests/integration python3 - "$TMP/$m.json" "$TMP/$m.truth" "$m" \
		>>"$TMP/check.txt" <<'PY'
from mech_case import s, t, m, share, check
c = [x for x in s["chains"] if x["pid"] == t["pid"]]
top = c[0] if c else None
check(top is not None and top["class"] == "loader_wait",
      f"the top chain is loader_wait: {top and (top['class'], top['summary'])}")
summary = top["summary"] if top else ""
if m == "input-unix":
    check("child-process wait" not in summary and "cg-producer-0" in summary,
          f"a producer read from keeps the input words: {summary}")
else:
    last = "causegen[" if m == "child-fork" else "sleep["
    check(summary.startswith(f"child-process wait in causegen[{t['pid']}]: blocked ") and
          f"on programs it started, until they ended (the last: {last}" in summary,
          f"worded as a wait for a child process: {summary}")
    check(top is not None and abs(top["impact"] - share) <= 0.07,
          f"impact {top and round(top['impact'] * 100, 1)}% within 7 points of the "
          f"measured {share * 100:.1f}%")
    recs = top["recommendations"] if top else []
    check(any("subprocess.Popen" in r for r in recs) and
          any(r.endswith(f"strace -f -qq -e trace=execve -e signal=none -p {t['pid']}")
              for r in recs),
          f"advice: start it without waiting, strace its pid: {recs}")
PY
done

# Python reading a program's output each step (subprocess.run with
# capture_output=True): its waits are in poll, ended by the young sleep
PY=/usr/bin/python3
if [ -x "$PY" ]; then
	cat >"$TMP/capture.py" <<'PY'
import ctypes, json, subprocess, sys, time
rt = ctypes.CDLL(sys.argv[1])
rt.cudaDeviceSynchronize()
t0 = time.monotonic(); waited = 0.0
while time.monotonic() - t0 < 4:
    a = time.monotonic()
    subprocess.run(["/bin/sleep", "0.003"], capture_output=True, check=True)
    waited += time.monotonic() - a
    rt.cudaDeviceSynchronize()
json.dump({"share": waited / (time.monotonic() - t0)}, open(sys.argv[2], "w"))
PY
	timeout 120 "$IG" --json --summary --no-system-libs -- "$PY" "$TMP/capture.py" \
		"$B/shim/libcudart.so.12" "$TMP/capture.truth" >"$TMP/capture.json" 2>"$TMP/capture.err"
	expect_eq "capture_output: exit status" "$?" 0
	python3 - "$TMP/capture.json" "$TMP/capture.truth" >>"$TMP/check.txt" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
share = json.load(open(sys.argv[2]))["share"]
c = [x for x in s["chains"] if x["class"] == "loader_wait"]
top = c[0] if c else None
summary = top["summary"] if top else ""
ok = "child-process wait in python3[" in summary and "(the last: sleep[" in summary
print(("ok   " if ok else "FAIL ") + f"capture_output: worded as a wait for a child process: {summary}")
# the measure includes the spawn's own CPU (fork, pipes: host work, and
# dearer on a slower machine), so the wait is at most it and at least half
ok = top is not None and 0.5 * share <= top["impact"] <= share + 0.07
print(("ok   " if ok else "FAIL ") + f"capture_output: impact {top and round(top['impact'] * 100, 1)}% "
      f"between half the measured {share * 100:.1f}% and 7 points over it")
PY
else
	echo "note: /usr/bin/python3 missing, the capture_output case not run"
fi
cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
finish
