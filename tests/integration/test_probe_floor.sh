#!/usr/bin/env bash
# needs: root
# The instrument of the overhead benchmark (tests/bench/bench_collect.sh):
# probe_floor must see exactly the calls the workload makes, in each mode,
# on the same functions ingero-top traces, and leave nothing attached.
. "$(dirname "$0")/lib.sh"
need_root

PF=$B/tests/tools/probe_floor
RT=$(readlink -f "$B/shim/libcudart.so.12")
DR=$(readlink -f "$B/shim/libcuda.so.1")
"$WL" --iters 100 --kernels 8 --sync-every 1 --expect "$TMP/expect" >/dev/null 2>&1
calls=$(awk '$1 != "pid" {s += $2} END {print s}' "$TMP/expect")
expect_eq "workload: calls per run" "$calls" 1804

# The links a process holds, by id (other tracers may run meanwhile).
links_of() { cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "link_id:" {print $2}' | sort -u; }
held=""
# Other tests may call the shim's functions meanwhile (run.sh runs some
# beside this one): only the workload's process counts (--pid), the
# workload held until the probes are attached, then exec'd in that pid.
for mode in count clock floor; do
	rm -f "$TMP/go"
	sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done; shift; exec "$@"' sh "$TMP/go" \
		"$WL" --iters 100 --kernels 8 --sync-every 1 >/dev/null 2>&1 &
	wl=$!
	"$PF" --pid $wl "$mode" "$RT" "$DR" >"$TMP/$mode.out" 2>"$TMP/$mode.err" &
	pf=$!
	wait_until 30 grep -q attached "$TMP/$mode.out" || bad "$mode: never attached: $(cat "$TMP/$mode.err")"
	held="$held $(links_of $pf | tr '\n' ' ')"
	# the probes fire in the calls: the counts are complete when it exits
	touch "$TMP/go"
	wait $wl
	# clock mode's only sign is the "hits" line it prints every 100 ms
	wait_until 30 grep -q '^hits [1-9]' "$TMP/$mode.out" || bad "$mode: the probes never fired"
	kill -INT $pf; wait $pf; rc=$?
	expect_eq "$mode: exit status" "$rc" 0
	last=$(tail -n 1 "$TMP/$mode.out")
	case $mode in
	count) expect_eq "count: entries and returns" "$(echo "$last" | awk '{print $2, $4}')" "$calls $calls" ;;
	clock) expect_eq "clock: hits (durations summed)" "$(grep -c '^hits [1-9]' "$TMP/$mode.out" | awk '{print ($1 > 0)}')" 1 ;;
	floor) expect_eq "floor: one record per call" "$(echo "$last" | awk '{print $6}')" "$calls" ;;
	esac
done

"$PF" --pid 0 count "$RT" >/dev/null 2>"$TMP/badpid.err"; rc=$?
expect_eq "--pid 0: exit status" "$rc" 2
"$PF" bogus "$RT" >/dev/null 2>"$TMP/bad.err"; rc=$?
expect_eq "unknown mode: exit status" "$rc" 1
"$PF" count /etc/passwd >/dev/null 2>"$TMP/bad2.err"; rc=$?
expect_eq "no CUDA functions: exit status" "$rc" 1
expect_eq "no CUDA functions: one line" "$(wc -l <"$TMP/bad2.err")" 1
alive_links() { # ids still loaded, of those given
	bpftool link show -j 2>/dev/null | python3 -c '
import json, sys
want = set(sys.argv[1:])
print(" ".join(str(l["id"]) for l in json.load(sys.stdin) if str(l["id"]) in want))' "$@"
}
[ -n "${held// /}" ] && ok "the runs held links$held" || bad "no links seen while attached"
none_alive() { [ -z "$(alive_links $held)" ]; }
wait_until 20 none_alive
expect_eq "links of the runs left attached" "$(alive_links $held)" ""
finish
