#!/usr/bin/env bash
# The size of `ingero-top export`: --max-events N writes the first N events
# and a cut trace never looks complete (the file's otherData.cut and an
# "export cut" instant where it stops, a summary that says "cut", a line on
# stderr with the events left out, which add up with the trace to the whole
# export; exit 0, the cut was asked for); a recording of a million rows is
# said to be large before anything is written (a 10^7-row export once
# wrote 1.97 GB without a word), a small one is not, nor one that
# --max-events keeps small.
. "$(dirname "$0")/lib.sh"
CHECK="python3 $ROOT/tests/integration/perfetto_check.py"
db=$ROOT/tests/scenarios/dataloader.db

counts() { # trace: "calls offcpu instants counters chains left_out"
	python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["otherData"]["counts"]
print(c["calls"], c["offcpu"], c["instants"], c["counters"], c["chains"], c.get("left_out", 0))' "$1"
}

# --- the whole trace, then the same cut at 1000 events ------------------------------------------
"$IG" export --perfetto "$TMP/all.json" "$db" 2>"$TMP/all.err"
expect_eq "whole export: exit status" "$?" 0
read -r c o i n ch lo <<<"$(counts "$TMP/all.json")"
total=$((c + o + i + n))
[ "$total" -gt 2000 ] && ok "whole export: $total events, $ch chains" || bad "whole export: only $total events"

"$IG" export --perfetto "$TMP/cut.json" --max-events 1000 "$db" >"$TMP/cut.out" 2>"$TMP/cut.err"
expect_eq "--max-events 1000: exit status (the cut was asked for)" "$?" 0
$CHECK "$TMP/cut.json" >"$TMP/cut.check" && ok "cut trace: valid structure ($(tail -n 2 "$TMP/cut.check" | head -n 1))" ||
	{ bad "cut trace: structure"; cat "$TMP/cut.check"; }
read -r c2 o2 i2 n2 ch2 lo2 <<<"$(counts "$TMP/cut.json")"
expect_eq "cut trace: events written" "$((c2 + o2 + i2 + n2))" 1000
expect_eq "cut trace: written + left out = the whole export's events and chains" \
	"$((c2 + o2 + i2 + n2 + ch2 + lo2))" "$((total + ch))"
python3 - "$TMP/cut.json" "$lo2" <<'PY' && ok "cut trace: otherData.cut and an 'export cut' instant at the cut" || bad "cut trace: not marked as cut"
import json, sys
d = json.load(open(sys.argv[1]))
cut = d["otherData"]["cut"]
assert cut["max_events"] == 1000 and cut["left_out"] == int(sys.argv[2]) > 0, cut
marks = [e for e in d["traceEvents"] if e.get("cat") == "export"]
assert len(marks) == 1 and marks[0]["ph"] == "i" and "cut" in marks[0]["name"], marks
ts = [e["ts"] for e in d["traceEvents"] if e.get("cat") in ("cuda", "offcpu")]
assert marks[0]["ts"] >= max(ts) - 30, (marks[0]["ts"], max(ts))  # at the end (starts vs ends)
PY
grep -q "^ingero-top: exported .*cut.json, cut at 1000 events: " "$TMP/cut.err" &&
	ok "cut: the summary line says cut" || bad "cut: summary line: $(cat "$TMP/cut.err")"
grep -qE "^ingero-top: export: the trace is cut: --max-events 1000 reached at \+[0-9.]+ s; $lo2 more events" "$TMP/cut.err" &&
	ok "cut: stderr says how many were left out ($lo2)" || bad "cut: no left-out line: $(cat "$TMP/cut.err")"
[ ! -s "$TMP/cut.out" ] && ok "cut: nothing on stdout" || bad "cut: wrote to stdout"

# a cap above the recording's events: the same file as without it, nothing said
"$IG" export --perfetto "$TMP/big-cap.json" --max-events 100000000 "$db" 2>"$TMP/big-cap.err"
cmp -s "$TMP/all.json" "$TMP/big-cap.json" && ok "--max-events above the events: the same file" || bad "--max-events above: the file differs"
grep -q "cut" "$TMP/big-cap.err" && bad "--max-events above: says cut" || ok "--max-events above: no cut said"
# to stdout, cut too
"$IG" export --perfetto - --max-events 10 "$db" >"$TMP/ten.json" 2>"$TMP/ten.err"
expect_eq "--perfetto - --max-events 10: events in the trace" \
	"$(counts "$TMP/ten.json" | awk '{print $1 + $2 + $3 + $4}')" 10

# bad values: one line, exit 2
for v in 0 -5 abc 1e3 10x ""; do
	"$IG" export --perfetto "$TMP/bad.json" --max-events "$v" "$db" >/dev/null 2>"$TMP/bad.err"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$TMP/bad.err")" = 1 ] && grep -q -- "--max-events" "$TMP/bad.err" &&
		ok "--max-events '$v': exit 2, one line" || bad "--max-events '$v': exit $rc: $(cat "$TMP/bad.err")"
done
[ ! -e "$TMP/bad.json" ] && ok "bad values: no file" || bad "bad values: a file was written"

# --- a large trace is said before it is written ---------------------------------------------
grep -q warning "$TMP/all.err" && bad "a small export warns: $(cat "$TMP/all.err")" || ok "a small export: no warning"
cp "$ROOT/tests/scenarios/memcpy.db" "$TMP/big.db"
sqlite3 "$TMP/big.db" "WITH RECURSIVE k(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM k LIMIT 1200000)
	INSERT INTO events(timestamp, pid, tid, source, op, duration, start_ns, end_ns)
	SELECT 1795474380000000000 + x * 1000, 7, 7, 1, 1, 500, 1795474380000000000 + x * 1000,
	1795474380000000000 + x * 1000 + 500 FROM k" || bad "cannot build a large recording"
rows=$(sqlite3 "$TMP/big.db" "SELECT COUNT(*) FROM events")
"$IG" export --perfetto - --pid 1 "$TMP/big.db" >/dev/null 2>"$TMP/big.err"
grep -qE "^ingero-top: export: warning: a large trace: at most [0-9.]+M events, about [0-9.]+[MG]iB of JSON" "$TMP/big.err" &&
	ok "a $rows-row recording: warned before writing: $(grep warning "$TMP/big.err" | cut -c1-90)" ||
	bad "a $rows-row recording: no warning: $(cat "$TMP/big.err")"
[ "$(head -n 1 "$TMP/big.err" | grep -c warning)" = 1 ] && ok "the warning comes first (before the export ends)" ||
	bad "the warning is not the first line"
"$IG" export --perfetto - --max-events 1000 "$TMP/big.db" >/dev/null 2>"$TMP/bigcut.err"
grep -q warning "$TMP/bigcut.err" && bad "--max-events 1000 of a large recording still warns" ||
	ok "--max-events 1000 of a large recording: no warning"
finish
