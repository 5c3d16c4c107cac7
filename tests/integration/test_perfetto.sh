#!/usr/bin/env bash
# `ingero-top export --perfetto` on real recordings (no root): every shipped
# scenario recording and Ingero fixture, a merged two-node export, time and
# pid filters, a crafted copy with hostile names, and bad input; as root,
# also a flight-recorder save of a live run. Each trace
# is checked structurally (perfetto_check.py: valid JSON, names, slices
# nested or disjoint per thread, flows paired) and its counts equal the
# recording's own rows, counted with SQL.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"
CHECK="python3 $ROOT/tests/integration/perfetto_check.py"

# The rows of a recording the trace must hold: calls, off-CPU intervals,
# wake-ups (blocked, a waker, not a timer; ingero-top files only), chains,
# process events, host snapshots. $1: db, $2: extra WHERE on events.
sql_counts() {
	local w=${2:-1} flows=0
	if [ "$(sqlite3 "$1" "SELECT COUNT(*) FROM pragma_table_info('events') WHERE name = 'state'")" = 1 ]; then
		flows=$(sqlite3 "$1" "SELECT COUNT(*) FROM events WHERE source = 3 AND op = 1 AND state = 2
			AND other_pid > 0 AND (flags & 8) = 0 AND $w")
	fi
	sqlite3 -separator ' ' "$1" "SELECT
		(SELECT COUNT(*) FROM events WHERE source IN (1, 4) AND $w),
		(SELECT COUNT(*) FROM events WHERE source = 3 AND op = 1 AND $w),
		$flows,
		(SELECT COUNT(*) FROM causal_chains),
		(SELECT COUNT(*) FROM events WHERE source = 3 AND op IN (5, 6, 7) AND $w),
		(SELECT COUNT(*) FROM system_snapshots)"
}

counts_of() { # trace: "calls offcpu flows+skipped chains instants counters"
	python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["otherData"]["counts"]
print(c["calls"], c["offcpu"], c["flows"] + c["flows_skipped"], c["chains"], c["instants"], c["counters"])' "$1"
}

export_one() { # name, files...
	local name=$1; shift
	"$IG" export --perfetto "$TMP/$name.json" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	local rc=$?
	[ $rc = 0 ] || { bad "$name: exit status $rc: $(cat "$TMP/$name.err")"; return 1; }
	[ ! -s "$TMP/$name.out" ] || bad "$name: wrote to stdout"
	grep -q "^ingero-top: exported " "$TMP/$name.err" || bad "$name: no summary line"
}

check() { # name, checker args...
	local name=$1; shift
	if $CHECK "$TMP/$name.json" "$@" >"$TMP/$name.check"; then
		ok "$name: $(tail -n 2 "$TMP/$name.check" | head -n 1)"
	else
		bad "$name: structure"; cat "$TMP/$name.check"
	fi
}

# 1. every shipped recording, alone
for db in "$ROOT"/tests/scenarios/*.db "$ROOT"/tests/fixtures/ingero/*.db; do
	name=$(basename "$db" .db)
	export_one "$name" "$db" || continue
	read -r c o f ch i n <<<"$(sql_counts "$db")"
	check "$name" --expect calls="$c" --expect offcpu="$o" --expect chains="$ch" \
		--expect instants="$i" --expect counters="$n"
	expect_eq "$name: calls, off-CPU, wake-ups (drawn + skipped), chains, process events, snapshots" \
		"$(counts_of "$TMP/$name.json")" "$c $o $f $ch $i $n"
done
# hidden-sync was recorded with --record-rate: the trace has the calls kept
# as rows (counted above) and says how many the file summarised
want=$(sqlite3 "$ROOT/tests/scenarios/hidden-sync.db" "SELECT SUM(calls) FROM ingero_top_summaries")
got=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["otherData"]["counts"]["summarised"])' "$TMP/hidden-sync.json")
[ "${want:-0}" -gt 0 ] && expect_eq "hidden-sync: calls summarised, in the trace's counts" "$got" "$want"
grep -q "^ingero-top: export: $want calls the recording summarised" "$TMP/hidden-sync.err" &&
	ok "hidden-sync: says the summarised calls are not in the trace" ||
	bad "hidden-sync: no line about the summarised calls"
skipped=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["otherData"]["counts"]["flows_skipped"])' "$TMP/dataloader.json")
flows=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["otherData"]["counts"]["flows"])' "$TMP/dataloader.json")
[ "$flows" -gt 0 ] && [ "$skipped" = 0 ] && ok "dataloader: $flows wake-up arrows from the loader workers, none skipped" \
	|| bad "dataloader: $flows arrows, $skipped skipped"
python3 - "$TMP/dataloader.json" <<'PY' && ok "dataloader: most arrows start at the loader worker (dl-worker-0)" || bad "dataloader: arrow sources"
import collections, json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
src = collections.Counter(names.get(e["pid"], "?") for e in evs if e["ph"] == "s")
top, n = src.most_common(1)[0]
sys.exit(0 if top.startswith("dl-worker") and n > sum(src.values()) // 2 else 1)
PY
# the stacks of a recording with stack_traces come along as args
python3 - "$TMP/cpu-contention.json" <<'PY' && ok "cpu-contention: calls carry their stack frames" || bad "no stack frames in args"
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
calls = [e for e in evs if e.get("cat") == "cuda"]
with_stack = [e for e in calls if isinstance(e["args"].get("stack"), list) and e["args"]["stack"]]
sys.exit(0 if len(with_stack) > len(calls) // 2 and "workload" in " ".join(with_stack[0]["args"]["stack"]) else 1)
PY

# 2. two nodes merged: one pid namespace and one process group per node
F=$ROOT/tests/fixtures/ingero
export_one merged "$F/sample-gpu-node-01.db" "$F/sample-gpu-node-02.db"
read -r c1 o1 f1 ch1 i1 n1 <<<"$(sql_counts "$F/sample-gpu-node-01.db")"
read -r c2 o2 f2 ch2 i2 n2 <<<"$(sql_counts "$F/sample-gpu-node-02.db")"
check merged --nodes 2 --expect calls=$((c1 + c2)) --expect offcpu=$((o1 + o2)) \
	--expect chains=$((ch1 + ch2)) --expect counters=$((n1 + n2))
python3 - "$TMP/merged.json" <<'PY' && ok "merged: process names carry the real pid and the node, one node per namespace" || bad "merged: process names"
import json, re, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
nodes = {}
for pid, name in procs.items():
    if pid >= 0x7F000000:
        continue
    m = re.search(r"\[(\d+)\] on (\S+)$", name)
    assert m, name
    assert int(m.group(1)) == pid & ((1 << 22) - 1), (pid, name)
    nodes.setdefault(pid >> 22, set()).add(m.group(2))
assert len(nodes) == 2 and all(len(v) == 1 for v in nodes.values()), nodes
assert {next(iter(v)) for v in nodes.values()} == {"gpu-node-01", "gpu-node-02"}, nodes
assert {n for p, n in procs.items() if p >= 0x7F000000} == {"node gpu-node-01", "node gpu-node-02"}
PY
# whose chains: Ingero's files hold Ingero's, said in the name, the args
# and on stderr; ours hold ingero-top's (the viewer and explain re-detect)
export_one own "$ROOT/tests/scenarios/cpu-contention.db"
python3 - "$TMP/merged.json" "$TMP/own.json" <<'PY' && ok "chains say whose they are (Ingero's in Ingero's files)" || bad "chains: whose"
import json, sys
ing = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "chain"]
own = [e for e in json.load(open(sys.argv[2]))["traceEvents"] if e.get("cat") == "chain"]
assert ing and all(e["name"].endswith("(Ingero's)") and e["args"]["detected_by"].startswith("Ingero") for e in ing)
assert own and all("Ingero" not in e["name"] and e["args"]["detected_by"].startswith("ingero-top") for e in own)
PY
grep -q "of the chains are Ingero's" "$TMP/merged.err" && ! grep -q "Ingero's" "$TMP/own.err" &&
	ok "export says which chains are Ingero's" || bad "stderr: $(cat "$TMP/merged.err" "$TMP/own.err")"
check sample-cluster --nodes "$(sqlite3 "$F/sample-cluster.db" "SELECT COUNT(DISTINCT node) FROM events WHERE source IN (1, 3, 4)")"

# 3. a time range (absolute and relative give the same trace) and a pid
db=$ROOT/tests/scenarios/dataloader.db
start=$(sqlite3 "$db" "SELECT MIN(m) FROM (SELECT MIN(end_ns) AS m FROM events UNION ALL
	SELECT MIN(timestamp) FROM system_snapshots UNION ALL
	SELECT MIN(seen_at) FROM process_names WHERE is_event = 1)")
since=$((start + 2000000000)) until=$((start + 4500000000))
abs() { printf '%d.%09d' $(($1 / 1000000000)) $(($1 % 1000000000)); }
export_one range "$db" --since "$(abs $since)" --until "$(abs $until)"
export_one range-rel "$db" --since +2 --until +4.5
# start_ns, not timestamp: for sched_switch rows Ingero's timestamp is the end
w="start_ns <= $until AND end_ns >= $since"
read -r c o f ch i n <<<"$(sql_counts "$db" "$w")"
check range --since $since --until $until --expect calls="$c" --expect offcpu="$o" --expect instants="$i"
[ "$c" -gt 0 ] && [ "$c" -lt "$(sql_counts "$db" | cut -d' ' -f1)" ] && ok "range: $c of the calls overlap [2 s, 4.5 s]" \
	|| bad "range: $c calls"
cmp -s "$TMP/range.json" "$TMP/range-rel.json" && ok "range: +2 +4.5 and the Unix times give the same file" \
	|| bad "range: relative and absolute differ"
export_one range-iso "$db" --since "$(date -u -d @$((since / 1000000000)) +%Y-%m-%dT%H:%M:%S).$(printf %09d $((since % 1000000000)))Z" \
	--until "$(abs $until)"
cmp -s "$TMP/range.json" "$TMP/range-iso.json" && ok "range: the UTC form gives the same file" || bad "range: UTC form differs"
pid=$(sqlite3 "$db" "SELECT pid FROM events WHERE source IN (1, 4) GROUP BY pid ORDER BY COUNT(*) DESC LIMIT 1")
export_one pid "$db" --pid "$pid"
read -r c o f ch i n <<<"$(sql_counts "$db" "pid = $pid")"
check pid --pids "$pid" --expect calls="$c" --expect offcpu="$o"

# 4. hostile names: valid JSON, the same counts, the names back byte for byte
src=$ROOT/tests/scenarios/dataloader.db
make_hostile_db "$src" "$TMP/hostile.db" || bad "cannot build the crafted copy"
sqlite3 "$TMP/hostile.db" "UPDATE causal_chains SET root_cause = root_cause || char(27) || '\"' || char(92) || 'x',
	severity = severity || char(10)"
export_one hostile "$TMP/hostile.db"
check hostile
expect_eq "hostile: the same counts as the plain recording" "$(counts_of "$TMP/hostile.json")" \
	"$(counts_of "$TMP/dataloader.json")"
python3 - "$TMP/hostile.json" "$H_TITLE" <<'PY' && ok "hostile: names decode to their bytes, the file holds no control byte" || bad "hostile names"
import json, sys
raw = open(sys.argv[1], "rb").read()
assert not any(b < 0x20 and b != 0x0A for b in raw), "a raw control byte"
evs = json.loads(raw)["traceEvents"]
names = {e["args"]["name"] for e in evs if e["ph"] == "M"}
assert any(sys.argv[2] in n for n in names), names
PY
check_clean "$TMP/hostile.err" "hostile: stderr"

# 5. a flight-recorder save (root: a live run): its calls are the workload's
if [ "$(id -u)" = 0 ] && [ -x "$WL" ]; then
	mkdir -p "$TMP/fl"
	"$WL" --wait-signal --iters 100 --kernels 2 --kernel-us 200 --sync-every 1 --expect "$TMP/fl.expect" \
		>"$TMP/fl.ready" 2>&1 &
	wl=$!
	wait_until 30 grep -q ready "$TMP/fl.ready" || bad "flight: the workload never said ready"
	"$IG" -v --batch --summary --no-system-libs --flight-dir "$TMP/fl" --pid "$wl" >/dev/null 2>"$TMP/fl.err" &
	ig=$!
	cleanup_hooks+=("kill $wl $ig 2>/dev/null")
	wait_until 30 lines_at_least "$TMP/fl.err" "attached [0-9]+ ops" 2 || bad "flight: not attached"
	kill -USR1 $wl
	wait $wl
	nsaved() { grep -c "saved .* events" "$TMP/fl.err"; }
	# the save holds what was ingested: save again until every call is in one
	for i in 1 2 3 4 5 6; do
		n0=$(nsaved)
		kill -USR1 $ig
		more() { [ "$(nsaved)" -gt "$n0" ]; }
		wait_until 30 more || continue
		FL=$(ls -t "$TMP"/fl/ingero-top-flight-*.db 2>/dev/null | head -1)
		[ -n "$FL" ] && [ "$(sqlite3 "$FL" "SELECT COUNT(*) FROM events WHERE source IN (1, 4)")" = \
			"$(expect_counts "$TMP/fl.expect" | awk '{s += $2} END {print s}')" ] && break
		sleep 1
	done
	kill -INT $ig
	wait $ig
	if [ -n "${FL:-}" ]; then
		export_one flight "$FL"
		check flight --expect calls="$(expect_counts "$TMP/fl.expect" | awk '{s += $2} END {print s}')"
	else
		bad "flight: nothing saved: $(tail -n 3 "$TMP/fl.err")"
	fi
else
	echo "skip part: a flight-recorder save needs root and $WL"
fi

# 6. to stdout; bad input: one line, exit 2 (usage) or 1 (failure), no file left
"$IG" export --perfetto - "$ROOT/tests/scenarios/memcpy.db" >"$TMP/stdout.json" 2>/dev/null
export_one memcpy2 "$ROOT/tests/scenarios/memcpy.db"
cmp -s "$TMP/stdout.json" "$TMP/memcpy2.json" && ok "--perfetto - writes the same trace to stdout" || bad "stdout trace differs"
usage() { # want-status, args...
	local want=$1; shift
	"$IG" export "$@" >"$TMP/u.out" 2>"$TMP/u.err"
	local rc=$?
	if [ $rc = "$want" ] && [ "$(wc -l <"$TMP/u.err")" = 1 ] && grep -q "^ingero-top: export: " "$TMP/u.err"; then
		ok "export $*: exit $rc, one line"
	else
		bad "export $*: exit $rc (want $want): $(cat "$TMP/u.err")"
	fi
}
usage 2
usage 2 "$db"
usage 2 --perfetto "$TMP/o.json"
usage 2 --perfetto "$TMP/o.json" --since yesterday "$db"
usage 2 --perfetto "$TMP/o.json" --since +5 --until +1 "$db"
usage 2 --perfetto "$TMP/o.json" --pid 0 "$db"
usage 2 --perfetto "$TMP/o.json" --frobnicate "$db"
usage 1 --perfetto "$TMP/o.json" "$TMP/missing.db"
printf 'not a database' >"$TMP/junk.db"
usage 1 --perfetto "$TMP/o.json" "$TMP/junk.db"
usage 1 --perfetto "$TMP/no/such/dir/o.json" "$db"
# refused rows are said; a trace with no event is not written
cp "$db" "$TMP/nulls.db"
sqlite3 "$TMP/nulls.db" "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') WHERE name = 'events'; PRAGMA writable_schema=OFF;"
sqlite3 "$TMP/nulls.db" "UPDATE events SET end_ns = NULL WHERE id % 10 = 0"
nnull=$(sqlite3 "$TMP/nulls.db" "SELECT count(*) FROM events WHERE end_ns IS NULL")
"$IG" export --perfetto "$TMP/n.json" "$TMP/nulls.db" 2>"$TMP/n.err"
rc=$?
[ $rc = 0 ] && grep -q "^ingero-top: export: $nnull rows of the recording refused" "$TMP/n.err" &&
	ok "export: the $nnull refused rows said" || bad "refused rows: exit $rc: $(cat "$TMP/n.err")"
sqlite3 "$TMP/nulls.db" "UPDATE events SET end_ns = NULL; UPDATE system_snapshots SET cpu_pct = 1000; DELETE FROM process_names"
usage 1 --perfetto "$TMP/o.json" "$TMP/nulls.db"
grep -q "every row of the recording was refused" "$TMP/u.err" && ok "every row refused: said" || bad "all refused: $(cat "$TMP/u.err")"
usage 1 --perfetto "$TMP/o.json" --since +100000 "$db"
grep -q "no event of the recordings is in the range" "$TMP/u.err" && ok "an empty range: said" || bad "empty range: $(cat "$TMP/u.err")"
[ ! -e "$TMP/o.json" ] && [ -z "$(ls "$TMP" | grep 'o.json.tmp')" ] && ok "no output file left by the failures" || bad "a file was left"
"$IG" export --help | grep -q -- "--perfetto OUT.json" && ok "export --help" || bad "export --help"
finish
