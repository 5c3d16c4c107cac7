#!/usr/bin/env bash
# needs: root
# Priorities in CPU contention (docs/detection.md, "Advice you can paste").
# A real-time task (SCHED_FIFO, SCHED_RR) that takes the feeder's CPU is not
# lowered by nice: the contention chain says it is real-time and its advice
# changes its policy instead.
# For each of the two policies: ig-hog, two busy threads started under chrt,
# on the workload's CPU (the kernel's RT throttling leaves the workload 5 %
# of it); the live chain names it "(real-time: SCHED_FIFO 5)" and
# recommends no renice; its "chrt -a -o -p 0" command, pasted, makes every
# hog thread an ordinary one (policy 0), and the workload gets its share of
# the CPU back (a third, with two busy threads beside it; at least 15 %).
# And the CPU scheduling groups: an ig-hog in another session (its own
# autogroup) or in a cgroup of its own is not held by renice: the advice
# lowers its group's weight instead ("echo 19 > /proc/PID/autogroup", "echo 2
# > DIR/cpu.shares" or "echo 1 > DIR/cpu.weight"), and pasted it gives the
# workload most of the CPU (half before); in one group, renice does.
# And a feeder started under nice 19 beside an ordinary ig-hog: the chain
# says "(at nice 19)", its first advice "renice 0 -p $(ls /proc/PID/task)",
# pasted, gives every workload thread nice 0 and half the CPU (1.5 %
# before).
. "$(dirname "$0")/lib.sh"
need_root
pick_cpus 2
command -v chrt >/dev/null || { echo "skip: needs chrt (util-linux)"; exit 77; }
A=${CPUS[0]} H=${CPUS[1]}
# this script and what it starts stay off the hogs' CPU: a shell there would
# get 5 % of it while they are real-time
taskset -pc "$A" $$ >/dev/null
policy_of() { awk '{ sub(/.*\) /, ""); print $39 }' "/proc/$1/task/$2/stat"; } # field 41
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }      # utime + stime
for pol in fifo rr; do
	name=SCHED_${pol^^}
	chrt "--$pol" 5 "$HOG" --threads 2 --cpu "$H" --seconds 120 &
	hog=$!
	SHIM_LAUNCH_US=200 "$WL" --cpu "$H" --threads 1 --iters 100000000 --kernels 10 \
		--kernel-us 100 --sync-every 1 >/dev/null &
	wl=$!
	cleanup_hooks+=("kill $hog $wl 2>/dev/null")
	wait_until 10 test "$(ls "/proc/$hog/task" | wc -l)" = 2 || bad "$pol: ig-hog has not 2 threads"
	out=$TMP/$pol.json
	taskset -c "$A" "$IG" --pid "$wl" --batch --json -n 60 >"$out" 2>"$TMP/$pol.err" &
	ig=$!
	cleanup_hooks+=("kill $ig 2>/dev/null")
	want="ig-hog[$hog] (real-time: $name 5)"
	wait_until 60 grep -qF "CPU contention by $want" "$out" || bad "$pol: no chain naming $want"
	kill "$ig"
	wait "$ig" 2>/dev/null
	python3 - "$out" "$hog" >"$TMP/$pol.recs" <<'PY'
import json, sys
path, hog = sys.argv[1], sys.argv[2]
recs = []
for line in open(path):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    for c in o.get("chains", []):
        if c["class"] == "cpu_contention" and f"ig-hog[{hog}]" in c["summary"]:
            recs = c["recommendations"]
print("\n".join(recs))
PY
	sed 's/^/     /' "$TMP/$pol.recs"
	grep -q "renice" "$TMP/$pol.recs" && bad "$pol: renice recommended for a real-time task"
	cmd=$(sed -n "s/.*: \(chrt -a -o -p 0 $hog\)$/\1/p" "$TMP/$pol.recs")
	expect_eq "$pol: the command to make it ordinary" "$cmd" "chrt -a -o -p 0 $hog"
	for t in $(ls "/proc/$hog/task"); do
		expect_eq "$pol: ig-hog thread $t policy before" "$(policy_of "$hog" "$t")" "$([ $pol = fifo ] && echo 1 || echo 2)"
	done
	bash -c "$cmd" || bad "$pol: '$cmd' failed"
	for t in $(ls "/proc/$hog/task"); do
		expect_eq "$pol: ig-hog thread $t policy after (0: SCHED_OTHER)" "$(policy_of "$hog" "$t")" 0
	done
	# the workload's CPU share over 2 s of its CPU time: a third, beside two
	# busy threads (at most 5 % while they were real-time)
	t0=$(cpu_ticks "$wl") s0=$(awk '{ print $1 }' /proc/uptime)
	sleep 2
	t1=$(cpu_ticks "$wl") s1=$(awk '{ print $1 }' /proc/uptime)
	hz=$(getconf CLK_TCK)
	share=$(awk -v a="$t0" -v b="$t1" -v x="$s0" -v y="$s1" -v hz="$hz" 'BEGIN { printf "%.0f", (b - a) / hz / (y - x) * 100 }')
	[ "$share" -ge 15 ] && ok "$pol: the workload runs again: $share % of its CPU" ||
		bad "$pol: the workload got $share % of its CPU after the paste"
	kill "$hog" "$wl" 2>/dev/null
	wait "$hog" "$wl" 2>/dev/null
done

# the CPU scheduling groups: the contention chain's first command, pasted,
# must give the workload most of its CPU (its share before: about half)
share_of() { # pid: its CPU share over 2 s, %
	local t0 t1 s0 s1
	t0=$(cpu_ticks "$1") s0=$(awk '{ print $1 }' /proc/uptime)
	sleep 2
	t1=$(cpu_ticks "$1") s1=$(awk '{ print $1 }' /proc/uptime)
	awk -v a="$t0" -v b="$t1" -v x="$s0" -v y="$s1" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.0f", (b - a) / hz / (y - x) * 100 }'
}
group_case() { # name, the command the advice must end with (HOG for its pid)
	local name=$1 want=$2 out=$TMP/$1.json ig cmd share
	SHIM_LAUNCH_US=200 "$WL" --cpu "$H" --threads 1 --iters 100000000 --kernels 10 \
		--kernel-us 100 --sync-every 1 >/dev/null &
	wl=$!
	cleanup_hooks+=("kill $hog $wl 2>/dev/null")
	want=${want//HOG/$hog}
	taskset -c "$A" "$IG" --pid "$wl" --batch --json -n 60 >"$out" 2>"$TMP/$name.err" &
	ig=$!
	cleanup_hooks+=("kill $ig 2>/dev/null")
	wait_until 60 grep -qF ": $want\"" "$out" || bad "$name: no advice ending in '$want'"
	kill "$ig"
	wait "$ig" 2>/dev/null
	cmd=$(grep -oF ": $want\"" "$out" | head -1 | sed 's/^: //; s/"$//')
	expect_eq "$name: the command" "$cmd" "$want"
	bash -c "$cmd" >/dev/null || bad "$name: '$cmd' failed"
	share=$(share_of "$wl")
	[ "$share" -ge 75 ] && ok "$name: after the paste the workload gets $share % of its CPU" ||
		bad "$name: after the paste the workload gets $share % of its CPU"
	kill "$hog" "$wl" 2>/dev/null
	wait "$hog" "$wl" 2>/dev/null
}
"$HOG" --cpu "$H" --seconds 120 &
hog=$!
group_case same-group 'renice 19 -p $(ls /proc/HOG/task)'
if [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" = 1 ]; then
	setsid "$HOG" --cpu "$H" --seconds 120 &
	wait_until 10 pgrep -f "hog --cpu $H --seconds 120" >/dev/null
	hog=$(pgrep -nf "hog --cpu $H --seconds 120")
	group_case autogroup "echo 19 > /proc/HOG/autogroup"
else
	echo "note: autogroups are off here: the session case not run"
fi
# a cgroup of its own with the cpu controller: v2 (cpu.weight) or v1 (cpu.shares)
CG=""
if grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null && mkdir /sys/fs/cgroup/ig-prio.$$ 2>/dev/null; then
	CG=/sys/fs/cgroup/ig-prio.$$ want="echo 1 > $CG/cpu.weight"
elif [ -w /sys/fs/cgroup/cpu/cgroup.procs ] && mkdir /sys/fs/cgroup/cpu/ig-prio.$$ 2>/dev/null; then
	CG=/sys/fs/cgroup/cpu/ig-prio.$$ want="echo 2 > $CG/cpu.shares"
fi
if [ -n "$CG" ]; then
	cleanup_hooks+=("for p in \$(cat $CG/cgroup.procs 2>/dev/null); do kill -9 \$p; done; sleep 0.2; rmdir $CG")
	"$HOG" --cpu "$H" --seconds 120 &
	hog=$!
	echo "$hog" >"$CG/cgroup.procs"
	group_case cgroup "$want"
else
	echo "note: no cgroup with the cpu controller can be made here: the cgroup case not run"
fi

# the feeder's own priority lowered
nice_of() { awk '{ sub(/.*\) /, ""); print $17 }' "/proc/$1/task/$2/stat"; } # field 19
"$HOG" --cpu "$H" --seconds 120 &
hog=$!
SHIM_LAUNCH_US=200 nice -n 19 "$WL" --cpu "$H" --threads 1 --iters 100000000 --kernels 10 \
	--kernel-us 100 --sync-every 1 >/dev/null &
wl=$!
cleanup_hooks+=("kill $hog $wl 2>/dev/null")
out=$TMP/nice.json
taskset -c "$A" "$IG" --pid "$wl" --batch --json -n 60 >"$out" 2>"$TMP/nice.err" &
ig=$!
cleanup_hooks+=("kill $ig 2>/dev/null")
wait_until 60 grep -qF "(at nice 19) runnable but not running" "$out" ||
	bad "nice: no contention chain saying the workload runs at nice 19"
kill "$ig"
wait "$ig" 2>/dev/null
python3 - "$out" "$hog" >"$TMP/nice.recs" <<'PY'
import json, sys
path, hog = sys.argv[1], sys.argv[2]
recs = []
for line in open(path):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    for c in o.get("chains", []):
        if c["class"] == "cpu_contention" and "(at nice 19)" in c["summary"]:
            recs = c["recommendations"]
print("\n".join(recs))
PY
sed 's/^/     /' "$TMP/nice.recs"
cmd=$(head -1 "$TMP/nice.recs" | sed -n 's/.*: \(renice 0 -p .*\)$/\1/p')
expect_eq "nice: the first advice" "$cmd" "renice 0 -p \$(ls /proc/$wl/task)"
bash -c "$cmd" >/dev/null || bad "nice: '$cmd' failed"
for t in $(ls "/proc/$wl/task"); do
	expect_eq "nice: workload thread $t nice after" "$(nice_of "$wl" "$t")" 0
done
t0=$(cpu_ticks "$wl") s0=$(awk '{ print $1 }' /proc/uptime)
sleep 2
t1=$(cpu_ticks "$wl") s1=$(awk '{ print $1 }' /proc/uptime)
share=$(awk -v a="$t0" -v b="$t1" -v x="$s0" -v y="$s1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f", (b - a) / hz / (y - x) * 100 }')
[ "$share" -ge 25 ] && ok "nice: the workload runs again: $share % of its CPU" ||
	bad "nice: the workload got $share % of its CPU after the paste"
kill "$hog" "$wl" 2>/dev/null
wait "$hog" "$wl" 2>/dev/null
finish
