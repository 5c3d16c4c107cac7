#!/usr/bin/env bash
# Evidence does not evaporate (issue 14), at 80x24, 120x40 and 200x60, on a
# replay of the shipped Ingero recording (bursts of CUDA calls, then quiet):
# when the calls stop the screens stay at the last activity, marked IDLE (or
# ENDED) in the header; p freezes every screen at one moment (the op screen
# says what the main screen says, and neither moves); z switches every
# figure to since the start and back. tests/tui/test_tui_end_live.sh does
# the same on a live run that ends.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics

body() { screen | sed -n "4,$(($(size_h "$size") - 1))p"; } # no header, no hints

for size in $SIZES; do
	w=$(size_w "$size") h=$(size_h "$size")
	echo "--- $size"
	start "$w" "$h" "$IG" --speed 4 --replay "$FIXTURE"
	# the first burst, then no call for 2 s of event time: the view stays
	wait_for ' (IDLE|ENDED) [0-9]+(s|m)' 40
	keys p
	expect ' PAUSED ' "$size: p pauses while the view stays at the last activity"
	expect '^I? +cudaLaunchKernel +.*[0-9.]+(us|ms) ' \
		"$size: the op rows keep the figures of the last activity"
	expect 'cudaLaunchKernel' "$size: the op is there"

	# one moment for every screen: the op screen says what its row says
	keys /
	keys C-u
	text cudaLaunchKernel
	keys Enter
	p99=$(cell '^! GPU API' 'cudaLaunchKernel' P99)
	rate=$(cell '^! GPU API' 'cudaLaunchKernel' CALLS/S)
	[ -n "$p99" ] && [ "$p99" != - ] || fail "$size: no P99 on the cudaLaunchKernel row"
	main1=$(body)
	keys Enter
	expect '^ cudaLaunchKernel  runtime API' "$size: op screen"
	expect "window: [0-9]+ calls in [0-9.]+s( of [0-9]+s)?, $rate/s .* p99 $p99 " \
		"$size: paused, the op screen has the row's rate ($rate/s) and p99 ($p99)"
	op1=$(body)
	sleep 2
	[ "$(body)" = "$op1" ] || fail "$size: the paused op screen changed"
	ok "$size: the paused op screen does not move"
	keys Escape
	# (polled: a slow redraw may still show the op screen for a moment)
	for _ in $(seq $((TUI_WAIT * 10))); do [ "$(body)" = "$main1" ] && break; sleep 0.1; done
	[ "$(body)" = "$main1" ] || fail "$size: the paused main screen changed under the op screen"
	ok "$size: back on the main screen: the same moment"

	# z: since the start, every screen, and back
	keys z
	expect ' since start ' "$size: z: since the start, said in the header"
	keys Enter
	expect 'since the start: 16 calls' "$size: the op screen since the start (16 calls in the recording)"
	keys Escape
	keys z
	expect_not ' since start ' "$size: z again: the window"
	keys Escape # the filter
	keys p
	expect_not ' PAUSED ' "$size: p resumes"
	keys q
	wait_exit 10
	stop
done
