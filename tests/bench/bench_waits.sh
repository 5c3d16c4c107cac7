#!/usr/bin/env bash
# What the kernel's wait evidence costs a traced thread (docs/performance.md):
# syscost (tests/progs/syscost.c) times a getppid syscall and a fresh page's
# fault by its own clock, untraced, under ingero-top --no-waits and under
# ingero-top (the page-fault tracepoints, the CPU clock's samples and, once
# the thread has spent a second in syscalls as syscost's 2 s warm-up makes
# it, the syscall tracepoints); the runs alternate, ROUNDS of each (default
# 5), best kept. Prints the ns each adds and the ratios to untraced; then
# the kernel's own run time per program (kernel.bpf_stats_enabled) of the
# wait evidence's programs in one traced run. Needs root.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
IG=$PWD/$B/ingero-top
SC=$PWD/$B/tests/progs/syscost
ROUNDS=${ROUNDS:-5}
[ "$(id -u)" = 0 ] || { echo "bench_waits: needs root"; exit 77; }
[ -x "$SC" ] || { echo "bench_waits: build first (make test-build)"; exit 77; }
tmp=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$tmp"' EXIT

one() { # mode -> "syscall_ns fault_ns"
	case $1 in
	base) "$SC" 200000 8192 2 ;;
	nowaits) "$IG" --batch --no-stacks --no-system-libs -d 60 --no-waits -- "$SC" 200000 8192 2 2>/dev/null ;;
	waits) "$IG" --batch --no-stacks --no-system-libs -d 60 -- "$SC" 200000 8192 2 2>/dev/null ;;
	esac | awk '$1 == "syscall_ns" { print $2, $4 }'
}
for m in base nowaits waits; do echo "1e18 1e18" >"$tmp/$m"; done
for r in $(seq "$ROUNDS"); do
	for m in base nowaits waits; do
		read -r s f < <(one $m)
		read -r bs bf <"$tmp/$m"
		awk -v s="$s" -v f="$f" -v bs="$bs" -v bf="$bf" \
			'BEGIN { print (s < bs ? s : bs), (f < bf ? f : bf) }' >"$tmp/$m"
	done
done
read -r s0 f0 <"$tmp/base"
read -r s1 f1 <"$tmp/nowaits"
read -r s2 f2 <"$tmp/waits"
awk -v s0="$s0" -v f0="$f0" -v s1="$s1" -v f1="$f1" -v s2="$s2" -v f2="$f2" 'BEGIN {
	printf "%-34s %12s %12s\n", "best of '"$ROUNDS"'", "syscall", "page fault"
	printf "%-34s %9.1f ns %9.1f ns\n", "untraced", s0, f0
	printf "%-34s %9.1f ns %9.1f ns\n", "ingero-top --no-waits", s1, f1
	printf "%-34s %9.1f ns %9.1f ns\n", "ingero-top (wait evidence on)", s2, f2
	printf "%-34s %9.1f ns %9.1f ns\n", "added by the wait evidence", s2 - s1, f2 - f1
	printf "%-34s %12.3f %12.3f\n", "ratio waits / untraced", s2 / s0, f2 / f0
	printf "%-34s %12.3f %12.3f\n", "ratio --no-waits / untraced", s1 / s0, f1 / f0
}'

# the programs' own run time, per run, while a traced syscost runs
sysctl -qw kernel.bpf_stats_enabled=1
"$IG" --batch --no-stacks --no-system-libs -d 60 -- "$SC" 1000000 16384 2 >/dev/null 2>&1 &
pid=$!
last=""
while kill -0 $pid 2>/dev/null; do
	s=$(bpftool prog show -j 2>/dev/null | python3 -c '
import json, sys
want = ("w_sys_enter", "w_sys_exit", "w_fault", "w_memcg_event", "w_filemap_fault",
        "btf_sched_switch", "btf_sched_waking")
for p in json.load(sys.stdin):
    if p.get("name") in want and p.get("run_cnt", 0) > 0:
        print("%-18s %10d runs %8.1f ns per run" % (p["name"], p["run_cnt"],
              p["run_time_ns"] / p["run_cnt"]))' 2>/dev/null)
	[ -n "$s" ] && last=$s
	sleep 0.3
done
wait $pid
echo "kernel run time of the programs (kernel.bpf_stats_enabled, adds ~10 ns each):"
echo "${last:-  (none seen: bpftool missing?)}"
