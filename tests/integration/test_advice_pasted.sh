#!/usr/bin/env bash
# needs: root
# Advice you can paste (docs/detection.md): live chains on real workloads,
# each command ingero-top recommends taken from the JSON, its placeholders
# filled the way a user would, run, and its effect checked on every thread
# it claims to change.
#   * CPU contention: a workload with two feeding threads shares a CPU with
#     ig-hog, three busy threads. renice and chrt must reach every hog
#     thread (nice 19, SCHED_IDLE), taskset every workload thread.
#   * CPU quota: a second workload in a throwaway cgroup limited to 0.2 CPU.
#     The quota command must raise that cgroup's quota (the one all the
#     workload's threads are in) to what the advice says; the cat works.
# Placeholders: <cores> becomes the allowed CPUs the hog is not on (a user
# picks cores the culprit does not use); <N> (a quota ingero-top could not
# size) is not expected here and fails the test. A command is the text
# after the recommendation's ": ", to its end.
. "$(dirname "$0")/lib.sh"
need_root
pick_cpus 2
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
A=${CPUS[0]} H=${CPUS[${#CPUS[@]} - 1]}
others=$(allowed_cpus | grep -vx "$H" | paste -sd, -)

# a throwaway cgroup with a CPU quota (v2 with the cpu controller, or v1)
CG="" CGV=""
if grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	CG=/sys/fs/cgroup/ig-advice.$$ CGV=2
elif [ -w /sys/fs/cgroup/cpu/cgroup.procs ]; then
	CG=/sys/fs/cgroup/cpu/ig-advice.$$ CGV=1
fi
if [ -n "$CG" ] && mkdir "$CG" 2>/dev/null; then
	cleanup_hooks+=("for p in \$(cat $CG/cgroup.procs 2>/dev/null); do kill -9 \$p; done; sleep 0.2; rmdir $CG")
	if [ "$CGV" = 2 ]; then echo "20000 100000" >"$CG/cpu.max"; else echo 20000 >"$CG/cpu.cfs_quota_us"; fi
else
	echo "note: no cgroup with a CPU quota can be made here: the quota advice is not checked"
	CG=""
fi

"$HOG" --threads 3 --cpu "$H" --seconds 90 &
hog=$!
SHIM_LAUNCH_US=500 "$WL" --cpu "$H" --threads 2 --iters 10000000 --kernels 10 \
	--kernel-us 100 --sync-every 1 >/dev/null &
wl=$!
pids=$hog,$wl
cleanup_hooks+=("kill $hog $wl 2>/dev/null")
if [ -n "$CG" ]; then
	SHIM_LAUNCH_US=200 "$WL" --wait-signal --cpu "$A" --threads 2 --iters 10000000 \
		--kernels 10 --kernel-us 100 --sync-every 1 >"$TMP/wl2.out" &
	wl2=$!
	cleanup_hooks+=("kill $wl2 2>/dev/null")
	wait_until 10 grep -q ready "$TMP/wl2.out"
	echo "$wl2" >"$CG/cgroup.procs" # all its threads (it has only one yet)
	kill -USR1 "$wl2"
	pids=$pids,$wl2
fi
ntasks() { ls "/proc/$1/task" 2>/dev/null | wc -l; }
# functions, so that each try counts again ("$(...)" in the arguments of
# wait_until would be counted once, before the first try)
hog_started() { [ "$(ntasks "$hog")" = 3 ]; }
wl_started() { [ "$(ntasks "$wl")" -ge 3 ]; }
wait_until 10 hog_started || bad "ig-hog has $(ntasks "$hog") threads, want 3"
wait_until 10 wl_started || bad "workload has $(ntasks "$wl") threads, want 3"

# the frame's chains of our workloads, and their commands, placeholders
# filled; "check" says only whether such a frame is there yet
cat >"$TMP/frame.py" <<'PY'
import json, re, sys
mode, path, hog, wl, wl2, others = sys.argv[1:]
frame = None
for line in open(path):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    chains = o.get("chains", [])
    if any(c.get("class") == "cpu_contention" and f"ig-hog[{hog}]" in c.get("summary", "")
           for c in chains) and \
       (wl2 == "0" or any(c.get("class") == "cpu_quota" and str(c.get("pid")) == wl2
                          for c in chains)):
        frame = o
if mode == "check":
    sys.exit(0 if frame else 1)
if not frame:
    print("NOFRAME no frame holds both chains")
cmd_re = re.compile(r": ((?:renice|chrt|taskset|echo|docker|systemctl|cat) .*)$")
for c in frame["chains"] if frame else []:
    print("CHAIN", c.get("class"), c.get("pid"), c.get("summary", "")[:100])
for c in frame["chains"] if frame else []:
    if str(c.get("pid")) not in (wl, wl2):
        continue
    # contention by a process of the machine that is not ours: not ours to run
    if c.get("class") == "cpu_contention" and f"ig-hog[{hog}]" not in c.get("summary", ""):
        continue
    for r in c.get("recommendations", []):
        m = cmd_re.search(r)
        if not m:
            if re.search(r"\b(renice|chrt|taskset|docker update|systemctl|echo) ", r):
                print("BADFORM", c["class"], r)  # a command not at the end
            continue
        # text after the command breaks the paste: say so, and still run
        # the commands in it to check what they do
        parts = re.split(r" \(or |\)?, or ", m.group(1))
        if len(parts) > 1:
            print("BADFORM", c["class"], r)
        for cmd in parts:
            if cmd.count(")") > cmd.count("("):  # the close of "(or ...)"
                cmd = cmd[:-1]
            if cmd_re.match(": " + cmd):
                print("CMD", c["class"], c["pid"], cmd.replace("<cores>", others))
PY

# live chains until the contention chain names our hog (another process of
# the machine may preempt the workload too: its advice is not ours to run)
out=$TMP/live.json
taskset -c "$A" "$IG" --pid "$pids" --batch --json -d 1 -n 60 >"$out" 2>"$TMP/live.err" &
ig=$!
cleanup_hooks+=("kill $ig 2>/dev/null")
# both chains in one frame, read as the commands below are (a frame's
# procs carry a "cpu_quota" object too: a grep for the word is not enough)
have_chains() { [ -f "$out" ] && python3 "$TMP/frame.py" check "$out" "$hog" "$wl" "${wl2:-0}" "$others"; }
if ! wait_until 60 have_chains; then
	bad "no contention chain naming ig-hog[$hog] (and quota chain) in 60 s"
	sed 's/^/     | /' "$TMP/live.err" | tail -5
	grep -o '"summary":"[^"]*"' "$out" | sort | uniq -c | sort -rn | head -5 | sed 's/^/     | /'
fi
kill "$ig" 2>/dev/null
wait "$ig" 2>/dev/null

# the commands of the last such frame
python3 "$TMP/frame.py" cmds "$out" "$hog" "$wl" "${wl2:-0}" "$others" >"$TMP/cmds" ||
	bad "extracting the commands"
sed 's/^/     /' "$TMP/cmds"

nice_of() { awk '{ sub(/.*\) /, ""); print $17 }' "/proc/$1/task/$2/stat"; }   # field 19
policy_of() { awk '{ sub(/.*\) /, ""); print $39 }' "/proc/$1/task/$2/stat"; } # field 41
cpus_of() { # a task's CPUs, as a comma list
	taskset -pc "$1" | sed 's/.*: *//' | tr ',' '\n' |
		awk -F- 'NF == 2 { for (i = $1; i <= $2; i++) print i; next } { print }' | paste -sd, -
}
ran=""
while read -r kind cls pid cmd; do
	case $kind in
	BADFORM) bad "$cls: a command must end its recommendation: $pid $cmd"; continue ;;
	NOFRAME) bad "no frame of the live run holds the contention and quota chains"; continue ;;
	CMD) ;;
	*) continue ;;
	esac
	# ours only: the pid a command ends with, or its /proc/PID, is one of ours
	for n in $(grep -oE '(/proc/[0-9]+| [0-9]+$)' <<<"$cmd" | grep -oE '[0-9]+'); do
		case ",$pids," in *",$n,"*) ;; *) bad "$cls advice names pid $n, not ours: $cmd"; continue 2 ;; esac
	done
	case $cmd in
	*"/sys/fs/cgroup"*) [ -n "$CG" ] && [[ $cmd == *"$CG/"* ]] ||
		{ bad "$cls advice names a cgroup that is not the workload's ($CG): $cmd"; continue; } ;;
	esac
	word=${cmd%% *}
	echo "run  $cmd"
	if ! bash -c "$cmd" >"$TMP/run.out" 2>&1; then
		bad "$cls: '$cmd' failed: $(head -c 300 "$TMP/run.out")"
		continue
	fi
	ran="$ran $word"
	case $word in
	renice)
		for t in $(ls "/proc/$hog/task"); do
			expect_eq "renice: nice of ig-hog thread $t" "$(nice_of "$hog" "$t")" 19
		done ;;
	chrt)
		for t in $(ls "/proc/$hog/task"); do
			expect_eq "chrt: policy of ig-hog thread $t (5 = SCHED_IDLE)" "$(policy_of "$hog" "$t")" 5
		done ;;
	taskset)
		for t in $(ls "/proc/$wl/task"); do
			expect_eq "taskset: CPUs of workload thread $t" "$(cpus_of "$t")" "$others"
		done ;;
	echo)
		want=$(sed -n 's/^echo "*\([0-9]*\).*/\1/p' <<<"$cmd")
		if [ "$CGV" = 2 ]; then got=$(cut -d' ' -f1 "$CG/cpu.max"); else got=$(cat "$CG/cpu.cfs_quota_us"); fi
		expect_eq "quota of $CG after the advice" "$got" "$want"
		[ "$want" -gt 20000 ] && ok "the advice raises the quota (20000 -> $want)" ||
			bad "the advice does not raise the quota: $want"
		for t in $(ls "/proc/$wl2/task"); do
			grep -q ":${CG#/sys/fs/cgroup/cpu}\$\|::${CG#/sys/fs/cgroup}\$" "/proc/$wl2/task/$t/cgroup" &&
				ok "quota workload thread $t is in that cgroup" ||
				bad "quota workload thread $t is not in $CG"
		done ;;
	cat) grep -q throttled "$TMP/run.out" && ok "$cmd shows the throttling" || bad "$cmd: no throttling counts" ;;
	*) bad "$cls: no check for a '$word' command: $cmd" ;;
	esac
done <"$TMP/cmds"
for w in renice chrt taskset ${CG:+echo cat}; do
	[[ " $ran " == *" $w "* ]] || bad "no '$w' command was recommended and run"
done
kill "$hog" "$wl" ${wl2:+"$wl2"} 2>/dev/null
wait 2>/dev/null
finish
