#!/usr/bin/env bash
# htop habits at 80x24 (issue 28), on a replay of the cpu-contention
# recording, without colours (NO_COLOR): the focus shows as a marker; the
# first selection is the op of the top alert (the H row); M shows the
# column it sorts by; the hint bar of a details screen keeps Enter and Esc;
# w in a replay says why it does nothing; a section title too long for the
# row is cut at a word, not as "windo"; the help says where a key means
# something else than in htop.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
REC=tests/scenarios/cpu-contention.db

NO_COLOR=1 start 80 24 env NO_COLOR=1 "$IG" --replay "$REC" --speed 0
wait_for '^H cudaLaunchKernel' 30
wait_for 'end of the recording|100%' 30
# the focus: a marker at the end of the focused table's title row
screen | grep -E '^! GPU API' | grep -q '◀ *$' || fail "the focused op table's title has no marker"
screen | grep -E '^ +PID PROCESS' | grep -q '◀' && fail "the unfocused processes title has the marker"
ok "the focused table's title ends with a marker (NO_COLOR)"
# the first selection: the op the H marker is on
keys Enter
expect '^ cudaLaunchKernel  runtime API' "Enter first opens the H row's op (cudaLaunchKernel)"
# the details screen's hint bar keeps the ways in and out at 80 columns
screen | tail -1 | grep -q 'EscBack' || fail "the op screen's hint bar has no Esc at 80 columns"
screen | tail -1 | grep -q 'EnterDetails' || fail "the op screen's hint bar has no Enter at 80 columns"
ok "the details hint bar keeps EnterDetails and EscBack"
keys Escape
keys Tab
screen | grep -E '^ +PID PROCESS' | grep -q '◀' || fail "Tab: the processes title has no marker"
screen | grep -E '^! GPU API' | grep -q '◀' && fail "Tab: the op table keeps the marker"
ok "Tab moves the marker to the processes pane"
# M sorts by PGALLOC, and PGALLOC is on the screen at 80 columns
screen | grep -qE '^ +PID PROCESS.* PGALLOC' && fail "PGALLOC is shown before M (the test needs it hidden)"
keys M
expect 'sorted by PGALLOC' "M sorts by PGALLOC"
expect '^ +PID PROCESS.* PGALLOC' "the PGALLOC column shows at 80 columns once sorted by"
# the process screen: a section title cut at a word
keys Enter
expect '^── where the time goes' "the process screen"
screen | grep -E '^── where the time goes' | grep -qE '[a-z]─*$' &&
	fail "the section title is cut inside a word"
screen | grep -qE '^── where the time goes.*…' || fail "the cut section title has no ellipsis"
ok "a long section title is cut at a word, with an ellipsis"
keys Escape
# w in a replay
keys w
expect 'w: no flight recorder in a replay' "w in a replay says why it saves nothing"
# the help says where keys differ from htop
keys h
expect 'Coming from htop' "the help has the htop section"
expect 'htop: k kills\. Here k moves up' "k: the choice"
expect 'htop: Space tags\. Here Space pauses' "Space: the choice"
expect 'htop: / searches\. Here / \(or F4\) filters' "/: the choice"
keys Escape
keys q
wait_exit 30
