#!/usr/bin/env bash
# Runs every benchmark under tests/bench and prints their figures.
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
for b in "$B"/tests/bench/bench_*; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"; "$b"; echo
done
for b in tests/bench/bench_*.sh; do
	echo "== $(basename "$b")"; bash "$b"; echo
done
# The fleet (ingero-top --ssh) against 16 and 64 simulated hosts.
echo "== fleet_bench.py"; python3 tests/bench/fleet_bench.py; echo
