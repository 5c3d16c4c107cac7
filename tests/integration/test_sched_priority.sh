#!/usr/bin/env bash
# needs: root
# Priorities in CPU contention (docs/detection.md, "Advice you can paste"):
# each case puts a workload and an ig-hog on one CPU, reads the live
# contention chain, pastes its first command and measures what it did.
#   groups     nice counts only within a CPU scheduling group: a hog in the
#              workload's group is held by "renice 19"; one in another
#              session (setsid: its own autogroup) or in a cgroup of its
#              own is not, and the advice lowers its group's weight ("echo
#              19 > /proc/PID/autogroup", "echo 2 > DIR/cpu.shares", "echo 1
#              > DIR/cpu.weight"). After the paste the workload gets at
#              least 75 % of its CPU (about half before).
#   real-time  a two-thread hog under chrt --fifo 5 and --rr 5 (the kernel's
#              RT throttling leaves the workload 5 %): the chain names it
#              "(real-time: SCHED_FIFO 5)", recommends no renice, and its
#              "chrt -a -o -p 0" makes every hog thread ordinary (policy 0);
#              the workload then gets at least 15 % (a third).
#   nice 19    the workload started under nice -n 19 beside an ordinary hog:
#              "(at nice 19)", and "renice 0 -p $(ls /proc/PID/task)" gives
#              every workload thread nice 0 and at least 25 % (half; 1.5 %
#              before).
. "$(dirname "$0")/lib.sh"
need_root
pick_cpus 2
command -v chrt >/dev/null || { echo "skip: needs chrt (util-linux)"; exit 77; }
A=${CPUS[0]} H=${CPUS[1]}
# this script and what it starts stay off the hogs' CPU: a shell there would
# get 5 % of it while they are real-time
taskset -pc "$A" $$ >/dev/null
stat_field() { awk -v k="$3" '{ sub(/.*\) /, ""); print $(k - 2) }' "/proc/$1/task/$2/stat"; }
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; } # utime + stime
share_of() { # pid: its CPU share over 2 s, %
	local t0 t1 s0 s1
	t0=$(cpu_ticks "$1") s0=$(awk '{ print $1 }' /proc/uptime)
	sleep 2
	t1=$(cpu_ticks "$1") s1=$(awk '{ print $1 }' /proc/uptime)
	awk -v a="$t0" -v b="$t1" -v x="$s0" -v y="$s1" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.0f", (b - a) / hz / (y - x) * 100 }'
}
start_wl() { # [nice -n N]: the workload on the hog's CPU, its pid in wl
	SHIM_LAUNCH_US=200 "$@" "$WL" --cpu "$H" --threads 1 --iters 100000000 --kernels 10 \
		--kernel-us 100 --sync-every 1 >/dev/null &
	wl=$!
	cleanup_hooks+=("kill $hog $wl 2>/dev/null")
}
# live_recs NAME TEXT: ingero-top on the workload until a contention chain's
# summary holds TEXT; that chain's recommendations, one a line, in
# $TMP/NAME.recs
live_recs() {
	local out=$TMP/$1.json ig
	taskset -c "$A" "$IG" --pid "$wl" --batch --json -n 60 >"$out" 2>"$TMP/$1.err" &
	ig=$!
	cleanup_hooks+=("kill $ig 2>/dev/null")
	wait_until 60 grep -qF "$2" "$out" || bad "$1: no chain saying '$2'"
	kill "$ig"
	wait "$ig" 2>/dev/null
	python3 - "$out" "$2" >"$TMP/$1.recs" <<'PY'
import json, sys
path, text = sys.argv[1], sys.argv[2]
recs = []
for line in open(path):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    for c in o.get("chains", []):
        if c["class"] == "cpu_contention" and text in c["summary"]:
            recs = c["recommendations"]
print("\n".join(recs))
PY
	sed 's/^/     /' "$TMP/$1.recs"
}
# paste NAME CMD MIN: CMD is the end of the first recommendation; run it, and
# the workload's CPU share must be MIN % or more after it
paste_first() {
	local cmd
	cmd=$(head -1 "$TMP/$1.recs" | sed 's/.*: //')
	expect_eq "$1: the first advice's command" "$cmd" "$2"
	bash -c "$cmd" >/dev/null || bad "$1: '$cmd' failed"
	local share
	share=$(share_of "$wl")
	[ "$share" -ge "$3" ] && ok "$1: after the paste the workload gets $share % of its CPU" ||
		bad "$1: after the paste the workload gets $share % of its CPU (want $3 % or more)"
}
ntasks_is() { [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" = "$2" ]; } # evaluated at each try
stop_all() {
	kill "$hog" "$wl" 2>/dev/null
	wait "$hog" "$wl" 2>/dev/null
}

# --- the scheduling groups ---
"$HOG" --cpu "$H" --seconds 120 &
hog=$!
start_wl
live_recs same-group "CPU contention by ig-hog[$hog]"
paste_first same-group "renice 19 -p \$(ls /proc/$hog/task)" 75
stop_all
if [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" = 1 ]; then
	setsid "$HOG" --cpu "$H" --seconds 121 &
	wait_until 10 pgrep -f "hog --cpu $H --seconds 121" >/dev/null
	hog=$(pgrep -nf "hog --cpu $H --seconds 121")
	start_wl
	live_recs autogroup "CPU contention by ig-hog[$hog]"
	paste_first autogroup "echo 19 > /proc/$hog/autogroup" 75
	stop_all
else
	echo "note: autogroups are off here: the session case not run"
fi
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
	start_wl
	live_recs cgroup "CPU contention by ig-hog[$hog]"
	paste_first cgroup "$want" 75
	stop_all
else
	echo "note: no cgroup with the cpu controller can be made here: the cgroup case not run"
fi

# --- real-time hogs ---
for pol in fifo rr; do
	chrt "--$pol" 5 "$HOG" --threads 2 --cpu "$H" --seconds 120 &
	hog=$!
	start_wl
	wait_until 10 ntasks_is "$hog" 2 || bad "$pol: ig-hog has not 2 threads"
	live_recs "$pol" "CPU contention by ig-hog[$hog] (real-time: SCHED_${pol^^} 5)"
	grep -q "renice" "$TMP/$pol.recs" && bad "$pol: renice recommended for a real-time task"
	for t in $(ls "/proc/$hog/task"); do # field 41: the policy
		expect_eq "$pol: ig-hog thread $t policy before" "$(stat_field "$hog" "$t" 41)" "$([ $pol = fifo ] && echo 1 || echo 2)"
	done
	paste_first "$pol" "chrt -a -o -p 0 $hog" 15
	for t in $(ls "/proc/$hog/task"); do
		expect_eq "$pol: ig-hog thread $t policy after (0: SCHED_OTHER)" "$(stat_field "$hog" "$t" 41)" 0
	done
	stop_all
done

# --- the feeder's own priority lowered ---
"$HOG" --cpu "$H" --seconds 120 &
hog=$!
start_wl nice -n 19
live_recs nice "(at nice 19) runnable but not running"
paste_first nice "renice 0 -p \$(ls /proc/$wl/task)" 25
for t in $(ls "/proc/$wl/task"); do # field 19: nice
	expect_eq "nice: workload thread $t nice after" "$(stat_field "$wl" "$t" 19)" 0
done
stop_all
finish
