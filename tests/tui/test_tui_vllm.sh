#!/usr/bin/env bash
# The vLLM story at 80x24 (issue 28): Ingero's vLLM recording
# (tests/fixtures/vllm) replayed up to 36 s, when the window (26-36 s)
# looks calm: cudaLaunchKernel's P99/P50 is 3.0x there, 256x since the
# start (9 launches of 1 to 71 ms in its first 224 ms). The row carries the
# lifetime-tail mark (↑) without z, and loses it with z (the column then
# shows the lifetime's 256x); the help's P99/P50 line says what the mark
# means; the burst of slow calls is an alert that says when (the first
# 224ms of its calls), how many and what to do about it on an inference
# server (warm it up; not DataLoader advice).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
VLLM=tests/fixtures/vllm/vllm-37343-logprobs-amplification.db
[ -r "$VLLM" ] || fail "fixture $VLLM missing"

start 80 24 "$IG" --speed 0 --until +36s --replay "$VLLM"
wait_for '/36s 100%'
expect '^I? *cudaLaunchKernel +[0-9.]+ .* 3\.0x↑ ' "cudaLaunchKernel: 3.0x in the window, marked ↑ (256x since the start)"
screen | grep -E '^ .? *cudaMemcpyAsync ' | grep -q '↑' &&
	fail "cudaMemcpyAsync has no lifetime tail far above its window's, but is marked"
ok "cudaMemcpyAsync (2.5x, 2.1x since the start) is not marked"
expect 'INFO .* burst of slow cudaLaunchKernel' "the burst alert is listed"

keys z
expect '^.? *cudaLaunchKernel .* 2[0-9][0-9]x ' "z: the lifetime's tail (256x)"
expect_not 'cudaLaunchKernel .*↑' "z: no mark (the column shows the lifetime itself)"
keys z
expect 'cudaLaunchKernel .* 3\.0x↑ ' "z again: the window and its mark"

# the alert: Tab to the alerts pane, down to the burst, Enter
keys Tab
keys Tab
for _ in 1 2 3 4 5 6; do
	screen | grep -qE '^ \[[A-Z]+\] chain-' && break
	keys Enter
	screen | grep -qE 'burst of slow cudaLaunchKernel' && screen | grep -qE '^ \[INFO\] chain-' && break
	keys Escape
	keys Down
done
expect '^ \[INFO\] chain-' "the burst's alert screen"
expect 'burst of slow cudaLaunchKernel' "it names the burst"
# the whole alert screen, page by page, its wrapped lines joined
: >"$TMPD/alert.txt"
for _ in 1 2 3 4 5 6; do
	screen >>"$TMPD/alert.txt"
	keys NPage
done
tr -s ' \n' '  ' <"$TMPD/alert.txt" >"$TMPD/alert1.txt"
has() { grep -qE -- "$1" "$TMPD/alert1.txt" && ok "$2" || { cat "$TMPD/alert.txt"; fail "$2: no /$1/"; }; }
has '9 calls up to 70\.8ms' "how many and how slow: 9 calls up to 70.8ms"
has 'in the first 224ms of its calls' "when: in the first 224ms of its calls"
has 'Warm the server up before it takes traffic' "advice for an inference server"
grep -qE 'num_workers|DataLoader' "$TMPD/alert1.txt" && fail "DataLoader advice for vLLM's engine"
ok "no DataLoader advice"
keys Escape

# the help says what the mark means
keys h
wait_for ' help \((replay|live) mode\)'
found=
for _ in 1 2 3 4 5 6 7 8; do
	screen | grep -q 'lifetime tail is' && { found=1; break; }
	keys NPage
done
[ -n "$found" ] || fail "no help line on the ↑ of P99/P50"
ok "the help explains the ↑ of P99/P50"
