#!/usr/bin/env bash
# needs: root
# A CUDA runtime that a process loads with dlopen after ingero-top started
# (a pip wheel's libcudart, here a private copy of the shim: a file
# ingero-top has never seen) is attached when the dynamic loader reports
# the change (a uprobe on _dl_debug_state), so calls made 0.2 s later are
# all counted: with --pid, and in the default mode for a process started
# after ingero-top. Without the hint they waited for the 2 s rescan.
. "$(dirname "$0")/lib.sh"
need_root
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
PY=$ROOT/tests/progs/late_dlopen.py
V=$TMP/venv/lib
mkdir -p "$V" && cp "$B/shim/libcudart.so.12" "$B/shim/libcuda.so.1" "$V/" && chmod -R a+rX "$TMP/venv"
N=40

# Calls of one process only: in the default mode other CUDA processes on
# the machine (other test runs) are traced too.
calls_of_pid() { awk -v p="pid=$2" '$2 == "call" && $3 == p' "$1"; }
check_counts() { # name, events file, pid
	for op in cudaMalloc cudaFree cuMemAlloc cuMemFree; do
		expect_eq "$1: $op calls" "$(calls_of_pid "$2" "$3" | grep -c " op=$op ")" "$N"
	done
}
wait_for() { wait_until 30 grep -q "$1" "$2"; }
# every call of the run read: N of each op (then ingero-top may stop)
all_calls() { # events file, pid
	for op in cudaMalloc cudaFree cuMemAlloc cuMemFree; do
		[ "$(calls_of_pid "$1" "$2" | grep -c " op=$op ")" -ge "$N" ] || return 1
	done
}

# 1. --pid: the process exists first, loads the library later.
python3 "$PY" "$V/libcudart.so.12" "$TMP/go1" "$N" 0.2 >"$TMP/py1.out" &
py=$!
wait_for ready "$TMP/py1.out" || bad "--pid: the program never said ready"
"$IG" -v --events --pid "$py" >"$TMP/p.ev" 2>"$TMP/p.err" &
ig=$!
# the loader's hook is attached (logged once it is live)
wait_for "watching" "$TMP/p.err" || bad "--pid: no loader watched"
touch "$TMP/go1"
wait $py
wait_until 30 all_calls "$TMP/p.ev" "$py"
kill -INT $ig; wait $ig
expect_eq "--pid: ingero-top exit status" "$?" 0
grep -q "watching .*ld-linux.* for libraries loaded at run time" "$TMP/p.err" \
	&& ok "--pid: the process's dynamic loader is watched" || bad "--pid: loader not watched: $(cat "$TMP/p.err")"
grep -q "attached .* in .*/venv/lib/libcudart.so.12" "$TMP/p.err" \
	&& ok "--pid: the dlopened copy is attached" || bad "--pid: copy not attached"
check_counts "--pid" "$TMP/p.ev" "$py"

# 2. default mode (every CUDA process): a process started afterwards.
cp "$B/shim/libcudart.so.12" "$TMP/venv/lib/libcudart-copy2.so.12" 2>/dev/null # another inode
"$IG" -v --events --no-system-libs >"$TMP/a.ev" 2>"$TMP/a.err" &
ig=$!
wait_for "watching" "$TMP/a.err" || bad "default mode: no loader watched"
python3 "$PY" "$V/libcudart-copy2.so.12" "$TMP/go2" "$N" 0.2 >"$TMP/py2.out" &
py=$!
wait_for ready "$TMP/py2.out" || bad "default mode: the program never said ready"
touch "$TMP/go2"
wait $py
wait_until 30 all_calls "$TMP/a.ev" "$py"
kill -INT $ig; wait $ig
expect_eq "default mode: ingero-top exit status" "$?" 0
check_counts "default mode" "$TMP/a.ev" "$py"
finish
