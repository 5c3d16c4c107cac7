#!/usr/bin/env bash
# The viewer on a recording whose process names, stack symbols and chains
# hold terminal control sequences (tests/integration/hostile.sh): the names
# show with placeholders, and nothing reaches the terminal: the pane title
# stays, no bell rings, the screen is not cleared behind the viewer's back.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
ok() { echo "ok: $*"; }
bad() { fail "$*"; }
. tests/integration/hostile.sh
DB=$TMPD/hostile.db
make_hostile_db tests/fixtures/tui/cpu-contention.db "$DB" || fail "cannot build the crafted recording"
# the pids of the shipped recording (they change when it is made again)
WLP=$(sqlite3 "$DB" "SELECT pid FROM events WHERE kind = 1 LIMIT 1")
HOG=$(sqlite3 tests/fixtures/tui/cpu-contention.db "SELECT other_pid FROM events WHERE other_comm = 'ig-hog' LIMIT 1")

start 120 40 "$IG" --speed 0 --replay "$DB"
"${TMUX_CMD[@]}" select-pane -t $T -T clean-title
wait_for 'REPLAY'
wait_for 'end of the recording'
expect '^ +'"$WLP"' +(\?\]0;pwned\?| 1234 call op=x|workload +x) ' "processes pane: the crafted name, control bytes shown as ? or a space"
expect 'h o g x\?\[2J\['"$HOG"'\]' "processes pane: the crafted preemptor"
title=$("${TMUX_CMD[@]}" display-message -p -t $T '#{pane_title}')
[ "$title" = clean-title ] || fail "the pane title changed to '$title'"
ok "pane title unchanged"
bell=$("${TMUX_CMD[@]}" display-message -p -t $T '#{window_bell_flag}')
[ "$bell" = 0 ] || fail "the bell rang"
ok "no bell"
keys Enter
wait_for 'op|OP|calls'
keys Escape
expect '^! GPU API' "drill-down and back"
expect 'F1Help' "screen intact (header and hints)"
keys q
wait_exit
[ "$(cat "$TMPD/status")" = 0 ] || fail "exit status $(cat "$TMPD/status")"
ok "q quits with status 0"
