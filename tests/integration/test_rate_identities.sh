#!/usr/bin/env bash
# One denominator for every rate (issue 28): every shipped recording
# (tests/scenarios, tests/fixtures/*) is replayed with --json and every
# frame is checked by tests/tools/rate_identities.py: per op rate x window
# span = calls in the window, bytes/s x span = bytes and bytes per call x
# rate = bytes/s, the ops' rates add up to the processes', and no
# culprit's time in the window (preempted by, woken by) is longer than the
# window span (per thread). The span is the frame's window_span_ns: the
# event time the window covers, min(window, time since the first event).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 is not installed"; exit 77; }
[ -x "$IG" ] || { echo "skip: $IG not built"; exit 77; }

DBS=("$ROOT"/tests/scenarios/*.db "$ROOT"/tests/fixtures/*/*.db)
[ ${#DBS[@]} -ge 15 ] || bad "only ${#DBS[@]} shipped recordings found"
for db in "${DBS[@]}"; do
	rel=${db#"$ROOT"/}
	if ! "$IG" --replay "$db" --json >"$TMP/out.json" 2>"$TMP/err.txt"; then
		bad "$rel: --replay --json exits $?: $(tail -n 1 "$TMP/err.txt")"
		continue
	fi
	if python3 "$ROOT/tests/tools/rate_identities.py" "$rel" <"$TMP/out.json"; then
		:
	else
		FAILS=$((FAILS + 1))
	fi
	# the window a short window makes: -w 3 replays the same identities
	"$IG" --replay "$db" --json -w 3 >"$TMP/w3.json" 2>/dev/null &&
		python3 "$ROOT/tests/tools/rate_identities.py" "$rel -w 3" <"$TMP/w3.json" >"$TMP/w3.txt" ||
		{ cat "$TMP/w3.txt"; FAILS=$((FAILS + 1)); }
done
finish
