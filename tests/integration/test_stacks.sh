#!/usr/bin/env bash
# needs: root
# User stacks of traced calls through the real uprobes (bpf/stacks.bpf.h
# capture_stack, src/stacks/), driven by
# build/tests/tools/stacktrace:
#   1. with stacks on, per-op call counts stay exact and every call carries
#      a stack that the kernel stored once per distinct hash;
#   2. a C program calling the shim through a known chain of functions gets
#      exactly that chain of names; a C++ one gets demangled names;
#   3. a stripped copy degrades to file+offset addresses, never wrong names;
#   4. Python 3.11 (Debian's python3) calling the shim through ctypes shows
#      [py] ctypes_calls.py:LINE in alloc_step(), as do CPython 3.10 and
#      3.12 when installed; 3.13 shows native frames and a note;
#   5. a flight-recorder save has the stacks of its calls;
#   6. nothing stays loaded afterwards.
. "$(dirname "$0")/lib.sh"
need_root
ST=$B/tests/tools/stacktrace
[ -x "$ST" ] || { echo "skip: $ST not built (make test-build)"; exit 77; }
LIBS=(--lib "$B/shim/libcudart.so.12" --lib "$B/shim/libcuda.so.1")

# BPF program ids held by a process, from its fds (other ingero-tops may
# run meanwhile: compare ids, not totals).
progs_of() { cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" {print $2}' | sort -u; }
alive_ids() { bpftool prog show -j 2>/dev/null | python3 -c '
import json, sys
want = set(sys.argv[1:])
print(" ".join(str(p["id"]) for p in json.load(sys.stdin) if str(p["id"]) in want))' "$@"; }

# The frame lines of the first series matching a pattern, one per line
# without the "  frame <kind> " prefix.
frames_of() { # file, series pattern
	awk -v pat="$2" '/^series / { on = ($0 ~ pat) && !done; if (on) done = 1; next }
		on && /^  frame / { sub(/^  frame [a-z]+ /, ""); print }' "$1"
}
# The function names of native frames (text before "+0x").
names_of() { frames_of "$1" "$2" | sed -n 's/^\(.*\)+0x[0-9a-f]* (.*$/\1/p'; }

# 1. Exact counts with stacks on; every call has a stack id, stored once.
run_counts() { # name, workload args...
	local name=$1; shift
	"$ST" --raw -- "$WL" "$@" --expect "$TMP/$name.expect" >"$TMP/$name.ev" 2>"$TMP/$name.err"
	expect_eq "$name: exit status" "$?" 0
	event_counts "$TMP/$name.ev" >"$TMP/$name.got"
	expect_counts "$TMP/$name.expect" >"$TMP/$name.want"
	if diff -u "$TMP/$name.want" "$TMP/$name.got" >"$TMP/$name.diff"; then
		ok "$name: per-op counts with stacks on equal the workload's own ($(awk '{s+=$2} END {print s}' "$TMP/$name.want") calls)"
	else
		bad "$name: per-op counts differ with stacks on:"; cat "$TMP/$name.diff"
	fi
	local calls nostack ids missing
	calls=$(grep -c " call " "$TMP/$name.ev")
	nostack=$(grep " call " "$TMP/$name.ev" | grep -c " stack=0x0$")
	expect_eq "$name: calls without a stack id (of $calls)" "$nostack" 0
	ids=$(grep " call " "$TMP/$name.ev" | sed 's/.* stack=//' | sort -u | wc -l)
	missing=$(grep -c "^stack .* missing" "$TMP/$name.ev")
	expect_eq "$name: distinct stack ids not readable from the stacks map (of $ids)" "$missing" 0
	grep -q "^summary .* errors=0 lost=0 " "$TMP/$name.ev" && ok "$name: no stack capture errors or losses" \
		|| bad "$name: $(grep '^summary' "$TMP/$name.ev")"
}
run_counts basic --iters 40 --kernels 3 --kernel-us 50 --h2d 65536 --d2h 4096 --sync-every 1 --malloc-every 4
run_counts threads-fork --iters 20 --kernels 2 --kernel-us 20 --threads 3 --fork --sync-every 2

# 2. The known chain, exactly; the nested driver call adds the runtime.
"$ST" --quiet -- "$B/tests/progs/stackchain" 20 300 >"$TMP/chain.out" 2>"$TMP/chain.err"
expect_eq "stackchain: exit status" "$?" 0
expect_eq "stackchain: cudaMalloc (20 calls) chain" \
	"$(names_of "$TMP/chain.out" 'op=cudaMalloc .* calls=20 ' | head -4 | tr '\n' ' ')" \
	"chain_inner chain_middle chain_outer main "
expect_eq "stackchain: cudaFree (20 calls) chain" \
	"$(names_of "$TMP/chain.out" 'op=cudaFree .* calls=20 ' | head -4 | tr '\n' ' ')" \
	"chain_inner chain_middle chain_outer main "
expect_eq "stackchain: nested cuMemAlloc chain" \
	"$(names_of "$TMP/chain.out" 'op=cuMemAlloc .* calls=20 ' | head -5 | tr '\n' ' ')" \
	"cudaMalloc chain_inner chain_middle chain_outer main "
expect_eq "stackchain: the other call site is its own stack" \
	"$(names_of "$TMP/chain.out" 'op=cudaMalloc .* calls=1 ' | head -2 | tr '\n' ' ')" \
	"side_path main "
frame=$(frames_of "$TMP/chain.out" 'op=cudaMalloc .* calls=20 ' | head -1)
expect_eq "stackchain: frames file" "$(echo "$frame" | sed 's/.*(\([^)]*\)).*/\1/')" "stackchain"
# the program is built with -g: its frames have their source line (libdw)
[[ $frame =~ \)\ stackchain\.c:[0-9]+$ ]] && ok "stackchain: source line of the frame ($frame)" ||
	bad "stackchain: no stackchain.c:LINE after the frame: $frame"
grep -q "^resolver flush=0 .* pending=0 missing=0 .*frames_unresolved=0 " "$TMP/chain.out" \
	&& ok "stackchain: every native frame resolved" || bad "stackchain: $(grep '^resolver' "$TMP/chain.out")"

# C++: demangled.
"$ST" --quiet -- "$B/tests/progs/cppchain" 10 300 >"$TMP/cpp.out" 2>"$TMP/cpp.err"
expect_eq "cppchain: exit status" "$?" 0
expect_eq "cppchain: cudaMalloc chain, demangled" \
	"$(names_of "$TMP/cpp.out" 'op=cudaMalloc .* calls=10 ' | head -3 | sed 's/ \[clone [^]]*\]//' | tr '\n' '|')" \
	"int ig_test::launch<ig_test::Batch>(ig_test::Batch const&)|ig_test::Trainer::step(int)|main|"
grep -q "_ZN" "$TMP/cpp.out" && bad "cppchain: a mangled name is shown" || ok "cppchain: no mangled name shown"

# 3. Stripped: addresses with file offsets, no names from elsewhere.
cp "$B/tests/progs/stackchain" "$TMP/stackchain-stripped" && strip --strip-all "$TMP/stackchain-stripped"
LD_LIBRARY_PATH=$B/shim "$ST" --quiet "${LIBS[@]}" -- "$TMP/stackchain-stripped" 20 300 >"$TMP/strip.out" 2>"$TMP/strip.err"
expect_eq "stripped: exit status" "$?" 0
got=$(frames_of "$TMP/strip.out" 'op=cudaMalloc .* calls=20 ' | head -4 | grep -c '^0x[0-9a-f]* (stackchain-stripped+0x[0-9a-f]*)$')
expect_eq "stripped: the 4 frames of the chain as file+offset addresses" "$got" 4
grep -qE "chain_(inner|middle|outer)" "$TMP/strip.out" && bad "stripped: a name appears" || ok "stripped: no symbol name invented"
# The offsets are the unstripped file's addresses of those functions.
off=$(frames_of "$TMP/strip.out" 'op=cudaMalloc .* calls=20 ' | head -1 | sed 's/.*+0x\([0-9a-f]*\))$/\1/')
sym=$(nm "$B/tests/progs/stackchain" | awk '$3 == "chain_inner" {print $1}')
len=$(nm -S "$B/tests/progs/stackchain" | awk '$4 == "chain_inner" {print $2}')
[ -n "$off" ] && [ -n "$sym" ] && [ -n "$len" ] && (( 16#$off > 16#$sym && 16#$off <= 16#$sym + 16#$len )) \
	&& ok "stripped: first frame 0x$off lies in chain_inner (0x$sym, size 0x$len)" \
	|| bad "stripped: first frame 0x$off is not in chain_inner (0x$sym, size 0x$len)"

# 4. Python through ctypes.
PYS=$ROOT/tests/progs/ctypes_calls.py
line_of() { grep -n "$1" "$PYS" | cut -d: -f1; }
L_MALLOC=$(line_of MARK_MALLOC); L_TRAIN=$(line_of MARK_TRAIN); L_MAIN=$(line_of MARK_MAIN)
run_py() { # python, label
	"$ST" --quiet "${LIBS[@]}" -- "$1" "$PYS" "$B/shim/libcudart.so.12" 20 1 >"$TMP/$2.out" 2>"$TMP/$2.err"
	expect_eq "$2: exit status" "$?" 0
}
check_py() { # label, qualified train name
	local want="[py] $PYS:$L_MALLOC in alloc_step()|[py] $PYS:$L_TRAIN in $2()|[py] $PYS:$L_MAIN in main()|"
	expect_eq "$1: Python frames of cudaMalloc (20 calls)" \
		"$(frames_of "$TMP/$1.out" 'op=cudaMalloc .* calls=20 ' | grep '^\[py\]' | head -3 | tr '\n' '|')" "$want"
	expect_eq "$1: ... and of the nested cuMemAlloc" \
		"$(frames_of "$TMP/$1.out" 'op=cuMemAlloc .* calls=20 ' | grep '^\[py\]' | head -3 | tr '\n' '|')" "$want"
	expect_eq "$1: cuMemAlloc starts in the runtime" \
		"$(frames_of "$TMP/$1.out" 'op=cuMemAlloc .* calls=20 ' | head -1 | sed 's/+0x.*//')" "cudaMalloc"
}
# The system's python3 (a build dependency: Debian 12 ships 3.11) always
# runs; pyenv's 3.10, 3.12 and 3.13 too when installed.
sysv=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
case $sysv in
3.10 | 3.11 | 3.12)
	run_py /usr/bin/python3 "py$sysv"
	check_py "py$sysv" "$([ "$sysv" = 3.10 ] && echo train || echo Trainer.train)"
	grep -q "pynote CPython $sysv (.*): Python frames on" "$TMP/py$sysv.out" &&
		ok "py$sysv: interpreter note" || bad "py$sysv: no interpreter note"
	;;
"") bad "/usr/bin/python3 (a build dependency, make deps) is missing" ;;
*) ok "system python3 is $sysv: checked below as an unsupported version" ;;
esac
for py in /root/.pyenv/versions/3.10.*/bin/python3.10 /root/.pyenv/versions/3.12.*/bin/python3.12; do
	[ -x "$py" ] || continue
	v=$(basename "$py" | sed 's/python//')
	run_py "$py" "py$v"
	check_py "py$v" "$([ "$v" = 3.10 ] && echo train || echo Trainer.train)"
done
unsupported=(/root/.pyenv/versions/3.13.*/bin/python3.13)
case $sysv in 3.10 | 3.11 | 3.12 | "") ;; *) unsupported+=(/usr/bin/python3) ;; esac
for py in "${unsupported[@]}"; do
	[ -x "$py" ] || continue
	run_py "$py" py313
	grep -q '^  frame py ' "$TMP/py313.out" && bad "py313: Python frames shown for an unsupported version" \
		|| ok "py313: no Python frames"
	grep -q "frame note \[note\] CPython 3.13 .* is not supported" "$TMP/py313.out" \
		&& ok "py313: stacks say the version is not supported" || bad "py313: no note"
	expect_eq "py313: native frames still resolve" \
		"$(frames_of "$TMP/py313.out" 'op=cuMemAlloc .* calls=21 ' | head -1 | sed 's/+0x.*//')" "cudaMalloc"
done

# 5. The flight recorder's file carries the stacks of its calls: a batch
# run saves on SIGUSR1; stack_traces has frames with workload functions, and
# its replay shows them.
"$IG" --batch -d 0.5 --flight-dir "$TMP" -- "$WL" --iters 3000 --kernels 2 --kernel-us 300 \
	>"$TMP/fl.out" 2>"$TMP/fl.err" &
ig=$!
# two frames with launches: the ring holds calls of at least one second
wait_until 60 lines_at_least "$TMP/fl.out" "^cudaLaunchKernel " 2 || bad "flight: no frames with calls"
kill -USR1 $ig
wait_until 60 grep -q "saved .* events" "$TMP/fl.err" || bad "flight: no 'saved' notice"
kill -INT $ig; wait $ig
FL=$(ls "$TMP"/ingero-top-flight-*.db 2>/dev/null | head -1)
[ -n "$FL" ] && ok "flight: saved $(basename "$FL")" || bad "flight: nothing saved: $(tail -n 2 "$TMP/fl.err")"
if [ -n "$FL" ]; then
	ids=$(sqlite3 "$FL" "SELECT COUNT(DISTINCT stack_hash) FROM events WHERE stack_hash != 0")
	rows=$(sqlite3 "$FL" "SELECT COUNT(*) FROM stack_traces")
	[ "$ids" -gt 0 ] && expect_eq "flight: stack_traces rows for the $ids distinct stacks of its calls" "$rows" "$ids" \
		|| bad "flight: calls without stacks"
	wlf=$(sqlite3 "$FL" "SELECT COUNT(*) FROM stack_traces WHERE frames LIKE '%wl_worker%' OR frames LIKE '%wl_launch%'")
	[ "$wlf" -gt 0 ] && ok "flight: $wlf stacks with workload functions" || bad "flight: no workload function in stack_traces"
	"$IG" --replay "$FL" --batch --summary --stacks >"$TMP/flr.out" 2>&1
	grep -Eq '(wl_worker|wl_launch)\+0x[0-9a-f]+ \(workload\)' "$TMP/flr.out" \
		&& ok "flight: its replay shows the workload frames" || bad "flight: replay without frames"
fi

# 6. Nothing left behind: the programs the run held are gone after it.
"$ST" --quiet -- "$WL" --wait-signal --iters 5 --kernels 1 --kernel-us 50 >"$TMP/life.ev" 2>"$TMP/life.err" &
st=$!
# the workload says "ready" once it waits for its signal, after the attach
wl_ready() { ids=$(progs_of $st); wl=$(pgrep -P $st | head -1); [ -n "$ids" ] && [ -n "$wl" ] &&
	grep -q "^ready $wl" "$TMP/life.ev" "$TMP/life.err" 2>/dev/null; }
wait_until 60 wl_ready
[ -n "$ids" ] && ok "stack run holds BPF programs $(echo $ids | tr '\n' ' ')" || bad "no BPF programs seen for the run"
bpftool prog show | grep -q "call_exit_stk" && ok "call_exit_stk loaded while stacks are on" || bad "call_exit_stk not loaded"
[ -n "$wl" ] && kill -USR1 "$wl"
wait $st
none_alive() { [ -z "$(alive_ids $ids)" ]; }
wait_until 20 none_alive
expect_eq "after the run: its programs still loaded" "$(alive_ids $ids)" ""
finish
