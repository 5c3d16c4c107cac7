#!/usr/bin/env bash
# needs: root
# The call site of a lock wait and the words it gives the chain
# (docs/detection.md), through the real probes with the default (tail)
# stacks:
#   1. C: the feeder blocks in pthread_mutex_lock of a mutex another thread
#      holds (tests/progs/waitprobe: test_collect_waits checks its line and
#      "a mutex it held"); here causegen's lock-cond and lock-timedcond,
#      pthread_cond_wait and pthread_cond_timedwait on a condition its
#      holder thread signals: "waiting on the producer", a condition; and
#      lock-timedmutex and lock-rwlock, whose waits glibc makes in the
#      same futex wait as a condition's: the holder's stack as it woke the
#      feeder (its unlock) says "a mutex", "a read-write lock";
#   2. Python: the feeder takes its batches from a queue.Queue a producer
#      thread fills (tests/progs/queuefeed.py, Debian's python3): the
#      lock_wait chain names the producer's thread, says a queue's get, and
#      its call site reads Condition.wait, Queue.get and the feeder's own
#      line in next_batch();
#   3. with --no-stacks the chain is the same, with no call site and the
#      words of a lock or condition; the
#      recording of the first run: explain's text and Markdown show it;
#   4. a feeder whose lock waits come faster than one a millisecond
#      (causegen lock-mutex, 200 us a step): recorded, a wait has its stack
#      exactly when it began at least 1 ms after the last wait that got one
#      (IGB_SITE_GAP_NS), whatever the machine's speed.
. "$(dirname "$0")/lib.sh"
need_root
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: /usr/bin/python3 missing (make deps)"; exit 77; }
QF=$ROOT/tests/progs/queuefeed.py
line=$(grep -n '^    return batches.get()' "$QF" | cut -d: -f1)
putline=$(grep -n '^        batches.put(object())' "$QF" | cut -d: -f1)

judge() { # name, options...
	local n=$1
	shift
	timeout 120 "$IG" --json --summary --no-system-libs "$@" -- \
		"$PY" "$QF" "$B/shim/libcudart.so.12" 4 "$TMP/$n.expect" >"$TMP/$n.json" 2>"$TMP/$n.err"
	expect_eq "$n: exit status" "$?" 0
}
judge stacks --record "$TMP/stacks.db"
judge nostacks --no-stacks

check() { # name, want a call site (1/0)
	python3 - "$TMP/$1.json" "$TMP/$1.expect" "$2" "$line" "$putline" <<'PY'
import json, sys
path, expect, want, line, putline = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4], sys.argv[5]
s = json.loads(open(path).read().splitlines()[-1])
e = dict(l.split() for l in open(expect))
out = []
def check(ok, m): out.append(("ok   " if ok else "FAIL ") + m)
name = "stacks" if want else "--no-stacks"
c = {x["class"]: x for x in s["chains"] if x["pid"] == int(e["pid"])}.get("lock_wait")
check(c is not None and c["culprit_tid"] == int(e["producer"]) and c["impact"] > 0.3,
      f"{name}: a lock_wait chain names the producer (tid {e['producer']}): "
      f"{c and (c['severity'], c['culprit_tid'], round(c['impact'], 2))}")
site = (c or {}).get("call_site") or []
if want:
    check(c is not None and c["stack_id"] and len(site) == 3 and
          "Condition.wait()" in site[0] and "Queue.get()" in site[1] and
          f"queuefeed.py:{line} in next_batch()" in site[2],
          f"{name}: its call site is Condition.wait <- Queue.get <- queuefeed.py:{line}: {site}")
    check(any("call site" in r for r in (c or {}).get("recommendations", [])),
          f"{name}: the advice points at the call site")
    waker = (c or {}).get("waker_site") or []
    check(c is not None and c.get("wake_stack_id") and
          any("Queue.put()" in w for w in waker) and
          any(f"queuefeed.py:{putline} in produce()" in w for w in waker),
          f"{name}: its waker was at Queue.put <- queuefeed.py:{putline} in produce(): {waker}")
    check(c is not None and c["summary"].startswith("waiting on the producer") and
          "in a queue's get until it put the next item" in c["summary"] and
          any("Produce ahead" in r for r in c["recommendations"]),
          f"{name}: worded as a queue's get: {c and c['summary']}")
else:
    check(c is not None and not c["stack_id"] and not site and "waker_site" not in c,
          f"{name}: no call site, no waker's: {site}")
    check(c is not None and c["summary"].startswith("lock contention with") and
          "a lock or condition it released" in c["summary"],
          f"{name}: worded as a lock or condition: {c and c['summary']}")
print("\n".join(out))
PY
}
check stacks 1 >"$TMP/check.txt"
check nostacks 0 >>"$TMP/check.txt"
cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
# wide: a clone's long path must not wrap the frame's line
"$IG" explain --width 300 --replay "$TMP/stacks.db" >"$TMP/x.txt" 2>"$TMP/x.err"
if grep -q "^    Call site: \[py\] .*threading.py:[0-9]* in Condition.wait()" "$TMP/x.txt" &&
	grep -q "^  *\[py\] .*queuefeed.py:$line in next_batch()" "$TMP/x.txt"; then
	ok "explain: the lock wait's call site"
else
	bad "explain: no call site: $(grep -n -A3 'Call site' "$TMP/x.txt" | head -c 600)"
fi
grep -q "^    Waker at:  \[py\] .*threading.py:[0-9]* in Condition.notify()" "$TMP/x.txt" &&
	grep -q "^  *\[py\] .*queuefeed.py:$putline in produce()" "$TMP/x.txt" &&
	ok "explain: where its waker was" ||
	bad "explain: no waker's site: $(grep -n -A3 'Waker at' "$TMP/x.txt" | head -c 600)"
"$IG" explain --md --replay "$TMP/stacks.db" >"$TMP/x.md" 2>>"$TMP/x.err"
grep -q '^- \*\*Waker at:\*\* \\\[py\\\] .*Condition.notify()' "$TMP/x.md" &&
	ok "explain --md: where its waker was" ||
	bad "explain --md: no waker's site: $(grep -n 'Waker at' "$TMP/x.md" | head -c 400)"
grep -q '^- \*\*Call site:\*\* \\\[py\\\] .*Condition.wait()' "$TMP/x.md" &&
	ok "explain --md: the lock wait's call site" ||
	bad "explain --md: no call site: $(grep -n 'Call site\|Evidence' "$TMP/x.md" | head -c 400)"
: >"$TMP/check.txt"

# C: pthread_cond_wait, and pthread_cond_timedwait that times out every
# 1 ms before the signal (a condition); pthread_mutex_timedlock and a
# read-write lock's rdlock while the holder has it for writing (glibc
# waits in the futex wait of its conditions for both: the holder's unlock
# as it wakes the feeder says what they were)
for m in lock-cond lock-timedcond lock-timedmutex lock-rwlock; do
	timeout 120 "$IG" --json --summary --no-system-libs -- "$B/tests/progs/causegen" --seconds 4 \
		--kernels 1 --kernel-us 100 --host-us 500 --mech "$m:3000" >"$TMP/$m.json" 2>"$TMP/$m.err"
	expect_eq "$m: exit status" "$?" 0
	python3 - "$TMP/$m.json" "$m" >>"$TMP/check.txt" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
m = sys.argv[2]
c = [x for x in s["chains"] if x["class"] == "lock_wait"]
c = c[0] if c else None
start, words, kind = {
    "lock-timedmutex": ("lock contention with cg-holder-0", "on a mutex it held", "a mutex"),
    "lock-rwlock": ("lock contention with cg-holder-0", "on a read-write lock it held",
                    "a read-write lock"),
}.get(m, ("waiting on the producer cg-holder-0", "on a condition or semaphore until it signalled",
          "a condition"))
ok = c is not None and c["stack_id"] and c["summary"].startswith(start) and words in c["summary"]
print(("ok   " if ok else "FAIL ") + f"{m}: worded as {kind}: {c and c['summary']}")
# the holder's stack as it woke the feeder: its unlock, or its signal
fn = {"lock-timedmutex": "lll_lock_wake", "lock-rwlock": "pthread_rwlock_unlock"}.get(m, "pthread_cond_signal")
waker = (c or {}).get("waker_site") or []
ok = c is not None and c.get("wake_stack_id") and any(fn in w for w in waker)
print(("ok   " if ok else "FAIL ") + f"{m}: its waker was in {fn}: {waker}")
PY
done

timeout 120 "$IG" --batch --no-system-libs --record "$TMP/fast.db" -- "$B/tests/progs/causegen" \
	--steps 3000 --kernels 1 --kernel-us 10 --host-us 50 --mech lock-mutex:200 \
	>"$TMP/fast.out" 2>"$TMP/fast.err"
expect_eq "fast lock waits: exit status" "$?" 0
python3 - "$TMP/fast.db" >>"$TMP/check.txt" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
tid, first = db.execute("select tid, min(start_ns) from events where kind = 1 group by tid "
                        "order by count(*) desc limit 1").fetchone()
# blocked waits on a futex, semaphore or file lock (IG_SYS_FUTEX 4, IG_SYS_FLOCK 12, IG_SYS_SEMOP 13)
# between calls (not IG_F_IN_CALL), after the thread's first call
rows = db.execute("select start_ns, stack_hash != 0 from events where kind = 2 and state = 2 "
                  "and tid = ? and (flags & 1) = 0 and (arg1 & 255) in (4, 12, 13) and start_ns > ? "
                  "order by start_ns", (tid, first)).fetchall()
# never two within 1 ms; a wait 1 ms or more after the last stack has one
# (unless its walk failed: a few in a hundred at most)
last, early, missed, taken, why = None, 0, 0, 0, ""
for t, has in rows:
    due = last is None or t - last >= 1000000 - 10000  # 10 us: the clocks' conversion
    if has and not due:
        early += 1
        why = why or f" (first: at +{(t - last) / 1e6:.3f} ms)"
    if not has and (last is None or t - last >= 1000000 + 10000):
        missed += 1
    if has:
        last, taken = t, taken + 1
ok = rows and taken and not early and missed <= 0.03 * taken
print(("ok   " if ok else "FAIL ") + f"fast lock waits: {taken} of {len(rows)} have a stack, "
      f"{early} within 1 ms of the last{why}, {missed} due without one")
PY
cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
finish
