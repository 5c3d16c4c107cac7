#!/usr/bin/env bash
# `ingero-top explain` on every shipped recording (ours and Ingero's): the
# JSON report agrees with --json --summary (ops, processes' time, chains),
# the text fits the width, the Markdown has its sections; --since/--until
# (relative, absolute, Unix ns) count exactly the calls SQLite counts in the
# range; --pid and --chain filter and name what the data holds when wrong;
# hostile names are escaped in text and Markdown; live (root), the report of
# a traced workload names it with its command line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"

S=$ROOT/tests/scenarios
F=$ROOT/tests/fixtures/ingero

x() { "$IG" explain "$@" >"$TMP/out" 2>"$TMP/err"; echo $? >"$TMP/rc"; }
rc() { cat "$TMP/rc"; }

# --- every recording: the JSON agrees with --json --summary --------------------------
for db in "$S"/*.db "$F"/*.db; do
	n=$(basename "$db" .db)
	x --json --replay "$db"
	[ "$(rc)" = 0 ] || { bad "$n: explain --json exit $(rc): $(head -c 200 "$TMP/err")"; continue; }
	"$IG" --json --summary --replay "$db" >"$TMP/sum.json"
	if msg=$(python3 - "$TMP/out" "$TMP/sum.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
assert e["type"] == "explain" and e["mode"] == "replay", "type"
assert e["ops"] == s["ops"], "ops differ"
assert e["procs"] == [p for p in s["procs"] if p["cuda"]], "procs differ"
key = lambda c: (c["id"], c["class"], c["severity"], c["impact"], c["culprit_pid"])
assert sorted(map(key, e["chains"])) == sorted(map(key, s["chains"])), "chains differ"
imp = [c["impact"] for c in e["chains"] if c["severity"] != "INFO"]
assert imp == sorted(imp, reverse=True), "actionable chains not by impact"
info = [c["severity"] == "INFO" for c in e["chains"]]
assert info == sorted(info), "an INFO chain before an actionable one"
for c in e["chains"]:
    assert c["proof"] == sorted(c["proof"], key=lambda p: p["ts_ns"]), "proof not in time order"
    assert c["range_share"] is None or 0 <= c["range_share"] <= 1, "range_share"
mx = max([o["max_ns"] for o in s["ops"]] or [0])
assert not e["slow_calls"] or e["slow_calls"][0]["dur_ns"] == mx, "slowest call is not the largest max_ns"
print(len(e["chains"]), "chains,", len(e["ops"]), "ops,", len(e["slow_calls"]), "slow calls")
PY
	); then ok "$n: explain --json agrees with --json --summary ($msg)"; else bad "$n: $msg"; fi
	ops=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["ops"]))' "$TMP/out")
	x --replay "$db" --width 80
	long=$(awk 'length($0) > 80 && $0 !~ /^SOURCE  replay of/' "$TMP/out" | wc -l)
	expect_eq "$n: text lines wider than 80" "$long" 0
	secs=("VERDICT" "WHEN" "FINDINGS")
	[ "$ops" -gt 0 ] && secs+=("PER-OP LATENCY")
	for sec in "${secs[@]}"; do
		grep -q "^$sec" "$TMP/out" || bad "$n: text has no $sec"
	done
	x --replay "$db" --md
	secs=("# Incident report" "## Findings")
	[ "$ops" -gt 0 ] && secs+=("## Per-op latency over the range")
	for sec in "${secs[@]}"; do
		grep -qF "$sec" "$TMP/out" || bad "$n: Markdown has no $sec"
	done
done
COLUMNS=50 "$IG" explain --replay "$S/io-stall.db" >"$TMP/out"
expect_eq "COLUMNS=50: lines wider than 50" "$(awk 'length($0) > 50 && $0 !~ /^SOURCE/' "$TMP/out" | wc -l)" 0

# --- ranges: exactly the calls that complete in them ----------------------------------
db=$S/cpu-contention.db
# relative times count from the replay's span (--json --summary status)
"$IG" --json --summary --replay "$db" >"$TMP/sum.json"
start=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"]["replay_start_ns"])' "$TMP/sum.json")
end=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"]["replay_end_ns"])' "$TMP/sum.json")
calls_in() { sqlite3 "$db" "SELECT COUNT(*) FROM events WHERE source IN (1, 4) AND end_ns > $1 AND end_ns <= $2"; }
json_calls() { python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print(sum(o["calls"] for o in e["ops"]))' "$TMP/out"; }
x --json --replay "$db" --since +1s
expect_eq "--since +1s: the range starts 1 s into the replay" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["range"]["since_ns"])' "$TMP/out")" $((start + 1000000000))
expect_eq "--since +1s: calls completing after start+1s" "$(json_calls)" "$(calls_in $((start + 1000000000)) "$end")"
x --json --replay "$db" --until -1s
expect_eq "--until -1s: calls completing before end-1s" "$(json_calls)" "$(calls_in 0 $((end - 1000000000)))"
mid=$((start + 500000000))
x --json --replay "$db" --since "$mid" --until -0.5s
expect_eq "--since Unix ns --until -0.5s" "$(json_calls)" "$(calls_in "$mid" $((end - 500000000)))"
iso=$(date -u -d "@$((start / 1000000000 + 1))" +%Y-%m-%dT%H:%M:%SZ)
x --json --replay "$db" --since "$iso"
expect_eq "--since $iso (ISO 8601)" "$(json_calls)" "$(calls_in $(((start / 1000000000 + 1) * 1000000000)) "$end")"
x --replay "$db" --since -1s --until +1s
expect_eq "--since after --until: exit 2" "$(rc)" 2
x --replay "$db" --since yesterday
expect_eq "--since yesterday: exit 2" "$(rc)" 2
grep -q "not a time" "$TMP/err" && ok "--since yesterday: says what a time is" || bad "$(cat "$TMP/err")"
x --replay "$db" --since 2020-01-01T00:00:00Z --until 2020-01-02T00:00:00Z
expect_eq "a range without events: exit 1" "$(rc)" 1
grep -q "no events in the range" "$TMP/err" && ok "a range without events: says where the data is" || bad "$(cat "$TMP/err")"

# --- --pid and --chain ------------------------------------------------------------------
pid=$(sqlite3 "$S/dataloader.db" "SELECT pid FROM events WHERE source = 1 GROUP BY pid ORDER BY COUNT(*) DESC LIMIT 1")
x --json --replay "$S/dataloader.db" --pid "$pid"
python3 - "$TMP/out" "$pid" <<'PY' && ok "--pid $pid: only its processes, chains and ops" || bad "--pid: $(head -c 300 "$TMP/out")"
import json, sys
e = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
assert [p["pid"] for p in e["processes"]] == [pid]
assert all(c["pid"] == pid or c["culprit_pid"] == pid for c in e["chains"])
assert all(c["pid"] == pid for c in e["slow_calls"]) and e["ops"]
PY
x --replay "$db" --pid 4194304
expect_eq "--pid not in the data: exit 1" "$(rc)" 1
grep -q "no process 4194304 in the data; processes with CUDA calls:" "$TMP/err" && ok "--pid not in the data: lists the pids" || bad "$(cat "$TMP/err")"
x --json --replay "$db" --chain chain-0001
expect_eq "--chain chain-0001: one chain" "$(python3 -c 'import json,sys; print([c["id"] for c in json.load(open(sys.argv[1]))["chains"]])' "$TMP/out")" "['chain-0001']"
x --json --replay "$db" --chain 1
expect_eq "--chain 1: the same chain" "$(python3 -c 'import json,sys; print([c["id"] for c in json.load(open(sys.argv[1]))["chains"]])' "$TMP/out")" "['chain-0001']"
x --replay "$db" --chain chain-0042
grep -q "no chain 'chain-0042' in the data; chains: chain-0001" "$TMP/err" && [ "$(rc)" = 1 ] &&
	ok "--chain not in the data: exit 1, lists the chains" || bad "--chain: $(cat "$TMP/err")"
x --replay "$db" --md --json
expect_eq "--md --json: exit 2" "$(rc)" 2
x --pid 1 --since +1s
expect_eq "--since live: exit 2" "$(rc)" 2
x --replay "$TMP/missing.db"
expect_eq "missing recording: exit 1" "$(rc)" 1

# --- hostile names ------------------------------------------------------------------------
make_hostile_db "$db" "$TMP/h.db"
sqlite3 "$TMP/h.db" "UPDATE process_names SET name = '[x](y)*b*<b>' || char(27);
	UPDATE events SET comm = '[x](y)*b*<b>' || char(27) WHERE comm != ''"
x --replay "$TMP/h.db"
check_clean "$TMP/out" "hostile text report"
x --replay "$TMP/h.db" --md
check_clean "$TMP/out" "hostile Markdown report"
if grep -qF '\[x\](y)\*b\*\<b\>\\x1b' "$TMP/out" && ! grep -qF '<b>' "$TMP/out" && ! grep -qE '[^\\]\]\(y\)' "$TMP/out"; then
	ok "Markdown: [ ] * < > of a process name escaped (no link, no emphasis, no HTML)"
else
	bad "Markdown escaping: $(grep -m2 -F '(y)' "$TMP/out")"
fi
x --replay "$TMP/h.db" --json
python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); assert any(p["comm"] == "[x](y)*b*<b>\x1b" for p in e["processes"])' "$TMP/out" &&
	ok "JSON: the names come back as they were" || bad "JSON names: $(head -c 300 "$TMP/out")"

# --- refused rows are said (docs/recording.md, "Values out of range") -------------------
# A copy whose events take NULLs: one row in ten loses its end_ns; the text,
# the Markdown and the JSON say how many rows the replay refused.
cp "$S/cpu-contention.db" "$TMP/nulls.db"
sqlite3 "$TMP/nulls.db" "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') WHERE name = 'events'; PRAGMA writable_schema=OFF;"
sqlite3 "$TMP/nulls.db" "UPDATE events SET end_ns = NULL WHERE id % 10 = 0"
nnull=$(sqlite3 "$TMP/nulls.db" "SELECT count(*) FROM events WHERE end_ns IS NULL")
x --json --replay "$TMP/nulls.db"
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows_refused"])' "$TMP/out" 2>&1)
expect_eq "explain --json: rows_refused counts the NULL end_ns rows" "$got" "$nnull"
x --replay "$TMP/nulls.db"
tr -s ' \n' ' ' <"$TMP/out" | grep -q "$nnull rows of the recording refused" &&
	ok "explain text: '$nnull rows of the recording refused'" || bad "text: $(grep -m1 EVENTS -A1 "$TMP/out")"
x --md --replay "$TMP/nulls.db"
grep -q "$nnull rows of the recording refused" "$TMP/out" &&
	ok "explain --md: the refused rows in the Events row" || bad "md: $(grep -m1 Events "$TMP/out")"
# every row refused: said as such, not "no events in the range"
sqlite3 "$TMP/nulls.db" "UPDATE events SET end_ns = NULL; UPDATE system_snapshots SET cpu_pct = 1000; DELETE FROM process_names WHERE is_event = 1"
x --replay "$TMP/nulls.db"
if [ "$(rc)" = 1 ] && grep -q "every row of the recording was refused" "$TMP/err"; then
	ok "every row refused: exit 1, said"
else
	bad "every row refused: exit $(rc): $(cat "$TMP/err")"
fi
# a replay that fails while reading names its cause: an index that does not
# match its table, in a file too big for integrity_check (> 16 MiB)
cp "$S/cpu-contention.db" "$TMP/idx.db"
sqlite3 "$TMP/idx.db" "DROP INDEX idx_events_end; CREATE INDEX idx_events_end ON events(end_ns DESC); PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = 'CREATE INDEX idx_events_end ON events(end_ns)' WHERE name = 'idx_events_end';"
sqlite3 "$TMP/idx.db" "CREATE TABLE pad(b); INSERT INTO pad VALUES (zeroblob(17 * 1024 * 1024))"
x --replay "$TMP/idx.db"
if [ "$(rc)" = 1 ] && grep -q "do not come in the order of their index" "$TMP/err" && ! grep -q "Input/output error" "$TMP/err"; then
	ok "a replay failing midway: its cause, not 'Input/output error'"
else
	bad "failing replay: exit $(rc): $(cat "$TMP/err")"
fi
# a stack frame over replay's 64 MiB value limit: the cause, named
cp "$S/cpu-contention.db" "$TMP/frame.db"
sqlite3 "$TMP/frame.db" "UPDATE stack_traces SET frames = zeroblob(64 * 1024 * 1024 + 10) WHERE rowid = (SELECT MIN(rowid) FROM stack_traces)"
x --replay "$TMP/frame.db"
if [ "$(rc)" = 1 ] && grep -q "reading stack_traces: string or blob too big" "$TMP/err"; then
	ok "a 64 MiB stack frame: the replay's cause"
else
	bad "64 MiB frame: exit $(rc): $(cat "$TMP/err")"
fi
rm -f "$TMP/frame.db" "$TMP/idx.db"

# --- live -----------------------------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	echo "part skipped: live explain needs root"
	finish
fi
x -d 30 --json -- "$WL" --iters 200 --threads 2 --sleep-us 2000
expect_eq "live: exit 0" "$(rc)" 0
python3 - "$TMP/out" <<'PY' && ok "live: the workload with its command line, its ops and calls" || bad "live: $(head -c 400 "$TMP/out")"
import json, sys
e = json.load(open(sys.argv[1]))
assert e["mode"] == "live"
p = [p for p in e["processes"] if p["comm"] == "workload"]
assert p and p[0]["cmdline"] and "--iters 200" in p[0]["cmdline"], p
calls = {o["op"]: o["calls"] for o in e["ops"]}
assert calls.get("cudaStreamSynchronize") == 400, calls
assert e["hosts"] and e["hosts"][0]["command"].endswith("--sleep-us 2000")
PY
# a command ingero-top launched and recorded, and its fork: explain of the
# recording names their command line (the recording keeps the words it was
# started with), and the host's command is the command, not its probe cost
timeout 60 "$IG" --batch -n 100 --record "$TMP/launched.db" -- "$WL" --iters 30 --fork >/dev/null 2>&1
x --json --replay "$TMP/launched.db"
python3 - "$TMP/out" "$WL" <<'PY' && ok "a launched command's recording: its processes' command line, the host's command" || bad "launched: $(head -c 600 "$TMP/out")"
import json, sys
e, wl = json.load(open(sys.argv[1])), sys.argv[2]
p = [p for p in e["processes"] if p["comm"] == "workload"]
assert len(p) == 2 and all(q["cmdline"] == wl + " --iters 30 --fork" for q in p), p
assert e["hosts"][0]["command"] == wl + " --iters 30 --fork", e["hosts"][0]["command"]
PY
finish
