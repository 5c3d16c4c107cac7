#!/usr/bin/env bash
# Every key in the key table (read from docs/keys.md, which the unit test
# keeps equal to the table) does what the help says, on a replay.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics

declare -A tested
press() { # tmux-key docs-name
	tested[$2]=1
	keys "$1"
}
press_text() { # literal docs-name
	tested[$2]=1
	"${TMUX_CMD[@]}" send-keys -t $T -l -- "$1"
	sleep "${KEY_PAUSE:-0.25}"
}
# the op the Enter key opens, then back to the main screen
opens() { # tmux-key docs-name regex what
	press "$1" "$2"
	keys Enter
	expect "^ $3 " "$4"
	keys Escape
	expect '^! GPU API' "back on the main screen"
}

start 120 40 "$IG" --speed 0 --replay "$FIXTURE"
wait_for '^Driver API' 10
wait_for 'cuCtxSync' 10

# help: h ? F1 open it; Esc, Backspace and the help key close it
for k in h '?' F1; do
	press "$k" "$k"
	expect 'help \(replay mode\)' "$k opens the help"
	expect 'Show this help' "help lists the key table"
	keys Escape
	expect_not 'help \(replay mode\)' "Esc closes the help"
done
keys h
press BSpace Backspace
expect_not 'help \(replay mode\)' "Backspace closes the help"
keys h
keys h
expect_not 'help \(replay mode\)' "h closes the help"

# pause
press p p
expect ' PAUSED ' "p pauses"
press p p
expect_not ' PAUSED ' "p resumes"
press Space Space
expect ' PAUSED ' "Space pauses"
keys Space

press r r
expect 'y/N Reset the statistics and the alerts' "r asks first"
keys n
expect 'cancelled' "any key but y cancels"
keys r
keys y
expect 'statistics and alerts reset' "y resets"
# the replay keeps the model at its position; data comes back after a seek
press z z
expect 'since start' "z: figures since the start"
expect 'zWindow' "the hint says z goes back to the window"
keys z
expect_not ' since start ' "z again: the window"
press m m
expect ' MARK [0-9]{2}:[0-9]{2}:[0-9]{2} ' "m marks this moment (test_tui_mark.sh compares)"
expect 'P99 MARK(→|->)NOW' "m: the op table compares mark to now"
keys m
expect_not 'P99 MARK(→|->)NOW' "m again clears the mark"
press_text c c
expect 'theme: light' "c switches to the next theme (t live; in a replay t steps)"
press w w
expect 'flight recorder' "w asks for a flight-recorder save"
press l l
expect 'message log' "l shows the log"
keys l
expect_not 'message log' "l again closes the log"
press C-l Ctrl-L
expect '^ REPLAY' "Ctrl-L redraws"

# replay keys
press_text '+' '+'
expect 'already replaying as fast as possible|speed: ' "+ speeds up"
press_text '-' '-'
expect 'speed: x' "- slows down"
press_text '=' '='
expect 'speed: x' "= speeds up"
press_text '_' '_'
expect 'speed: x' "_ slows down"
for i in $(seq 12); do "${TMUX_CMD[@]}" send-keys -t $T -l -- '-'; done # 512 / 2^12
expect 'speed: x0.25 \(the slowest\)' "- stops at x0.25, the floor of --speed"
expect_not 'speed: x0.125|x0.0625' "- never goes below x0.25"
keys p # stop the clock while we look around
press_text '[' '['
expect 'seek back 10 s' "[ seeks back"
press_text ']' ']'
expect 'seek forward 10 s' "] seeks forward"
press_text '}' '}'
expect "at the next alert's first detection|no next alert" "} seeks to the next alert"
press_text '{' '{'
expect "at the previous alert's first detection|no previous alert" "{ seeks to the previous alert"
# back to the whole recording, frozen
keys p
"${TMUX_CMD[@]}" send-keys -t $T -l -- '+'
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do "${TMUX_CMD[@]}" send-keys -t $T -l -- ']'; done
# keys are read in order: the checks below poll the screen
wait_for 'cuCtxSync' 10

# n opens the top alert from anywhere, then the next; N the previous
keys g
keys Enter
press n n
expect '^ \[(HIGH|MEDIUM|LOW|INFO)\] chain-[0-9]{4}' "n opens the top alert from an op screen"
keys n
expect 'alert 2 of [0-9]+|no next alert' "n on an alert screen: the next one"
press N N
expect 'alert 1 of [0-9]+' "N: the previous one"
keys Escape
keys Escape
expect '^! GPU API' "back on the main screen"

# moving in the GPU API pane, checked by what Enter opens
opens g g 'cudaMalloc' "g selects the first op"
opens Down Down 'cudaLaunchKernel' "Down moves down"
opens Down Down 'cudaMemcpyAsync' "Down again (j jumps in a replay: test_tui_walk.sh)"
opens k k 'cudaLaunchKernel' "k moves up"
opens Up Up 'cudaMalloc' "Up moves up"
opens g g 'cudaMalloc' "g selects the first op"
opens G G 'cuCtxSynchronize' "G selects the last op"
opens PPage PgUp 'cudaMalloc' "PgUp goes up a page"
opens NPage PgDn 'cuCtxSynchronize' "PgDn goes down a page"
opens C-b Ctrl-B 'cudaMalloc' "Ctrl-B goes up a page"
opens C-f Ctrl-F 'cuCtxSynchronize' "Ctrl-F goes down a page"
tested[Enter]=1
keys g
keys Enter
expect '^ cudaMalloc  runtime API' "Enter opens the op"
press_text o o
expect 'o: select a slow call first' "o asks for a slow call (test_tui_stacks.sh opens one)"
press BSpace Backspace
expect '^! GPU API' "Backspace goes back"
keys Enter
press Escape Esc
expect '^! GPU API' "Esc goes back"

# focus
press Tab Tab
keys g
keys Enter
expect 'container .* threads' "Tab focuses the processes pane (Enter opens a process)"
keys Escape
press BTab Shift-Tab
keys Enter
expect '^ cudaMalloc  runtime API' "Shift-Tab focuses the ops pane again"
keys Escape

# sorting
press_text '>' '>'
expect 'CALLS: calls since the start' "> sorts by the next column and says what it means"
press_text '.' '.'
expect 'CALLS/S: calls per second' ". sorts by the next column"
press_text '<' '<'
expect 'CALLS: calls since' "< sorts by the previous column"
press_text ',' ','
expect 'GPU API: the CUDA function' ", sorts by the previous column"
press I I
expect 'sort order inverted' "I inverts the order"
keys g
keys Enter
expect '^ cudaDeviceSynchronize ' "inverted API order: the last runtime op first (groups stay)"
keys Escape
keys I
press F6 F6
expect 'Sort by' "F6 opens the sort menu"
expect 'the CUDA function' "the menu says what the chosen column means"
keys Down
keys Enter
expect 'sorted by CALLS: calls since' "the menu sorts"
keys F6
keys Escape
expect_not 'Sort by' "Esc closes the menu"
keys F6
keys Up
keys Enter

# htop's sort keys and the explanation of the sorted column
press_text P P
expect 'sorted by P99: 99th percentile' "P sorts the op table by p99"
press_text M M
expect 'sorted by BYTES/S: ' "M sorts by memory (bytes)"
press_text e e
# (the explanation may be cut at a word: row 1 keeps room for the host and
# the clock when the ENDED badge is there too)
expect 'BYTES/S: bytes copied or allocated' "e explains the sorted column"
keys F6
keys g
keys Enter

# search: F3, type, the selection jumps; F3 again: the next match
press F3 F3
expect 'Search: ' "F3 opens the search prompt"
text cuMem
keys Enter
keys Enter
expect '^ cuMem[A-Za-z]+  driver API' "the search selected a matching op"
keys Escape
keys F3
keys F3
keys Enter
keys Enter
expect '^ cuMem[A-Za-z]+  driver API' "F3 again: the next match"
keys Escape

# processes: tree, signals and renice ask and are live only here
keys Tab
press F5 F5
expect 'processes as a tree' "F5: the processes as a tree"
keys F5
press F9 F9
expect 'F9 kill: live only' "F9 is live only"
press F7 F7
expect 'F7 renice: live only' "F7 is live only"
press F8 F8
expect 'F8 renice: live only' "F8 is live only"
keys BTab

# setup
press F2 F2
expect 'Setup: Enter changes' "F2 opens the setup"
expect 'GPU API: CALLS +shown' "setup lists the columns of the panes"
keys F2
expect '^! GPU API' "F2 again closes it"

# filter
press_text '/' '/'
expect 'Filter: ' "/ opens the filter prompt"
text Memcpy
keys Enter
expect 'filter "Memcpy"' "the filter is shown"
expect_not 'cuCtxSync' "the filter hides other rows"
keys Escape
expect 'filter cleared' "Esc clears the filter"
press F4 F4
expect 'Filter: ' "F4 opens the filter prompt"
text zzz
keys Escape
expect_not 'Filter: ' "Esc closes the prompt"
expect 'cuCtxSync' "and clears the filter"

# quit keys (F10 here, q in the other tests)
press F10 F10
wait_exit 5
[ "$(cat "$TMPD/status")" = 0 ] || fail "exit status $(cat "$TMPD/status")"
ok "F10 quits"
tested[q]=1 # q: test_tui_main.sh and test_tui_term.sh
# in a replay t, T, j, Home and End walk it (test_tui_walk.sh); their live
# meanings (theme, sort by time, down, first and last row) are the same
# actions as c, F6, Down, g and G, pressed above
tested[t]=1 tested[T]=1 tested[j]=1 tested[Home]=1 tested[End]=1
# s sorts the hosts of the fleet screen (--ssh): test_tui_fleet.sh
tested[s]=1

# every key of the table was exercised
missing="" nkeys=0
while read -r k; do
	nkeys=$((nkeys + 1))
	[ -n "${tested[$k]}" ] || missing="$missing $k"
done < <(grep -E '^\| `' docs/keys.md | sed -E 's/^\| ([^|]*) \|.*/\1/' | grep -oE '`[^`]+`' | tr -d '`')
[ "$nkeys" -ge 30 ] || fail "only $nkeys keys found in docs/keys.md: is the table there?"
[ -z "$missing" ] || fail "keys in docs/keys.md not exercised:$missing"
ok "every key in docs/keys.md was exercised"
