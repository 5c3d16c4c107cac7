#!/usr/bin/env bash
# needs: root
# The kernel's wait evidence, end to end with the real BPF programs
# (docs/detection.md): waitprobe makes N waits of each kind, each ended by a
# thread it names in its expect file. The feeder's blocked off-CPU events
# must say exactly that: N futex waits woken by the lock's holder, N pipe
# reads woken by the writer, N writes to a full pipe woken by its reader, at
# least N fdatasync waits on a file, at least N timer sleeps; its kernel
# time must count the file syscalls. Then --json --summary: a chain per
# mechanism naming that thread by tid, the lock wait's chain with its call
# site at the line of waitprobe that takes the lock, and the paced loop's
# chain INFO with its call site in waitprobe.
. "$(dirname "$0")/lib.sh"
need_root
WP=$B/tests/progs/waitprobe
[ -x "$WP" ] || { echo "skip: build first (make test-build)"; exit 77; }
DIR=${TMPDIR:-/var/tmp}
N=20

"$IG" --events --no-stacks -- "$WP" $N "$DIR" "$TMP/e" >"$TMP/ev" 2>"$TMP/err"
expect_eq "ingero-top --events exit status" "$?" 0
val() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/e"; }
feeder=$(val feeder) holder=$(val holder) writer=$(val writer) reader=$(val reader)
[ -n "$feeder" ] && [ -n "$reader" ] || { bad "waitprobe wrote no expect file: $(cat "$TMP/err")"; finish; }
# the feeder's blocked intervals: "sys fd wchan waker_tid" per event
awk -v t="tid=$feeder" '$2 == "offcpu" && $4 == t && / state=blocked / {
	s = f = w = k = ""
	for (i = 5; i <= NF; i++) {
		if ($i ~ /^sys=/) s = $i; else if ($i ~ /^fd=/) f = $i
		else if ($i ~ /^wchan=/) w = $i; else if ($i ~ /^waker_tid=/) k = $i
		else if ($i == "timer=1") tm = 1
	}
	print s, f, w, k, (tm ? "timer" : "-"); tm = 0 }' "$TMP/ev" >"$TMP/waits"
count() { grep -c -- "$1" "$TMP/waits"; }
expect_eq "futex waits woken by the holder (tid $holder)" \
	"$(count "^sys=futex fd=- wchan=futex waker_tid=$holder ")" $N
expect_eq "pipe reads woken by the writer (tid $writer)" \
	"$(count "^sys=read fd=pipe wchan=pipe_read waker_tid=$writer ")" $N
expect_eq "writes to a full pipe woken by its reader (tid $reader)" \
	"$(count "^sys=write fd=pipe wchan=pipe_write waker_tid=$reader ")" $N
n=$(count "^sys=fsync fd=file ")
[ "$n" -ge $N ] && ok "fdatasync waits on a file: $n (at least $N)" || bad "fdatasync waits on a file: $n, want >= $N"
n=$(count "^sys=nanosleep fd=- wchan=sleep waker_tid=0 timer")
[ "$n" -ge $N ] && ok "timer sleeps: $n (at least $N)" || bad "timer sleeps: $n, want >= $N"
# its kernel time: the buffered writes' CPU (500 ms by the thread's own
# clock, nearly all in the kernel) is file time, sampled every 10 ms:
# within 60 to 120 % of the workload's measure (50 samples: 14 % error)
fns=$(awk -v t="tid=$feeder" '$2 == "ktime" && $4 == t {
	for (i = 5; i <= NF; i++) if ($i ~ /^file_ns=/) f += substr($i, 9) } END { print f + 0 }' "$TMP/ev")
kcpu=$(val kcpu_ns)
if [ -n "$kcpu" ] && awk -v f="$fns" -v k="$kcpu" 'BEGIN { exit !(f >= 0.6 * k && f <= 1.2 * k) }'; then
	ok "kernel time in file syscalls: ${fns} ns (the writes ran ${kcpu} ns)"
else
	bad "kernel time in file syscalls: ${fns} ns, the writes ran ${kcpu:-?} ns"
fi

# the diagnosis: one chain per mechanism naming its thread; the paced loop
# INFO with its call site (no fsyncs: a slow disk must not make the others'
# shares small)
"$IG" --json --summary -- "$WP" $N "$DIR" "$TMP/e2" 0 >"$TMP/sum.json" 2>"$TMP/err2"
expect_eq "ingero-top --json --summary exit status" "$?" 0
# the line of main that calls take_lock() (the C library has no frame
# pointers: the walk goes from pthread_mutex_lock to that caller's caller)
lock_line=$(grep -n '^		take_lock();' "$ROOT/tests/progs/waitprobe.c" | cut -d: -f1)
python3 - "$TMP/sum.json" "$TMP/e2" "$lock_line" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
e = dict(l.split() for l in open(sys.argv[2]))
lock_line = sys.argv[3]
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    bad += not ok
chains = {c["class"]: c for c in s["chains"] if c["pid"] == int(e["pid"])}
for cls, who in (("lock_wait", "holder"), ("loader_wait", "writer"), ("backpressure", "reader")):
    c = chains.get(cls)
    check(c is not None and c["culprit_tid"] == int(e[who]) and c["severity"] in ("LOW", "MEDIUM", "HIGH"),
          f"{cls} chain names the {who} (tid {e[who]}): "
          f"{c and (c['severity'], c['culprit_comm'], c['culprit_tid'])}")
c = chains.get("lock_wait")
site = (c or {}).get("call_site") or []
check(c is not None and c["stack_id"] and lock_line and
      any("(waitprobe)" in l and ("waitprobe.c:" + lock_line) in l for l in site) or
      any("take_lock" in l for l in site),
      f"the lock wait's call site is waitprobe.c:{lock_line} (take_lock): {site}")
check(c is not None and "on a mutex it held" in c["summary"],
      f"its call site waits in pthread_mutex_lock: a mutex: {c and c['summary']}")
c = chains.get("timer_sleep")
site = (c or {}).get("call_site") or []
check(c is not None and c["severity"] == "INFO", f"timer_sleep chain INFO: {c and c['severity']}")
check(c is not None and c["stack_id"] and any("(waitprobe)" in l for l in site),
      f"its call site is in waitprobe: {site}")
sys.exit(1 if bad else 0)
PY
finish
