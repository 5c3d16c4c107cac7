#!/usr/bin/env bash
# needs: root
# A process that may run on fewer CPUs than the host has (docs/detection.md,
# "Confined to some CPUs"): contention among its own threads is then its
# affinity's doing as much as theirs. The collector reads each target's
# affinity and its cgroup's cpuset (collect/cpuaff.c, with its environment:
# IG_EV_ENV's stream); a contention chain says how many CPUs it may use of
# the host's and how it is confined, and advises widening it. Through the
# real probes, causegen with a busy thread of its own on its CPU:
#   affinity  pinned with sched_setaffinity (causegen pins itself, as
#             taskset does): "its CPU affinity", the advice's loop widens
#             every thread of it and of its children when pasted (live);
#   cpuset    confined by a cgroup's cpuset (v1 or v2, where the host has
#             one): "its cgroup's cpuset", the advice names the cpuset.
. "$(dirname "$0")/lib.sh"
need_root
pick_cpus 2
online=$(nproc --all)
CG=("$B/tests/progs/causegen" --cpu "${CPUS[1]}" --kernels 2 --kernel-us 1000 --host-us 1000
	--own-hogs 1)

# judge NAME WORDS: the contention chain's explanation says WORDS
judge() {
	python3 - "$TMP/$1.json" "$TMP/$1.truth" "$1" "$2" "$online" >>"$TMP/check.txt" <<'PY'
import json, sys
out, truth, name, words, online = sys.argv[1:6]
s = json.loads(open(out).read().splitlines()[-1])
pid = json.load(open(truth))["pid"]
c = [x for x in s["chains"] if x["pid"] == pid and x["class"] == "cpu_contention"]
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + f"{name}: {what}")
check(bool(c), f"a contention chain: {[x['class'] for x in s['chains'] if x['pid'] == pid]}")
if c:
    want = f"It may run on 1 of the host's {online} CPUs ({words}"
    check(want in c[0]["explanation"], f"'{want}' in: {c[0]['explanation']}")
    recs = " | ".join(c[0]["recommendations"])
    cmd = (f"for p in {pid} $(pgrep -P {pid}); do taskset -a -cp 0-{int(online) - 1} $p; done"
           if words.startswith("its CPU") else f"cat /proc/{pid}/cpuset")
    check(cmd in recs, f"advice '{cmd}': {recs}")
PY
}

timeout 120 "$IG" --json --summary --no-system-libs -- "${CG[@]}" --seconds 3 \
	--truth "$TMP/affinity.truth" >"$TMP/affinity.json" 2>"$TMP/affinity.err"
expect_eq "affinity: exit status" "$?" 0
judge affinity "its CPU affinity"

# the advice pasted on a live process widens every thread
"${CG[@]}" --seconds 60 >/dev/null 2>&1 &
cg=$!
cleanup_hooks+=("kill $cg 2>/dev/null")
live_cmd "$cg" cpu_contention "for p in" '"class":"cpu_contention"'
bash -c "$LIVE_CMD" >/dev/null 2>&1
all=$(cat /sys/devices/system/cpu/online)
got=$(cat /proc/"$cg"/task/*/status | awk '/^Cpus_allowed_list/ { print $2 }' | sort -u | tr '\n' ' ')
expect_eq "every thread's CPUs after the pasted command" "$got" "$all "
kill "$cg"
wait "$cg" 2>/dev/null

# a cgroup's cpuset: v1's controller, else v2's where it can be enabled
dir=
if [ -d /sys/fs/cgroup/cpuset ] && [ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]; then
	dir=/sys/fs/cgroup/cpuset/ig-confined.$$
	mkdir "$dir" && echo "${CPUS[1]}" >"$dir/cpuset.cpus" &&
		cat /sys/fs/cgroup/cpuset/cpuset.mems >"$dir/cpuset.mems" || dir=
elif grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	dir=/sys/fs/cgroup/ig-confined.$$
	mkdir "$dir" && echo "${CPUS[1]}" >"$dir/cpuset.cpus" || dir=
fi
if [ -n "$dir" ]; then
	cleanup_hooks+=("rmdir $dir 2>/dev/null")
	timeout 120 "$IG" --json --summary --no-system-libs -- sh -c \
		"echo \$\$ > $dir/cgroup.procs && exec ${CG[*]} --seconds 3 --truth $TMP/cpuset.truth" \
		>"$TMP/cpuset.json" 2>"$TMP/cpuset.err"
	expect_eq "cpuset: exit status" "$?" 0
	judge cpuset "its cgroup's cpuset"
else
	echo "note: no cpuset controller to confine with here: the cpuset case not run"
fi
cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
finish
