#!/usr/bin/env bash
# make demo: the cpu-contention demo. A training-like loop pinned to CPU 1
# with a CPU hog on the same CPU, traced live. In a terminal it opens the
# full-screen viewer (quit with q); without one, or with DEMO_BATCH=1, it
# prints batch frames and the final diagnosis.
set -u
cd "$(dirname "$0")/.."
B=${BUILD:-build}
IG=$B/ingero-top
if [ "$(id -u)" != 0 ]; then
	echo "demo: live tracing needs root; run 'sudo make demo'."
	echo "demo: or look at a recording without root: $IG --replay ../shared/traces/pytorch-dataloader-starvation.db"
	exit 1
fi
cpu=$(( $(nproc) > 1 ? 1 : 0 ))
"$B/tests/progs/hog" --cpu "$cpu" --seconds 600 & hog=$!
trap 'kill $hog 2>/dev/null' EXIT
wl=("$B/workload" --iters 100000 --kernels 4 --kernel-us 2000 --h2d 1048576 --sync-every 1
	--malloc-every 20 --cpu "$cpu")
if [ -t 0 ] && [ -t 1 ] && [ -z "${DEMO_BATCH:-}" ] && [ -z "${CI:-}" ]; then
	"$IG" -- "${wl[@]}"
else
	echo "demo: cpu-contention: workload and ig-hog[$hog] share CPU $cpu; 5 frames"
	timeout -s INT 20 "$IG" --batch -n 5 -d 2 -- "${wl[@]}" 2>/dev/null
fi
