#!/usr/bin/env bash
# needs: root
# Tail-only user stacks (the default, docs/stacks.md) through the real
# uprobes, on recordings of the shim workload with known slow calls
# (every 50th cudaMalloc takes 5 ms of CPU):
#   1. tail: every slow cudaMalloc has its stack; the first 10 calls of
#      each op (before its threshold exists) have theirs; of the fast
#      launches (at or under the op's median, after the first 3 s) about
#      1 in 64 has one (0.6-1.6 times 1/64: ~200 expected, a binomial
#      spread of ~7 %);
#   2. all: every call has its stack; in both modes every stack a call
#      names is in the file (none lost at the close);
#   3. in both modes, the slowest calls and the chain proofs that explain
#      shows are calls with stacks, and the tail mode's slowest calls have
#      stacks that the all mode also shows for the same op;
#   4. off: no call has a stack.
. "$(dirname "$0")/lib.sh"
need_root

wl=(--iters 3000 --kernels 8 --sleep-us 1000 --slow-malloc-every 50)
rec() { # name, ingero-top options...
	local name=$1; shift
	timeout 60 "$IG" --batch --summary --no-system-libs --record "$TMP/$name.db" "$@" \
		-- "$WL" "${wl[@]}" >"$TMP/$name.out" 2>"$TMP/$name.err"
	expect_eq "$name: exit status" "$?" 0
	grep -h "still being resolved" "$TMP/$name.err" | sed 's/^/     /' # said when it happens
	"$IG" explain --json --replay "$TMP/$name.db" >"$TMP/$name.json" 2>"$TMP/$name.xerr" ||
		bad "$name: explain failed: $(head -c 200 "$TMP/$name.xerr")"
}
rec tail
grep -q "user stacks of the tail (.* 1 in 64 " "$TMP/tail.out" "$TMP/tail.err" &&
	ok "tail: the attach summary says tail-only, 1 in 64" || bad "tail: no tail line in the attach summary"
rec all --stack-mode all

check() { # mode, db, explain json[, all db]
	python3 - "$@" <<'PY'
import json, sqlite3, sys
mode, path, xpath = sys.argv[1:4]
db = sqlite3.connect(path)
calls = "source in (1, 4) and kind = 1"  # calls of the runtime and the driver
out = []
def ok(m): out.append("ok   " + m)
def bad(m): out.append("FAIL " + m)
def check(cond, m): (ok if cond else bad)(m)
n, withs = db.execute(f"select count(*), sum(stack_hash != 0) from events where {calls}").fetchone()
if mode == "all":
    check(n > 50000 and withs == n, f"all: {withs} of {n} calls have a stack")
elif mode == "off":
    check(n > 0 and not withs, f"off: {withs or 0} of {n} calls have a stack")
if mode != "off":  # a stack a call names is in the file (not lost at the close)
    hs = {h for (h,) in db.execute(f"select distinct stack_hash from events where {calls} and stack_hash != 0")}
    rows = {h for (h,) in db.execute("select hash from stack_traces")}
    check(hs and hs <= rows, f"{mode}: the {len(hs)} stacks the calls name are in the file ({len(hs - rows)} not)")
if mode == "tail":
    slow = db.execute(f"select count(*), sum(stack_hash != 0) from events where {calls} "
                      "and source = 1 and op = 1 and duration >= 4000000").fetchone()
    check(slow[0] >= 55 and slow[1] == slow[0], f"tail: {slow[1]} of {slow[0]} slow cudaMalloc calls have a stack")
    first_bad = 0
    for src, op in db.execute(f"select distinct source, op from events where {calls}").fetchall():
        first = db.execute(f"select stack_hash from events where {calls} and source = ? and op = ? "
                           "order by timestamp limit 10", (src, op)).fetchall()
        first_bad += sum(1 for (h,) in first if not h)
    check(first_bad == 0, f"tail: the first 10 calls of each op have stacks ({first_bad} without)")
    t0 = db.execute(f"select min(timestamp) from events where {calls}").fetchone()[0]
    fast = taken = 0
    for src, op in ((1, 3), (4, 1)):  # cudaLaunchKernel, cuLaunchKernel
        d = [r[0] for r in db.execute(f"select duration from events where {calls} and source = ? and op = ?",
                                      (src, op))]
        d.sort()
        med = d[len(d) // 2]
        f, t = db.execute(f"select count(*), sum(stack_hash != 0) from events where {calls} and source = ? "
                          "and op = ? and duration <= ? and timestamp >= ?", (src, op, med, t0 + 3 * 10**9)).fetchone()
        fast += f; taken += t or 0
    r = taken * 64 / fast if fast else 0
    check(fast > 5000 and 0.6 <= r <= 1.6,
          f"tail: {taken} of {fast} fast launches have a stack: {r:.2f} x 1/64 (0.6-1.6)")
if mode != "off":
    e = json.load(open(xpath))
    sc = e["slow_calls"]
    check(sc and all(s["stack_id"] not in (None, "0x0") and s["frames"] for s in sc),
          f"{mode}: the {len(sc)} slowest calls explain shows have stacks with frames")
    proofs = nost = 0
    classes = []
    for c in e["chains"]:
        classes.append(c["class"])
        for p in c["proof"]:
            r = db.execute(f"select stack_hash from events where {calls} and timestamp = ?", (p["ts_ns"],)).fetchall()
            if r:
                proofs += 1
                nost += sum(1 for (h,) in r if not h)
    check("alloc_spikes" in classes and proofs >= 5 and nost == 0,
          f"{mode}: chains {sorted(set(classes))}: {proofs - nost} of {proofs} calls of their proofs have stacks")
    if len(sys.argv) > 4:  # the tail's slowest calls have stacks the all mode also has
        adb = sqlite3.connect(sys.argv[4])
        seen = {}
        for h, fr in adb.execute("select hash, frames from stack_traces"):
            seen[h] = tuple(f.get("s", "?") for f in json.loads(fr))
        allsyms = {}
        for src, op, h in adb.execute(f"select distinct source, op, stack_hash from events where {calls}"):
            if h in seen:
                allsyms.setdefault((src, op), set()).add(seen[h])
        miss, why = 0, ""
        for s in sc:
            key = db.execute(f"select source, op from events where {calls} and timestamp = ? "
                             "and duration = ?", (s["ts_ns"], s["dur_ns"])).fetchone()
            sig = tuple(f["text"].split(" ")[0] for f in s["frames"])
            if key is None or sig not in allsyms.get(tuple(key), ()):
                miss += 1
                if miss == 1:  # what differed, for the first one
                    why = (f": call at {s['ts_ns']} ({s['dur_ns']} ns), (source, op) {key}, "
                           f"frames {sig}; all's for it: "
                           f"{sorted(allsyms.get(tuple(key), ()))[:4] if key else '-'} "
                           f"(of {len(seen)} stacks, {len(allsyms)} (source, op) keys)")
        check(miss == 0, f"tail: the stacks of the {len(sc)} slowest calls are stacks of the same ops in --stack-mode all ({miss} not){why if miss else ''}")
print("\n".join(out))
PY
}
check tail "$TMP/tail.db" "$TMP/tail.json" "$TMP/all.db" >"$TMP/check.txt"
check all "$TMP/all.db" "$TMP/all.json" >>"$TMP/check.txt"
cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))

# 4. off: a short run, no stacks.
wl=(--iters 300 --kernels 8)
timeout 30 "$IG" --batch --summary --no-system-libs --stack-mode off --record "$TMP/off.db" \
	-- "$WL" "${wl[@]}" >"$TMP/off.out" 2>"$TMP/off.err"
expect_eq "off: exit status" "$?" 0
check off "$TMP/off.db" - >"$TMP/check.txt"
cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
"$IG" --stack-mode some >/dev/null 2>"$TMP/bad.err"
expect_eq "--stack-mode some: exit status" "$?" 2
finish
