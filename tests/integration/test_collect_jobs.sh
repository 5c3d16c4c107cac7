#!/usr/bin/env bash
# needs: root
# Holds stop a process with SIGSTOP, which an interactive shell would see:
# it would report its foreground job stopped and leave it in the
# background. So a job of an interactive shell is never stopped: the shell
# (bash -i on a pseudo-terminal from script(1)) runs the workload in the
# foreground to its end, never says "Stopped", and ingero-top reports the
# process as attached late instead of holding it.
. "$(dirname "$0")/lib.sh"
need_root
command -v script >/dev/null || { echo "skip: needs script(1) (bsdutils)"; exit 77; }
wait_for() { for _ in $(seq 200); do grep -q "$1" "$2" 2>/dev/null && return 0; sleep 0.05; done; return 1; }

"$IG" -v --events --no-system-libs >"$TMP/a.ev" 2>"$TMP/a.err" &
ig=$!
wait_for "watching" "$TMP/a.err" || bad "no loader watched"
printf '%s\n' "$WL --iters 100 --kernels 2 --kernel-us 1 --expect $TMP/j.expect; echo RC=\$?" "exit" |
	timeout 60 script -qfec "bash --norc -i" /dev/null >"$TMP/shell.out" 2>&1
pid=$(awk '$1 == "pid" {print $2; exit}' "$TMP/j.expect" 2>/dev/null)
wait_for "late" "$TMP/a.err"
kill -INT $ig; wait $ig
expect_eq "ingero-top exit status" "$?" 0
grep -aq "^RC=0" "$TMP/shell.out" && ok "the job ran in the foreground to its end" \
	|| bad "shell: $(tail -n 5 "$TMP/shell.out")"
grep -aq "Stopped" "$TMP/shell.out" && bad "the shell saw its job stop" || ok "the shell never saw its job stop"
if [ -n "$pid" ] && grep -q "attached to PID $pid late (not stopped: a job of an interactive shell)" "$TMP/a.err"; then
	ok "the job (PID $pid) is reported as attached late"
else
	bad "no late report for PID ${pid:-?}: $(cat "$TMP/a.err")"
fi
grep -q "held workload\[$pid\]" "$TMP/a.err" && bad "the job was held" || ok "the job was not held"
finish
