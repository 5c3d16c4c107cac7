#!/usr/bin/env bash
# Before and after: the per-call cost of two builds of ingero-top, measured
# in pairs taken in turn (A, B, A, B, ...) so that a machine that drifts
# during the run moves both alike. Usage:
#
#   tests/bench/compare_builds.sh BEFORE_DIR AFTER_DIR
#
# where each DIR is a checkout built with `make test-build` (its build/
# holds ingero-top, workload and the shim). Prints, per call, the time the
# tracing adds to the workload (its own wall clock, untraced run of the
# same pair subtracted), the paired difference with its standard error, and
# the kernel's own run time of the two call programs (kernel.bpf_stats_enabled),
# which no user-space noise reaches. Needs root. PAIRS (default 12) and
# ITERS (default 40000) set the length. STATS=0 leaves bpf_stats off (and
# the kernel figures out): the statistics add two clock reads to every
# program run, so a build that runs more programs per call (the wait
# evidence's syscall tracepoints fire at each uretprobe syscall) looks
# dearer with them on than it is.
set -u
[ $# = 2 ] || { echo "usage: $0 BEFORE_DIR AFTER_DIR" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "compare_builds: needs root"; exit 77; }
command -v bpftool >/dev/null || { echo "compare_builds: bpftool not installed"; exit 77; }
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd)
PAIRS=${PAIRS:-12}
ITERS=${ITERS:-40000}
args=(--iters "$ITERS" --kernels 8 --kernel-us 1 --sync-every 1)
for d in "$A" "$B"; do
	[ -x "$d/build/ingero-top" ] && [ -x "$d/build/workload" ] ||
		{ echo "compare_builds: $d/build has no ingero-top or workload (make test-build)" >&2; exit 2; }
done
tmp=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$tmp"' EXIT
STATS=${STATS:-1}
[ "$STATS" = 1 ] && sysctl -qw kernel.bpf_stats_enabled=1

"$A/build/workload" "${args[@]}" --expect "$tmp/expect" 2>/dev/null
calls=$(awk '$1 != "pid" {s += $2} END {print s}' "$tmp/expect")
wall() { sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p'; }

# The run time the kernel counted for call_enter and call_exit, read while
# the traced run is still going (the programs go when it ends).
prog_ns() {
	bpftool prog show -j 2>/dev/null | python3 -c '
import json, sys
r = {}
for p in json.load(sys.stdin):
    if p.get("name") in ("call_enter", "call_exit") and p.get("run_cnt", 0) > 0:
        r[p["name"]] = p["run_time_ns"] / p["run_cnt"]
if len(r) == 2:
    print("%.1f %.1f" % (r["call_enter"], r["call_exit"]))'
}

one() { # dir -> "base_s traced_s enter_ns exit_ns"
	local d=$1 base traced ns="" last=""
	base=$("$d/build/workload" "${args[@]}" 2>&1 >/dev/null | wall)
	"$d/build/ingero-top" --batch --summary --no-system-libs --no-stacks -- \
		"$d/build/workload" "${args[@]}" >/dev/null 2>"$tmp/err" &
	local pid=$!
	while [ "$STATS" = 1 ] && kill -0 $pid 2>/dev/null; do
		ns=$(prog_ns)
		[ -n "$ns" ] && last=$ns
		sleep 0.3
	done
	wait $pid
	traced=$(wall <"$tmp/err")
	echo "$base $traced ${last:-0 0}"
}

for i in $(seq "$PAIRS"); do
	echo "A $(one "$A")" >>"$tmp/runs"
	echo "B $(one "$B")" >>"$tmp/runs"
done

awk -v calls="$calls" '
	{ add = ($3 - $2) / calls * 1e6 }
	$1 == "A" { a = add; ae += $4; ax += $5; sa += add; n++ }
	$1 == "B" { d = add - a; s += d; ss += d * d; be += $4; bx += $5; sb += add }
	END {
		m = s / n; sd = sqrt(ss / n - m * m)
		printf "calls per run                 %d\n", calls
		printf "pairs                         %d\n", n
		printf "added per call, before        %.3f us\n", sa / n
		printf "added per call, after         %.3f us\n", sb / n
		printf "after - before                %+.3f us (standard error %.3f, %+.1f %%)\n", m, sd / sqrt(n), 100 * m / (sa / n)
		printf "call_enter in the kernel      %.1f ns -> %.1f ns\n", ae / n, be / n
		printf "call_exit in the kernel       %.1f ns -> %.1f ns\n", ax / n, bx / n
	}' "$tmp/runs"
