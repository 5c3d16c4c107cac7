#!/usr/bin/env bash
# --since/--until of the main command's replay: batch (--summary, --json)
# counts exactly the events SQLite holds in the range (their completion
# time, both bounds included: calls, snapshots, names), for every form a
# time takes (+30s, -5m, a time of day, ISO 8601, Unix ns); the replay's
# span is the range's; --events prints only those events; bad values are a
# one-line error and exit 2. No root.
. "$(dirname "$0")/lib.sh"

db=$ROOT/tests/scenarios/cpu-contention.db
x() { "$IG" "$@" >"$TMP/out" 2>"$TMP/err"; echo $? >"$TMP/rc"; }
rc() { cat "$TMP/rc"; }
st() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"][sys.argv[2]])' "$TMP/out" "$1"; }
calls() { python3 -c 'import json,sys; print(sum(o["calls"] for o in json.load(open(sys.argv[1]))["ops"] if o["op"] == sys.argv[2]))' "$TMP/out" "$1"; }
q() { sqlite3 "$db" "$1"; }
# what the replay delivers from $1 to $2 (Unix ns, both included)
events_in() {
	q "SELECT (SELECT COUNT(*) FROM events WHERE end_ns BETWEEN $1 AND $2)
		+ (SELECT COUNT(*) FROM system_snapshots WHERE timestamp BETWEEN $1 AND $2)
		+ (SELECT COUNT(*) FROM process_names WHERE is_event = 1 AND seen_at BETWEEN $1 AND $2)"
}
launches_in() {
	q "SELECT COUNT(*) FROM events e JOIN ops o ON o.source_id = e.source AND o.op_id = e.op
		WHERE o.name = 'cudaLaunchKernel' AND e.end_ns BETWEEN $1 AND $2"
}

x --json --summary --replay "$db"
start=$(st replay_start_ns) end=$(st replay_end_ns)
all=$(st events_total)
expect_eq "the whole file: every event" "$all" "$(events_in 0 "$end")"
S=1000000000
day=$(python3 -c 'import sys, time; print(time.strftime("%H:%M:%S", time.gmtime(int(sys.argv[1]) // 10**9 + 5)))' "$start")
iso=$(python3 -c 'import sys, time; print(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(sys.argv[1]) // 10**9 + 12)))' "$start")
mid=$((start + 9 * S + 123456789))
# form: since-args | until-args | since ns | until ns (0: the end)
while IFS='|' read -r a b lo hi; do
	args=()
	[ -n "$a" ] && args+=(--since "$a")
	[ -n "$b" ] && args+=(--until "$b")
	[ "$hi" = 0 ] && hi=$end
	x --json --summary --replay "$db" "${args[@]}"
	what="${args[*]}"
	[ "$(rc)" = 0 ] || { bad "$what: exit $(rc): $(head -c 300 "$TMP/err")"; continue; }
	want=$(events_in "$lo" "$hi")
	[ "$want" -gt 0 ] && [ "$want" -lt "$all" ] || bad "$what: the range holds $want of $all events"
	expect_eq "$what: events" "$(st events_total)" "$want"
	expect_eq "$what: cudaLaunchKernel calls" "$(calls cudaLaunchKernel)" "$(launches_in "$lo" "$hi")"
	s=$(st replay_start_ns) e=$(st replay_end_ns)
	[ "$s" -ge "$lo" ] && [ "$e" -le "$hi" ] && [ "$s" -lt "$e" ] ||
		bad "$what: the replay spans $s .. $e, outside $lo .. $hi"
done <<EOF2
+5s|+10s|$((start + 5 * S))|$((start + 10 * S))
-7s||$((end - 7 * S))|0
|+3s|0|$((start + 3 * S))
$day||$(((start / S + 5) * S))|0
$iso|-2.5s|$(((start / S + 12) * S))|$((end - 2500000000))
$mid|$((mid + 2 * S))|$mid|$((mid + 2 * S))
EOF2

# the text summary and --events: the same range
x --summary --replay "$db" --since +5s --until +10s
[ "$(rc)" = 0 ] && grep -q "cudaLaunchKernel" "$TMP/out" && ok "--summary (text) with a range" ||
	bad "--summary (text): exit $(rc): $(head -c 300 "$TMP/err")"
x --events --replay "$db" --since +5s --until +10s
expect_eq "--events: one line per event in the range" "$(wc -l <"$TMP/out")" \
	"$(events_in $((start + 5 * S)) $((start + 10 * S)))"
# frames: the first starts at the range, none after it
x --json --replay "$db" --since +5s --until +10s
first=$(head -1 "$TMP/out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["time_ns"])')
last=$(tail -1 "$TMP/out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["time_ns"])')
[ "$first" -gt $((start + 5 * S)) ] && [ "$first" -le $((start + 7 * S)) ] &&
	[ "$last" -le $((start + 10 * S)) ] && ok "frames from +5s to +10s" ||
	bad "frames from $(((first - start) / 1000000)) ms to $(((last - start) / 1000000)) ms"

# bad values: one line, exit 2
while IFS='|' read -r what want; do
	read -ra args <<<"$what"
	x --batch --summary "${args[@]}"
	expect_eq "$what: exit 2" "$(rc)" 2
	expect_eq "$what: one line on stderr" "$(wc -l <"$TMP/err")" 1
	grep -q -- "$want" "$TMP/err" && ok "$what: says '$want'" || bad "$what: $(cat "$TMP/err")"
	[ -s "$TMP/out" ] && bad "$what: printed a frame"
done <<EOF2
--replay $db --since yesterday|--since: 'yesterday' is not a time
--replay $db --until 10m-ago|--until:
--replay $db --since +10s --until +5s|--since must be before --until
--replay $db --since 2020-01-01T00:00:00Z --until 2020-01-02T00:00:00Z|no events in the range
--replay $db --since +1h|the recording spans
--since +5s -- true|they need --replay
--replay $db --since|--since
EOF2
finish
