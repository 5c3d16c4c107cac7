#!/usr/bin/env bash
# needs: root
# Container names from collection to every output: two workloads, one in a
# cgroup laid out as Docker's cgroupfs driver makes it (/docker/<id>), one
# as kubelet's (/kubepods/burstable/pod<uid>/<id>), and the launching shell
# on the host. The batch text, --json procs[].container and a recording's
# replay (text, JSON, --events name events) all name them.
. "$(dirname "$0")/lib.sh"
need_root

ID=4f1e2d3c4b5a69788796a5b4c3d2e1f04f1e2d3c4b5a69788796a5b4c3d2e1f0
KID=abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789
UID_=0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9
# A hierarchy this script may write: cgroup v2's root, else v1's pids.
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	HIER=/sys/fs/cgroup
elif [ -d /sys/fs/cgroup/pids ]; then
	HIER=/sys/fs/cgroup/pids
else
	echo "skip: no cgroup hierarchy to make container cgroups in"
	exit 77
fi
D=$HIER/docker/$ID
K=$HIER/kubepods/burstable/pod$UID_/$KID
# rmdir only what this script made, deepest first, once the processes left
cleanup_hooks+=("for d in $D $HIER/docker $K $HIER/kubepods/burstable/pod$UID_ $HIER/kubepods/burstable $HIER/kubepods; do wait_until 10 rmdir \$d 2>/dev/null; done")
for d in "$D" "$K"; do
	[ -d "$d" ] && { echo "skip: $d exists already"; exit 77; }
done
if ! mkdir -p "$D" "$K" 2>/dev/null; then
	echo "skip: cannot make cgroups under $HIER (read-only or delegated)"
	exit 77
fi

# Each workload moves itself into its cgroup before it execs, as a runtime
# moves a container's first process: it was traced (and named) on the host
# before (the sleep), the program it execs is in the container. The shell
# that launches them stays where ingero-top is.
run="sh -c 'sleep 0.2; echo \$\$ >$D/cgroup.procs && exec $WL --iters 30 --kernels 1 --expect $TMP/d.expect' &
sh -c 'sleep 0.2; echo \$\$ >$K/cgroup.procs && exec $WL --iters 30 --kernels 1 --expect $TMP/k.expect' &
wait"
"$IG" --batch --summary --no-system-libs --record "$TMP/run.db" -- sh -c "$run" \
	>"$TMP/live.txt" 2>"$TMP/live.err"
expect_eq "live --summary exit status" "$?" 0
dpid=$(awk '$1 == "pid" {print $2; exit}' "$TMP/d.expect")
kpid=$(awk '$1 == "pid" {print $2; exit}' "$TMP/k.expect")
[ -n "$dpid" ] && [ -n "$kpid" ] && ok "both workloads ran (pids $dpid, $kpid)" || bad "workloads did not run"

grep -qE '^PID +COMM +CONTAINER +CALLS/S ' "$TMP/live.txt" && ok "text: CONTAINER column" || bad "no CONTAINER column"
text_container() { awk -v p="$2" '$1 == "pid" && $2 == p && $4 == "container" {print $5; exit}' "$1"; }
expect_eq "live text: docker workload" "$(text_container "$TMP/live.txt" "$dpid")" "docker:4f1e2d3c4b5a"
expect_eq "live text: pod workload" "$(text_container "$TMP/live.txt" "$kpid")" "k8s:$UID_/abcdef012345"

json_container() { # file pid
	python3 -c 'import json, sys
for l in open(sys.argv[1]):
    for p in json.loads(l).get("procs", []):
        if p["pid"] == int(sys.argv[2]):
            print(p["container"])' "$1" "$2" | tail -n 1
}
# replays need no root: as nobody, from a file it may read
chmod 644 "$TMP/run.db"
replay() { setpriv --reuid=65534 --regid=65534 --clear-groups "$IG" --replay "$TMP/run.db" "$@"; }
replay --json --summary >"$TMP/rp.json" 2>"$TMP/rp.err"
expect_eq "replay --json exit status" "$?" 0
expect_eq "replay JSON: docker workload" "$(json_container "$TMP/rp.json" "$dpid")" "docker:4f1e2d3c4b5a"
expect_eq "replay JSON: pod workload" "$(json_container "$TMP/rp.json" "$kpid")" "k8s:$UID_/abcdef012345"
replay --batch --summary >"$TMP/rp.txt" 2>&1
expect_eq "replay text: docker workload" "$(text_container "$TMP/rp.txt" "$dpid")" "docker:4f1e2d3c4b5a"
expect_eq "replay text: pod workload" "$(text_container "$TMP/rp.txt" "$kpid")" "k8s:$UID_/abcdef012345"
# the recording: one name event per workload with its container
rows=$(sqlite3 "$TMP/run.db" "SELECT COUNT(DISTINCT pid) FROM process_names WHERE is_event = 1 AND container IN ('docker:4f1e2d3c4b5a', 'k8s:$UID_/abcdef012345')")
expect_eq "recorded name events with a container (processes)" "$rows" 2
replay --events >"$TMP/rp.events" 2>&1
grep -qE "^[0-9]+ comm pid=$dpid .* container=docker:4f1e2d3c4b5a$" "$TMP/rp.events" &&
	ok "replay --events: the docker workload's name event" || bad "no name event with the container"
finish
