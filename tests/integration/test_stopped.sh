#!/usr/bin/env bash
# needs: root
# A feeder that something stops is not waiting for input, the GPU or a
# timer (docs/detection.md, "Stopped"). Through the real probes:
#   stop-signal  causegen's helper stops the whole process with SIGSTOP for
#                3 ms a step and sends SIGCONT (as cpulimit does);
#   stop-ptrace  its helper, the feeder's tracer (PTRACE_SEIZE), holds it
#                in a ptrace stop 3 ms a step (as strace or gdb does);
# each measuring the time it was stopped: the top chain is "stopped", worded
# by how, its impact within 7 points of that measure, the helper named.
#   freezer      a loop in a cgroup that another process freezes and thaws
#                (cgroup v2 cgroup.freeze, else v1 freezer.state): "frozen
#                by its cgroup", the thawer named.
# And the advice pasted: "kill STOPPER; kill -CONT PID" on a live chain
# leaves the process running and no longer stopped.
. "$(dirname "$0")/lib.sh"
need_root
pick_cpus 2
for m in stop-signal stop-ptrace; do
	mech_run "$m:3000"
	PYTHONPATH=$ROOT/tests/integration python3 - "$TMP/$m.json" "$TMP/$m.truth" "$m" \
		>>"$TMP/check.txt" <<'PY'
from mech_case import s, t, m, share, check
helper = [h for h in t["helpers"] if h["role"] in ("stopper", "tracer")][0]
c = [x for x in s["chains"] if x["pid"] == t["pid"]]
top = c[0] if c else None
check(top is not None and top["class"] == "stopped",
      f"the top chain is stopped: {top and (top['class'], top['summary'])}")
summary = top["summary"] if top else ""
who = f"{helper['comm']}[{helper['pid']}]"
want = ("stopped by signals: causegen[%d] stopped " % t["pid"] if m == "stop-signal"
        else f"stopped by a tracer: {who} held causegen[{t['pid']}] ")
check(summary.startswith(want) and who in summary, f"worded '{want}...' naming {who}: {summary}")
check(top is not None and top["culprit_pid"] == helper["pid"], f"culprit {top and top['culprit_pid']}")
check(top is not None and abs(top["impact"] - share) <= 0.07,
      f"impact {top and round(top['impact'] * 100, 1)}% within 7 points of the measured "
      f"{share * 100:.1f}%")
parts = [p for p in s["procs"] if p["pid"] == t["pid"]][0]["time"]["parts"]
check(parts["task_wait"] < 0.01 * t["wall_ns"],
      f"no input wait: {parts['task_wait'] / t['wall_ns'] * 100:.1f}%")
recs = top["recommendations"] if top else []
cmd = (f"kill {helper['pid']}; sleep 1; kill -CONT {t['pid']}" if m == "stop-signal"
       else f"kill {helper['pid']}")
check(any(r.endswith(": " + cmd) for r in recs), f"advice ends with '{cmd}': {recs}")
PY
done

# the freezer: cgroup v2's cgroup.freeze (a hierarchy of its own on a v1
# host), else v1's freezer.state
CG="" FROZE="" THAW=""
for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	if [ -e "$root/cgroup.subtree_control" ] && mkdir "$root/ig-stop.$$" 2>/dev/null; then
		if [ -e "$root/ig-stop.$$/cgroup.freeze" ]; then
			CG=$root/ig-stop.$$ FROZE="echo 1 > $CG/cgroup.freeze" THAW="echo 0 > $CG/cgroup.freeze"
			break
		fi
		rmdir "$root/ig-stop.$$"
	fi
done
if [ -z "$CG" ] && [ -d /sys/fs/cgroup/freezer ] && mkdir /sys/fs/cgroup/freezer/ig-stop.$$ 2>/dev/null; then
	CG=/sys/fs/cgroup/freezer/ig-stop.$$
	FROZE="echo FROZEN > $CG/freezer.state" THAW="echo THAWED > $CG/freezer.state"
fi
if [ -n "$CG" ]; then
	cleanup_hooks+=("$THAW 2>/dev/null; for p in \$(cat $CG/cgroup.procs 2>/dev/null); do kill -9 \$p; done; sleep 0.3; rmdir $CG")
	# the thawer: freezes 60 ms of every 150 ms until the loop ends, and
	# measures how long it kept the cgroup frozen
	cat >"$TMP/thaw.sh" <<EOF
while grep -q . $CG/cgroup.procs; do
	$FROZE; sleep 0.06; $THAW; sleep 0.09
done
EOF
	timeout 120 "$IG" --json --summary --no-system-libs -- sh -c "echo \$\$ > $CG/cgroup.procs &&
		exec $B/tests/progs/causegen --seconds 5 --cpu ${CPUS[1]} --kernels 1 \
		--kernel-us 100 --host-us 500 --sleep-us 200" >"$TMP/frozen.json" 2>"$TMP/frozen.err" &
	ig=$!
	wait_until 20 grep -q . "$CG/cgroup.procs" || bad "the loop never entered $CG"
	bash "$TMP/thaw.sh" &
	thawer=$!
	wait "$ig"
	expect_eq "freezer: exit status" "$?" 0
	wait "$thawer"
	python3 - "$TMP/frozen.json" "$thawer" >>"$TMP/check.txt" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
thawer = int(sys.argv[2])
c = [x for x in s["chains"] if x["class"] == "stopped"]
top = c[0] if c else None
summary = top["summary"] if top else ""
ok = summary.startswith("frozen by its cgroup: causegen[") and f"[{thawer}] thawed it" in summary
print(("ok   " if ok else "FAIL ") + f"freezer: worded as frozen, the thawer named: {summary}")
# frozen at most 60 ms of every 150 ms (40 %): the freeze takes hold a
# moment after the write, so the share is below that and far from none
ok = top is not None and 0.05 <= top["impact"] <= 0.40 + 0.07
print(("ok   " if ok else "FAIL ") + f"freezer: impact {top and round(top['impact'] * 100, 1)}% "
      "between 5% and 7 points over the 40% it was frozen at most")
PY
else
	echo "note: no cgroup freezer can be made here: the freezer case not run"
fi

# the advice pasted on a live chain: the stopper ends, the loop runs on
"$B/tests/progs/causegen" --seconds 60 --cpu "${CPUS[1]}" --helper-cpu "${CPUS[0]}" \
	--kernels 1 --kernel-us 100 --host-us 500 --mech stop-signal:5000 >/dev/null 2>&1 &
cg=$!
cleanup_hooks+=("kill -CONT $cg 2>/dev/null; kill $cg 2>/dev/null")
live_cmd "$cg" stopped "kill " '"class":"stopped"'
cmd=$LIVE_CMD
stopper=$(pgrep -P "$cg" -x cg-stopper-0)
expect_eq "the pasted command" "$cmd" "kill $stopper; sleep 1; kill -CONT $cg"
bash -c "$cmd"
gone() { [ ! -e "/proc/$1/stat" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -c1)" = Z ]; }
wait_until 20 gone "$stopper" || bad "the stopper $stopper still runs"
state() { sed 's/.*) //' "/proc/$cg/stat" | cut -c1; }
# the loop runs on: it is never seen stopped again, and its CPU time grows
t0=$(awk '{ print $14 }' "/proc/$cg/stat")
stopped=0
for i in $(seq 20); do
	[ "$(state)" = T ] && stopped=$((stopped + 1))
	sleep 0.05
done
t1=$(awk '{ print $14 }' "/proc/$cg/stat")
expect_eq "the loop seen stopped after the paste (of 20 looks)" "$stopped" 0
[ "$t1" -gt "$t0" ] && ok "the loop runs on (utime $t0 -> $t1 ticks)" || bad "the loop does not run"
kill "$cg"
cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
finish
