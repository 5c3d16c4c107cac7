#!/usr/bin/env bash
# needs: root
# A CUDA runtime that a process loads with dlopen after ingero-top started
# (a pip wheel's libcudart, here a private copy of the shim: a file
# ingero-top has never seen) is attached before dlopen returns: the
# dynamic loader's _dl_debug_state uprobe sees the new library and holds
# the process until its probes are live. So calls made right after dlopen
# returns (no pause) are all counted: with --pid, and in the default mode
# for a process started after ingero-top. Repeated (REPEAT, default 2).
. "$(dirname "$0")/lib.sh"
need_root
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
PY=$ROOT/tests/progs/late_dlopen.py
V=$TMP/venv/lib
mkdir -p "$V" && cp "$B/shim/libcudart.so.12" "$B/shim/libcuda.so.1" "$V/" && chmod -R a+rX "$TMP/venv"
N=40

check_counts() { # name, events file, pid (other CUDA processes may run too)
	for op in cudaMalloc cudaFree cuMemAlloc cuMemFree; do
		expect_eq "$1: $op calls" "$(awk -v p="pid=$3" '$2 == "call" && $3 == p' "$2" | grep -c " op=$op ")" "$N"
	done
}
wait_for() { for _ in $(seq 100); do grep -q "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done; return 1; }

calls_of() { awk -v p="pid=$2" '$2 == "call" && $3 == p' "$1" | wc -l; }
# Waits until the events file has all 4*N calls of pid (or 10 s), while
# ingero-top still runs: --events writes as it reads (1 when not).
wait_calls() { for _ in $(seq 100); do [ "$(calls_of "$1" "$2")" -ge $((4 * N)) ] && return 0; sleep 0.1; done; return 1; }

for run in $(seq "${REPEAT:-2}"); do
	# A new file each run: a library ingero-top has never seen.
	cp "$B/shim/libcudart.so.12" "$V/libcudart-r$run.so.12"
	cp "$B/shim/libcudart.so.12" "$V/libcudart-a$run.so.12"

	# 1. --pid: the process exists first, loads the library later.
	rm -f "$TMP/go1"
	python3 "$PY" "$V/libcudart-r$run.so.12" "$TMP/go1" "$N" 0 >"$TMP/py1.out" &
	py=$!
	wait_for ready "$TMP/py1.out"
	rm -f "$TMP/p.ev" "$TMP/p.err" # not last run's "watching"
	"$IG" -v --events --pid "$py" >"$TMP/p.ev" 2>"$TMP/p.err" &
	ig=$!
	wait_for "watching" "$TMP/p.err" || bad "--pid: no loader watched"
	touch "$TMP/go1"
	wait $py
	wait_calls "$TMP/p.ev" "$py" || bad "run $run --pid: calls not in the events file while running"
	kill -INT $ig; wait $ig
	expect_eq "run $run --pid: ingero-top exit status" "$?" 0
	grep -q "watching .*ld-linux.* for libraries loaded at run time (held until attached)" "$TMP/p.err" \
		&& ok "run $run --pid: the process's dynamic loader is watched" || bad "--pid: loader not watched: $(cat "$TMP/p.err")"
	grep -q "attached .* in .*/venv/lib/libcudart-r$run.so.12" "$TMP/p.err" \
		&& ok "run $run --pid: the dlopened copy is attached" || bad "--pid: copy not attached"
	grep -q "held python3\[$py\] for .* (libraries loaded)" "$TMP/p.err" \
		&& ok "run $run --pid: held at the dlopen" || bad "--pid: not held: $(cat "$TMP/p.err")"
	check_counts "run $run --pid" "$TMP/p.ev" "$py"

	# 2. default mode (every CUDA process): a process started afterwards.
	rm -f "$TMP/go2"
	rm -f "$TMP/a.ev" "$TMP/a.err"
	"$IG" -v --events --no-system-libs >"$TMP/a.ev" 2>"$TMP/a.err" &
	ig=$!
	wait_for "watching" "$TMP/a.err" || bad "default mode: no loader watched"
	python3 "$PY" "$V/libcudart-a$run.so.12" "$TMP/go2" "$N" 0 >"$TMP/py2.out" &
	py=$!
	wait_for ready "$TMP/py2.out"
	touch "$TMP/go2"
	wait $py
	wait_calls "$TMP/a.ev" "$py" || bad "run $run default mode: calls not in the events file while running"
	kill -INT $ig; wait $ig
	expect_eq "run $run default mode: ingero-top exit status" "$?" 0
	grep -q "held python3\[$py\] for .* (libraries loaded)" "$TMP/a.err" \
		&& ok "run $run default mode: held at the dlopen" || bad "default mode: not held: $(cat "$TMP/a.err")"
	check_counts "run $run default mode" "$TMP/a.ev" "$py"
done
finish
