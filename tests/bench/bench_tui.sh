#!/usr/bin/env bash
# CPU use of the full-screen viewer, measured on the real binary in a tmux
# pane (120x40, default theme, 1 s refresh):
#   1. idle replay: a recording replayed to its end and paused
#   2. idle live (root): tracing a command that makes no CUDA calls
#   3. live at about 50 000 events/s (root): the test workload on the shim
# For each: ingero-top's own CPU (user + system, all threads) as % of one
# core, and in live mode the run time of its BPF programs (kernel.bpf_stats,
# charged to the traced threads), which is the rest of the collection cost.
# Targets (issue 5): < 5 % idle, < 25 % at 50 000 events/s, collection
# included. Prints one line per case; exits 77 when tmux is missing.
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
IG=${IG:-$PWD/$B/ingero-top}
WL=${WL:-$PWD/$B/workload}
FIXTURE=${FIXTURE:-${IG_TRACES:-$PWD/tests/fixtures/ingero}/pytorch-dataloader-starvation.db}
SECS=${SECS:-20}
SOCK=ingero-bench-$$
TM=(tmux -L "$SOCK" -f /dev/null)
command -v tmux >/dev/null || { echo "skip: tmux missing"; exit 77; }
[ -x "$IG" ] || { echo "skip: $IG not built"; exit 77; }
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
cleanup() {
	"${TM[@]}" kill-server 2>/dev/null
	[ "$(id -u)" = 0 ] && sysctl -qw kernel.bpf_stats_enabled="$stats_was" 2>/dev/null
}
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# BPF program ids loaded now, one per line
prog_ids() { /usr/sbin/bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
try:
    print("\n".join(str(p["id"]) for p in json.load(sys.stdin)))
except Exception:
    pass'; }
# run time (ns) of the programs that were not loaded before the case began
# (bpftool here cannot tell which process holds a program)
bpf_ns() {
	/usr/sbin/bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
old = set(open(sys.argv[1]).read().split())
try:
    progs = json.load(sys.stdin)
except Exception:
    progs = []
print(sum(p.get("run_time_ns", 0) for p in progs if str(p["id"]) not in old))' "$ids_before"
}
# Median time from a key press (h) to the help on the screen, ms, over 5
# tries (tmux send-keys and capture-pane included, so an upper bound).
key_latency() {
	local i t0 t1 all=()
	for i in 1 2 3 4 5; do
		t0=$(date +%s%N)
		"${TM[@]}" send-keys -t b h
		for _ in $(seq 200); do
			"${TM[@]}" capture-pane -p -t b | grep -q 'help (' && break
			sleep 0.005
		done
		t1=$(date +%s%N)
		all+=($(((t1 - t0) / 1000000)))
		"${TM[@]}" send-keys -t b Escape
		sleep 0.3
	done
	printf '%s\n' "${all[@]}" | sort -n | sed -n 3p
}
evs() { "${TM[@]}" capture-pane -p -t b | grep -oE 'ev/s [0-9.k]+' | head -1 | cut -d' ' -f2; }

# measure NAME WARMUP COMMAND...
measure() {
	local name=$1 warm=$2
	shift 2
	ids_before=$(mktemp)
	prog_ids >"$ids_before"
	"${TM[@]}" new-session -d -s b -x 120 -y 40 "$*; sleep 600"
	sleep "$warm"
	local pid
	pid=$(pgrep -n -f -- "^$IG ") || { echo "$name: ingero-top did not start"; return; }
	local t0 b0 t1 b1
	t0=$(cpu_ticks "$pid")
	b0=$(bpf_ns "$pid")
	sleep "$SECS"
	t1=$(cpu_ticks "$pid")
	b1=$(bpf_ns "$pid")
	local hz
	hz=$(getconf CLK_TCK)
	local rate
	rate=$(evs)
	local lat
	lat=$(key_latency)
	python3 - "$name" "$t0" "$t1" "$b0" "$b1" "$SECS" "$hz" "${rate:-?}" "$lat" <<'PY'
import sys
name, t0, t1, b0, b1, secs, hz, rate, lat = sys.argv[1:]
ui = (int(t1) - int(t0)) / int(hz) / int(secs) * 100
bpf = (int(b1) - int(b0)) / 1e9 / int(secs) * 100
print(f"{name:<38} ev/s {rate:>6}  ingero-top {ui:5.1f} %  bpf {bpf:5.1f} %  "
      f"total {ui + bpf:5.1f} % of a core  key->screen {lat} ms")
PY
	"${TM[@]}" kill-server 2>/dev/null
	rm -f "$ids_before"
	# wait for the probes to be detached before the next case
	for _ in $(seq 120); do pgrep -f -- "^$IG " >/dev/null || break; sleep 1; done
}

echo "ingero-top viewer CPU, ${SECS} s per case, $(nproc) CPUs, $(uname -r)"
measure "idle replay (paused at the end)" 4 "$IG --speed 0 --replay $FIXTURE"
if [ "$(id -u)" != 0 ]; then
	echo "live cases: skipped (need root)"
	exit 0
fi
sysctl -qw kernel.bpf_stats_enabled=1
measure "idle live (-- sleep, no CUDA)" 8 "$IG -- sleep 3600"
[ -x "$WL" ] || { echo "live load: skipped ($WL not built)"; exit 0; }
measure "live, workload ~50k events/s" 10 \
	"$IG -- $WL --iters 1000000000 --threads 1 --kernels 4 --kernel-us 40 --sync-every 1 --driver"
measure "live, flood (2 threads, tiny kernels)" 10 \
	"$IG -- $WL --iters 1000000000 --threads 2 --kernels 8 --kernel-us 20 --sync-every 1 --driver"
