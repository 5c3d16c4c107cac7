#!/usr/bin/env bash
# needs: root
# Attach and detach: --pid on a running process, clean exit on SIGINT and
# SIGTERM with nothing left attached, a process started after ingero-top is
# found, and clear one-line errors for bad input.
. "$(dirname "$0")/lib.sh"
need_root

# Another ingero-top may be running on a developer's machine: what must be
# zero is what no process holds any more (orphan_bpf in lib.sh).
expect_eq "before: orphaned ingero-top programs and links" "$(orphan_bpf)" 0
# Both shim libraries attached (logged once each probe set is live).
wait_attached() { wait_until 30 lines_at_least "$1" "attached [0-9]+ ops" 2 || bad "not attached: $(cat "$1")"; }

# --pid on a process that waits for SIGUSR1 before its first call.
"$WL" --wait-signal --iters 30 --kernels 2 --kernel-us 100 --expect "$TMP/p.expect" >"$TMP/p.ready" 2>/dev/null &
wl=$!
wait_until 30 grep -q ready "$TMP/p.ready" || bad "the workload never said ready"
"$IG" -v --events --pid "$wl" >"$TMP/p.ev" 2>"$TMP/p.err" &
ig=$!
wait_attached "$TMP/p.err"
kill -USR1 $wl; wait $wl
# every call read from the ring buffer before the signal
wait_until 30 counts_reached "$TMP/p.ev" "$TMP/p.expect"
kill -INT $ig; wait $ig; rc=$?
expect_eq "--pid: exit status after SIGINT" "$rc" 0
event_counts "$TMP/p.ev" >"$TMP/p.got"; expect_counts "$TMP/p.expect" >"$TMP/p.want"
diff -q "$TMP/p.want" "$TMP/p.got" >/dev/null && ok "--pid: exact counts" || { bad "--pid counts"; diff "$TMP/p.want" "$TMP/p.got"; }
expect_eq "after SIGINT: orphaned ingero-top programs and links" "$(orphan_bpf)" 0

# Default mode (all CUDA processes): a workload started afterwards is traced.
"$IG" -v --events --no-system-libs --lib "$B/shim/libcudart.so.12" --lib "$B/shim/libcuda.so.1" \
	>"$TMP/a.ev" 2>"$TMP/a.err" &
ig=$!
wait_attached "$TMP/a.err"
"$WL" --iters 10 --kernels 1 --kernel-us 50 --expect "$TMP/a.expect" 2>/dev/null
# stopped at once: the stop reads what the kernel already holds (the ring
# is read every 20 ms at most), so every call is in the output all the same
kill -TERM $ig; wait $ig; rc=$?
expect_eq "default mode: exit status after SIGTERM" "$rc" 0
event_counts_of "$TMP/a.ev" "$TMP/a.expect" >"$TMP/a.got"; expect_counts "$TMP/a.expect" >"$TMP/a.want"
diff -q "$TMP/a.want" "$TMP/a.got" >/dev/null && ok "default mode: a process started later is traced exactly" \
	|| { bad "default mode counts"; diff "$TMP/a.want" "$TMP/a.got"; }
expect_eq "after SIGTERM: orphaned ingero-top programs and links" "$(orphan_bpf)" 0

# A hold lasts at most 1 s: with ingero-top stopped (as by ^Z), the
# guardian continues the held process (at each exec and library load), so
# it runs to its end; ingero-top, continued, reports it attached late.
thread_state() { awk '{ sub(/.*\) /, ""); print substr($0, 1, 1) }' "/proc/$1/stat" 2>/dev/null; }
rm -f "$TMP/go" "$TMP/s.err"
sh -c "while [ ! -e $TMP/go ]; do sleep 0.01; done; exec env A=1 $WL --iters 10 --kernels 1 --expect $TMP/s.expect" \
	2>/dev/null &
launcher=$!
"$IG" -v --batch -d 60 --pid "$launcher" >/dev/null 2>"$TMP/s.err" &
ig=$!
for _ in $(seq 100); do grep -q watching "$TMP/s.err" && break; sleep 0.1; done
kill -STOP $ig
touch "$TMP/go"
for _ in $(seq 300); do kill -0 $launcher 2>/dev/null || break; sleep 0.05; done
if kill -0 $launcher 2>/dev/null; then
	bad "ingero-top stopped: the held process is still stopped after 15 s"
	kill -CONT $launcher
else
	ok "ingero-top stopped: the held process was continued after at most 1 s per hold"
fi
wait $launcher
expect_eq "ingero-top stopped: the workload's exit status" "$?" 0
kill -CONT $ig
for _ in $(seq 100); do grep -q "late (held over 1 s" "$TMP/s.err" && break; sleep 0.1; done
grep -q "attached to PID $launcher late (held over 1 s: continued before its libraries were attached)" "$TMP/s.err" \
	&& ok "ingero-top continued: the process is reported attached late" \
	|| bad "no late report: $(cat "$TMP/s.err")"
kill -INT $ig; wait $ig
expect_eq "ingero-top stopped and continued: exit status" "$?" 0

# Two instances hold the same process; the one that finishes last
# continues it. With the other one stopped, the process still goes on
# within about a second per hold, and the running instance counts exactly.
"$IG" -v --batch -d 60 --no-system-libs >/dev/null 2>"$TMP/x.err" &
other=$!
for _ in $(seq 100); do grep -q watching "$TMP/x.err" && break; sleep 0.1; done
kill -STOP $other
timeout 60 "$IG" --events --no-system-libs -- env A=1 "$WL" --iters 20 --kernels 2 --kernel-us 10 \
	--expect "$TMP/x.expect" >"$TMP/x.ev" 2>/dev/null
expect_eq "another instance stopped: exit status (124: a process was left held)" "$?" 0
event_counts "$TMP/x.ev" >"$TMP/x.got"; expect_counts "$TMP/x.expect" >"$TMP/x.want"
diff -q "$TMP/x.want" "$TMP/x.got" >/dev/null && ok "another instance stopped: exact counts" \
	|| { bad "another instance stopped: counts"; diff "$TMP/x.want" "$TMP/x.got"; }
kill -CONT $other
kill -INT $other; wait $other
expect_eq "the stopped instance, continued: exit status" "$?" 0

# kill -9 while a process is held: the guardian (ingero-top-hold)
# continues it. ingero-top is stopped first so that the hold lasts. With
# one perf-event uprobe per probe the dying process takes a while to close
# its links, which could still hold the process again when it execs the
# workload: the guardian waits for the end.
rm -f "$TMP/go"
sh -c "while [ ! -e $TMP/go ]; do sleep 0.01; done; exec env A=1 $WL --iters 10 --kernels 1 --expect $TMP/h.expect" \
	2>/dev/null &
launcher=$!
INGERO_TOP_NO_UPROBE_MULTI=1 "$IG" -v --batch -d 60 --pid "$launcher" >/dev/null 2>"$TMP/h.err" &
ig=$!
for _ in $(seq 100); do grep -q watching "$TMP/h.err" && break; sleep 0.1; done
guardian=$(pgrep -P $ig -x ingero-top-hold)
[ -n "$guardian" ] && ok "kill -9: the guardian runs (PID $guardian)" || bad "kill -9: no guardian"
kill -STOP $ig
touch "$TMP/go"
held=
for _ in $(seq 100); do [ "$(thread_state $launcher)" = T ] && { held=1; break; }; sleep 0.05; done
[ -n "$held" ] && ok "kill -9: the process is held while ingero-top cannot look" || bad "kill -9: not held"
kill -KILL $ig; wait $ig 2>/dev/null
for _ in $(seq 200); do [ "$(thread_state $launcher)" = T ] || break; sleep 0.05; done
if [ "$(thread_state $launcher)" = T ]; then
	bad "kill -9: the process was left stopped"
	kill -CONT $launcher
fi
wait $launcher; rc=$?
expect_eq "kill -9 during a hold: the held process was continued and finished" "$rc" 0
[ -s "$TMP/h.expect" ] && ok "kill -9: the workload ran to its end" || bad "kill -9: no expect file"
for _ in $(seq 200); do kill -0 "$guardian" 2>/dev/null || break; sleep 0.05; done
kill -0 "$guardian" 2>/dev/null && bad "kill -9: the guardian is still there" || ok "kill -9: the guardian is gone"
expect_eq "after kill -9: orphaned ingero-top programs and links" "$(orphan_bpf)" 0

# Errors: one line, non-zero exit.
one_line_error() { # what, expected text, command...
	local what=$1 want=$2; shift 2
	"$@" >"$TMP/e.out" 2>"$TMP/e.err"; local rc=$?
	local lines; lines=$(wc -l <"$TMP/e.err")
	if [ $rc != 0 ] && [ "$lines" = 1 ] && grep -q "$want" "$TMP/e.err"; then
		ok "$what: exit $rc, '$(cat "$TMP/e.err")'"
	else
		bad "$what: exit $rc, $lines line(s): $(cat "$TMP/e.err")"
	fi
}
one_line_error "pid that does not exist" "no process with pid 4194000" "$IG" --batch -n 1 --pid 4194000
one_line_error "library without CUDA symbols" "exports none of the CUDA" \
	"$IG" --batch -n 1 --lib /lib/x86_64-linux-gnu/libm.so.6 --pid $$
one_line_error "not an ELF file" "not an ELF file" "$IG" --batch -n 1 --lib /etc/hostname --pid $$
one_line_error "command that does not exist" "cannot run" "$IG" --batch -- /nonexistent/cmd
one_line_error "bad option value" "invalid -d" "$IG" --batch -d -3
if command -v setpriv >/dev/null; then
	one_line_error "not root" "needs root" setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all --bounding-set=-all "$IG" --batch -n 1
fi
expect_eq "after the errors: orphaned ingero-top programs and links" "$(orphan_bpf)" 0

# check: one line per item, PASS for the basics on this machine.
"$IG" check >"$TMP/check.out"; rc=$?
cat "$TMP/check.out"
expect_eq "check exit status" "$rc" 0
for item in privileges kernel BTF "ring buffer" tp_btf uprobes; do
	grep -q "^PASS $item" "$TMP/check.out" && ok "check: $item PASS" || bad "check: $item"
done
grep -q "^INFO wakers  *a wake-up from an interrupt is named \[irq\]" "$TMP/check.out" \
	&& ok "check: interrupt wakers named" || bad "check: no wakers line"
grep -q "^INFO dlopen  *libraries loaded at run time are attached before their code runs (_dl_debug_state, _r_debug in /" "$TMP/check.out" \
	&& ok "check: the dynamic loader's hook" || bad "check: no dlopen line"
grep -q "^INFO holds  *a target that loads a CUDA library .* is stopped (SIGSTOP)" "$TMP/check.out" \
	&& ok "check: holds explained" || bad "check: no holds line"

finish
