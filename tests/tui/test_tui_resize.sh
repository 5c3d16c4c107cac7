#!/usr/bin/env bash
# Resizing at any time: 60x20, 80x24, 200x60, too small, and back, on the
# main screen and on a drill-down screen. Nothing is left over from the
# previous size: the frozen view reads the same before and after.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics

# no_garbage W H: one header, one hint bar, lines no wider than the screen
no_garbage() {
	local w=$1 h=$2 s
	s=$(screen)
	[ "$(printf '%s\n' "$s" | grep -c 'REPLAY')" = 1 ] || fail "${w}x$h: header not exactly once"
	[ "$(printf '%s\n' "$s" | grep -c 'F1Help')" = 1 ] || fail "${w}x$h: hint bar not exactly once"
	[ "$(printf '%s\n' "$s" | wc -l)" -le "$h" ] || fail "${w}x$h: more lines than the screen"
	printf '%s\n' "$s" | python3 -c '
import sys
w = int(sys.argv[1])
sys.exit(any(len(l.rstrip("\n")) > w for l in sys.stdin.buffer.read().decode("utf-8", "replace").splitlines()))' "$w" ||
		fail "${w}x$h: a line wider than the screen"
	line 1 | grep -q REPLAY || fail "${w}x$h: the header is not on line 1"
	line "$h" | grep -q F1Help || fail "${w}x$h: the hint bar is not on the last line"
	ok "${w}x$h: header on line 1, hints on line $h, nothing outside"
}
body() { screen | sed -n '4,38p'; }

start 120 40 "$IG" --speed 0 --replay "$FIXTURE"
wait_for 'cuCtxSync' 10
keys p
wait_for 'paused: replay stopped'
wait_gone 'paused: replay stopped' # the notice expires: the frozen view alone
before=$(body)

resize 60 20
no_garbage 60 20
expect '^! GPU API' "60x20: ops pane"
expect '^SEV ' "60x20: alerts pane"
expect_not 'PID PROCESS' "60x20: processes pane dropped (below 80x24)"

resize 80 24
no_garbage 80 24
expect '^! GPU API' "80x24: ops pane"
expect 'PID PROCESS' "80x24: processes pane"
expect '^SEV ' "80x24: alerts pane"
# a replay below 80x32: the timeline takes the meters' row, the host's
# numbers move to the status row
expect 'CPU\[|  CPU [0-9]+%  MEM [0-9]+%' "80x24: meters (or the host's numbers)"

resize 200 60
no_garbage 200 60
expect 'P99 TREND' "200x60: the sparkline column"
expect 'PID PROCESS +CONTAINER' "200x60: processes with containers"

resize 30 8
expect 'terminal too small' "30x8: too small"
expect '\(need 40x10\)' "30x8: says the size it needs"

resize 120 40
no_garbage 120 40
after=$(body)
[ "$before" = "$after" ] || {
	diff <(echo "$before") <(echo "$after") | head -20
	fail "the screen differs after the round trip"
}
ok "120x40 again: the same screen as before"

# a drill-down screen through the same sizes
keys g
keys Enter
expect '^ cudaMalloc  runtime API' "op screen"
for sz in "60 20" "80 24" "200 60" "120 40"; do
	set -- $sz
	resize "$1" "$2"
	no_garbage "$1" "$2"
	expect '^ cudaMalloc ' "${1}x$2: op screen title"
	expect 'SLOWEST AT|slowest calls' "${1}x$2: slowest calls section"
done
keys Escape
keys q
wait_exit 5
ok "quit"
