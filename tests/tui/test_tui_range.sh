#!/usr/bin/env bash
# The viewer on a part of a recording (--replay FILE --since T --until T):
# it starts at --since (the position bar says 0 s of the range's span), a
# seek back stops at --since, the replay ends at --until ("end of the
# recording"), and the header counts the events of the range, as SQLite
# counts them (completion times, both bounds included).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

db=$TUI_ROOT/tests/scenarios/cpu-contention.db
S=1000000000
start_ns=$("$IG" --json --summary --replay "$db" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["replay_start_ns"])')
lo=$((start_ns + 5 * S)) hi=$((start_ns + 12 * S))
want=$(sqlite3 "$db" "SELECT (SELECT COUNT(*) FROM events WHERE end_ns BETWEEN $lo AND $hi)
	+ (SELECT COUNT(*) FROM system_snapshots WHERE timestamp BETWEEN $lo AND $hi)
	+ (SELECT COUNT(*) FROM process_names WHERE is_event = 1 AND seen_at BETWEEN $lo AND $hi)")

start 120 40 "$IG" --replay "$db" --since +5s --until +12s --speed 2
wait_for ' REPLAY ' 30
expect ' at [0-9]+s/6s ' "the position is within the range's span (6 s)"
keys p
expect ' PAUSED ' "paused"
keys '['
expect ' at 0s/6s 0% ' "a seek back stops at --since"
keys p
wait_for 'end of the recording' 60
expect ' at 6s/6s 100% ' "the replay ends at --until"
expect " events $want " "the header counts the $want events of the range"
keys q
wait_exit 30
