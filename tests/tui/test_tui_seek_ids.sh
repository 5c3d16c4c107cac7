#!/usr/bin/env bash
# Seeks change neither the alerts' ids nor the event count: replaying
# tests/scenarios/cpu-contention.db to its end, then seeking back and forth
# (] and [, 10 s each), the alerts keep the ids `explain` gives them for the
# same file, and the header counts the file's events, not those ingested
# again by each seek back.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

db=$TUI_ROOT/tests/scenarios/cpu-contention.db
ids=$("$IG" explain --json --replay "$db" | python3 -c 'import json,sys; print(" ".join(sorted(c["id"] for c in json.load(sys.stdin)["chains"])))')
[ -n "$ids" ] || fail "explain gives no chain for $db"
total=$("$IG" --json --summary --replay "$db" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["events_total"])')

# the ids the alert screens show, one per alert (Tab to the alerts, Home,
# then for each: Enter, the title line, Esc, Down)
alert_ids() {
	local n i seen=""
	n=$(screen | grep -cE '^(HIGH|MED|LOW|INFO) ')
	keys Tab
	keys Tab
	keys g
	for ((i = 0; i < n; i++)); do
		keys Enter
		wait_for '^ \[(HIGH|MEDIUM|LOW|INFO)\] chain-[0-9]+' 30
		seen="$seen $(screen | grep -oE '^ \[[A-Z]+\] chain-[0-9]+' | grep -oE 'chain-[0-9]+')"
		keys Escape
		keys Down
	done
	keys Tab
	echo "$seen" | tr ' ' '\n' | grep . | sort | tr '\n' ' ' | sed 's/ $//'
}

start 120 40 "$IG" --replay "$db" --speed max
wait_for 'end of the recording' 60
expect " events $total " "the header counts the file's $total events"
got=$(alert_ids)
[ "$got" = "$ids" ] || fail "at the end: alerts $got, explain's $ids"
ok "at the end: the alerts are explain's ($ids)"
for k in '[' '[' ']' '[' ']' ']' ; do
	keys "$k"
done
wait_for ' at 22s/22s 100% ' 30
expect " events $total " "after seeks back and forth: still the file's $total events"
got=$(alert_ids)
[ "$got" = "$ids" ] || fail "after seeks: alerts $got, explain's $ids"
ok "after seeks: the same ids ($ids)"
keys q
wait_exit 30
