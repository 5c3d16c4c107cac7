#!/usr/bin/env bash
# Per-call cost of tracing: the same workload untraced, under three bpftrace
# scripts with uprobe+uretprobe pairs on the same functions (counting pairs;
# a latency histogram per op; the same keyed by the user stack), under the
# steps of tests/tools/probe_floor (the least a duration tracer does), and
# under ingero-top (--no-stacks, the default tail stacks, --stack-mode all).
# Prints the per-call cost of each and the ratios to bpftrace (what a user
# would write) and to the floor. Needs root; without bpftrace, or where it
# cannot attach, its rows say so and the others are printed.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
IG=$PWD/$B/ingero-top
WL=$PWD/$B/workload
FLOOR=$PWD/$B/tests/tools/probe_floor
ITERS=${ITERS:-10000}
ROUNDS=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "bench_collect: needs root"; exit 77; }
BT=1
command -v bpftrace >/dev/null || BT=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Many cheap calls: 8 launches (each also a driver launch) and a sync per step.
args=(--iters "$ITERS" --kernels 8 --kernel-us 1 --sync-every 1)
"$WL" "${args[@]}" --expect "$tmp/expect" 2>/dev/null
calls=$(awk '$1 != "pid" {s += $2} END {print s}' "$tmp/expect")

# bpftrace: a pair on every symbol ingero-top attaches in the shim, with the
# bodies BODY_ENTRY and BODY_RET (one script per kind of user script):
#   bt   counting pairs (bpftrace drops probes whose body does nothing), the
#        cost of the traps plus a per-CPU increment;
#   btl  a latency histogram per op, as a user would write one;
#   bts  the same keyed by the user stack too (ustack(16)).
# Each prints, every 200 ms, what shows that its probes fire (@n or @s).
bt_script() { # NAME ENTRY RET SHOW
	{
		echo "BEGIN { printf(\"attached\n\"); } interval:ms:200 { print($4); }"
		for lib in "$B/shim/libcudart.so.12" "$B/shim/libcuda.so.1"; do
			p=$(readlink -f "$lib")
			for sym in $(nm -D --defined-only "$p" | awk '$2 == "T" {print $3}' | grep -E '^cu(da)?[A-Z]'); do
				echo "uprobe:$p:$sym { $2 } uretprobe:$p:$sym { $3 }"
			done
		done
	} >"$tmp/$1.bt"
}
bt_script bt '@n = count();' '@n = count();' '@n'
bt_script btl '@s[tid] = nsecs;' '@[probe] = hist(nsecs - @s[tid]);' '@s'
bt_script bts '@s[tid] = nsecs;' '@[probe, ustack(16)] = hist(nsecs - @s[tid]);' '@s'

# Time each run with the workload's own clock (wall_s on its summary line),
# so start-up and attach time of the tracers do not count.
wall_ns() { sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' | awk '{printf "%.0f\n", $1 * 1e9}'; }
run_base() { "$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns; }
# run_bpftrace NAME: one timed run under the script NAME.bt; prints nothing
# when bpftrace did not attach or its probes never fired (the reason is in
# NAME.err, and that configuration's rows are skipped).
run_bpftrace() {
	local log=$tmp/$1.log
	: >"$log"
	bpftrace "$tmp/$1.bt" >"$log" 2>&1 & local bt=$!
	# BEGIN prints once the probes are set up; uprobes still take a moment
	# to become live on a VM, so wait until a probe is seen to fire.
	for _ in $(seq 600); do
		grep -q attached "$log" && break
		kill -0 $bt 2>/dev/null || break
		sleep 0.1
	done
	local fired=0
	if grep -q attached "$log"; then
		for _ in $(seq 60); do
			"$WL" --iters 1 --kernels 1 2>/dev/null
			sleep 0.5
			grep -qE '^@(n: |s\[[0-9]+\]: )[1-9]' "$log" && { fired=1; break; }
			kill -0 $bt 2>/dev/null || break
		done
	fi
	if [ $fired = 1 ]; then
		run_base
	else
		local msg
		msg=$(grep -v -e '^@' -e '^attached' -e '^Attaching' -e '^$' "$log" | head -n 1)
		echo "bpftrace did not attach: ${msg:-its probes were not seen to fire in 30 s}" >"$tmp/$1.err"
	fi
	kill -INT $bt 2>/dev/null; wait $bt 2>/dev/null
}
# The least a duration tracer can do per call on this machine, in steps
# (tests/tools/probe_floor.bpf.c): counting pairs on uprobe_multi links as
# ingero-top uses; plus a clock read at each end and a per-thread slot; plus
# a ring-buffer record per call. Where the goal is out of reach, this shows
# whether the cost is ours or the machine's.
run_floor() {
	: >"$tmp/floor.log"
	"$FLOOR" "$1" "$(readlink -f "$B/shim/libcudart.so.12")" "$(readlink -f "$B/shim/libcuda.so.1")" \
		>"$tmp/floor.log" 2>&1 & local fp=$!
	for _ in $(seq 100); do grep -q attached "$tmp/floor.log" && break; sleep 0.1; done
	for _ in $(seq 60); do
		"$WL" --iters 1 --kernels 1 2>/dev/null
		sleep 0.2
		grep -q "^hits [1-9]" "$tmp/floor.log" && break
	done
	run_base
	kill -INT $fp; wait $fp 2>/dev/null
}
# Like with like: bpftrace captures no stacks, so the comparison runs
# ingero-top with --no-stacks; the default (stacks of the tail and 1 in 64
# of the other calls) and --stack-mode all (every call's stack) are
# reported too, with the default's ratio to --no-stacks (goal <= 1.10).
run_ig() {
	"$IG" --batch --summary --no-system-libs --no-stacks -- "$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns
}
run_ig_stacks() {
	"$IG" --batch --summary --no-system-libs -- "$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns
}
run_ig_all() {
	"$IG" --batch --summary --no-system-libs --stack-mode all -- "$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns
}

# Rounds interleave the runs so that load changes hit all of them; the best
# of each is kept.
best() { sort -n | head -n 1; }
confs="base bt btl bts count clock floor ig igs iga"
for c in $confs; do : >"$tmp/$c"; done
for b in bt btl bts; do [ $BT = 1 ] || echo "bpftrace is not installed (make deps)" >"$tmp/$b.err"; done
for _ in $(seq "$ROUNDS"); do
	run_base >>"$tmp/base"
	for b in bt btl bts; do [ -e "$tmp/$b.err" ] || run_bpftrace $b >>"$tmp/$b"; done
	run_floor count >>"$tmp/count"; run_floor clock >>"$tmp/clock"; run_floor floor >>"$tmp/floor"
	run_ig >>"$tmp/ig"; run_ig_stacks >>"$tmp/igs"; run_ig_all >>"$tmp/iga"
done
for c in $confs; do
	v=$(best <"$tmp/$c")
	# a bpftrace configuration counts only if every round ran
	[ -e "$tmp/$c.err" ] && v=
	printf '%s %s\n' "$c" "${v:--}"
done >"$tmp/best"
for b in bt btl bts; do
	[ -e "$tmp/$b.err" ] && printf '%s %s\n' "$b" "$(head -n 1 "$tmp/$b.err")"
done >"$tmp/why"

# Each row: the cost added per call, and its ratio to floor 3 (the least a
# duration tracer pays here) and to the bpftrace script a user would write
# for the same information (the latency one without stacks, the ustack one
# with them). Ratios are of added costs measured in the same rounds.
awk -v c="$calls" '
FILENAME == ARGV[1] { t[$1] = $2; next }
{ why[$1] = substr($0, length($1) + 2) }
function has(k) { return t[k] != "-" }
function add(k) { return t[k] - t["base"] }
function ratio(a, b) { return (has(a) && has(b)) ? sprintf("%6.3f", add(a) / add(b)) : "     -" }
function row(name, k, ref) {
	if (!has(k)) { printf "%-36s skipped: %s\n", name, why[k]; return }
	printf "%-36s %8.3f us/call  x floor3 %s  x bpftrace %s\n", name, add(k) / c / 1000,
		ratio(k, "floor"), (ref == "" ? "     -" : ratio(k, ref))
}
END {
	printf "calls per run %d, untraced %.3f us/call; added per call, best of rounds:\n",
		c, t["base"] / c / 1000
	row("bpftrace counting pairs", "bt", "")
	row("bpftrace latency hist per op", "btl", "")
	row("bpftrace latency hist by ustack(16)", "bts", "")
	row("floor 1: counting pairs (multi)", "count", "")
	row("floor 2: + 2 clock reads, thread", "clock", "")
	row("floor 3: + ring-buffer record", "floor", "bt")
	row("ingero-top --no-stacks", "ig", "btl")
	row("ingero-top default (tail stacks)", "igs", "bts")
	row("ingero-top --stack-mode all", "iga", "bts")
	printf "ratio --no-stacks/floor 3           %s (goal <= 1.05)\n", ratio("ig", "floor")
	printf "ratio --no-stacks/bpftrace counting %s\n", ratio("ig", "bt")
	printf "ratio --no-stacks/bpftrace latency  %s\n", ratio("ig", "btl")
	printf "ratio default/bpftrace ustack       %s\n", ratio("igs", "bts")
	printf "ratio default/--no-stacks           %s (goal <= 1.10)\n", ratio("igs", "ig")
	printf "ratio all/--no-stacks               %s\n", ratio("iga", "ig")
}' "$tmp/best" "$tmp/why"
