#!/usr/bin/env bash
# needs: root
# --record-rate on a live storm through the real probes: the workload makes
# a known number of calls (a launch, a 4-byte device-to-host copy and a
# stream sync a step); recorded at 200 calls/s of a thread, the file keeps
# a fraction of them as rows and summarises the rest; the replay has every
# op's count exactly (the workload's own), the live run's top chain, and says
# the times are estimated; the batch status counts the calls summarised.
. "$(dirname "$0")/lib.sh"
need_root
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }

"$IG" --batch --summary --json --no-system-libs --record "$TMP/run.db" --record-rate 200 \
	-- "$WL" --iters 150000 --kernels 1 --kernel-us 5 --d2h 4 --sync-every 1 \
	--expect "$TMP/run.expect" >"$TMP/live.json" 2>"$TMP/live.err"
expect_eq "live exit status" "$?" 0
expect_counts "$TMP/run.expect" >"$TMP/want.counts"
want=$(awk '{s += $2} END {print s}' "$TMP/want.counts")

rows=$(sqlite3 "$TMP/run.db" "SELECT COUNT(*) FROM events WHERE source IN (1, 4)")
told=$(sqlite3 "$TMP/run.db" "SELECT COALESCE(SUM(calls), 0) FROM ingero_top_summaries")
expect_eq "rows kept + calls summarised = the workload's calls" "$((rows + told))" "$want"
[ "$told" -gt $((want / 2)) ] && ok "most calls summarised: $told of $want ($rows rows)" ||
	bad "summarised $told of $want"
expect_eq "schema of a file with summaries" \
	"$(sqlite3 "$TMP/run.db" "SELECT value FROM schema_info WHERE key = 'ingero_top_schema'")" 2
live_told=$(python3 -c 'import json, sys
print([json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]["status"]["record_summarised"])' "$TMP/live.json")
# the last frame comes before the recording's close, which ends the runs still open
[ "${live_told:-0}" -gt 0 ] && [ "$live_told" -le "$told" ] &&
	ok "the live status counts the calls summarised: $live_told by the last frame, $told in the file" ||
	bad "record_summarised: '$live_told' (the file: $told)"

chmod 644 "$TMP/run.db"
setpriv --reuid=65534 --regid=65534 --clear-groups "$IG" --batch --summary --replay "$TMP/run.db" \
	>"$TMP/rp.txt" 2>"$TMP/rp.err"
expect_eq "replay as nobody: exit status" "$?" 0
awk '/^OP /{t=1; next} t && NF == 0 {exit} t {print $1, $2}' "$TMP/rp.txt" | sort >"$TMP/rp.counts"
diff -u "$TMP/want.counts" "$TMP/rp.counts" >/dev/null &&
	ok "replay: every op's count is the workload's own ($(wc -l <"$TMP/want.counts") ops, $want calls)" ||
	{ bad "replay counts differ"; diff -u "$TMP/want.counts" "$TMP/rp.counts"; }
grep -q "^message --record-rate recording: summarised calls' counts exact, times estimated" "$TMP/rp.txt" &&
	ok "replay: says the times are estimated" || bad "replay: no notice of the summarised calls"
python3 - "$TMP/live.json" >"$TMP/live.classes" <<'PY'
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
print(last["chains"][0]["class"] if last["chains"] else "none")
PY
awk '/^CHAINS/ { c = "none"; if ((getline) > 0 && /^\[/) c = $3; print c; exit }' "$TMP/rp.txt" >"$TMP/rp.classes"
expect_eq "replay: the live run's top chain" "$(cat "$TMP/rp.classes")" "$(cat "$TMP/live.classes")"
[ "$(cat "$TMP/live.classes")" != none ] && ok "the storm raised a chain live: $(cat "$TMP/live.classes")" ||
	bad "no chain live: the storm was too short to judge"
finish
