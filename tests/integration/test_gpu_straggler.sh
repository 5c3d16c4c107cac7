#!/usr/bin/env bash
# needs: root
# NCCL stragglers from real uprobes: two ranks as two processes, one of them
# late on its host before every collective. The rank that waits has the
# long completion waits, the late one the short ones; the straggler chain
# is on the waiting rank and names the late rank and its process, whichever
# rank is late; a recording of the run replays to the same chain; equal
# ranks raise none.
. "$(dirname "$0")/lib.sh"
need_root

run() { # name, extra workload args...
	local name=$1; shift
	"$IG" --batch --json --summary --no-system-libs --record "$TMP/$name.db" -- "$WL" --iters 500 \
		--kernels 2 --kernel-us 1000 --nccl --fork --nccl-ops allreduce,sendrecv \
		--nccl-types float32 "$@" --expect "$TMP/$name.expect" >"$TMP/$name.json" 2>"$TMP/$name.err"
	expect_eq "$name: exit status" "$?" 0
	PARENT=$(awk '$1 == "pid" {print $2}' "$TMP/$name.expect" | sed -n 1p)
	CHILD=$(awk '$1 == "pid" {print $2}' "$TMP/$name.expect" | sed -n 2p)
}

# chain FILE: "pid culprit_pid class severity" of the straggler chains of the
# last JSON object in FILE, and "rank pid wait_mean_ns" of its NCCL ranks.
chains() {
	python3 - "$1" <<'PY'
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
for c in last["chains"]:
    if c["class"] == "nccl_straggler":
        print("chain", c["pid"], c["culprit_pid"], c["severity"], c["summary"])
for r in last.get("nccl", {}).get("ranks", []):
    print("rank", r.get("rank"), r["pid"], r["wait_mean_ns"], r["done_win"])
PY
}

check_late() { # name, late rank
	local name=$1 late=$2 waiter victim culprit
	if [ "$late" = 1 ]; then victim=$PARENT culprit=$CHILD waiter=0; else victim=$CHILD culprit=$PARENT waiter=1; fi
	chains "$TMP/$name.json" >"$TMP/$name.chains"
	local c
	c=$(awk '$1 == "chain" {print $2, $3, $4}' "$TMP/$name.chains")
	expect_eq "$name: straggler chain on rank $waiter's process, naming rank $late's, HIGH" "$c" \
		"$victim $culprit HIGH"
	grep -q "NCCL straggler: rank $late of 2, workload\[$culprit\], is late; rank $waiter, workload\[$victim\], waits" \
		"$TMP/$name.chains" && ok "$name: the summary names the late rank and its process" ||
		{ bad "$name: summary"; cat "$TMP/$name.chains"; }
	local wv wl
	wv=$(awk -v r="$waiter" '$1 == "rank" && $2 == r {print $4}' "$TMP/$name.chains")
	wl=$(awk -v r="$late" '$1 == "rank" && $2 == r {print $4}' "$TMP/$name.chains")
	[ "${wv:-0}" -gt 3000000 ] && [ "${wl:-9}" -lt $((wv / 3)) ] &&
		ok "$name: completion wait per operation: rank $waiter ${wv} ns, rank $late ${wl} ns" ||
		bad "$name: completion waits rank $waiter '${wv}', rank $late '${wl}'"
	chmod 644 "$TMP/$name.db"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$IG" --batch --json --summary \
		--replay "$TMP/$name.db" >"$TMP/$name.rp.json" 2>/dev/null
	chains "$TMP/$name.rp.json" >"$TMP/$name.rp.chains"
	c=$(awk '$1 == "chain" {print $2, $3, $4}' "$TMP/$name.rp.chains")
	expect_eq "$name: replay: the same straggler chain" "$c" "$victim $culprit HIGH"
}

run late1 --straggler-rank 1 --straggler-us 4000
check_late late1 1
run late0 --straggler-rank 0 --straggler-us 4000
check_late late0 0
run even
n=$(chains "$TMP/even.json" | grep -c "^chain")
expect_eq "even ranks: no straggler chain" "$n" 0
finish
