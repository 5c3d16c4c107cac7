#!/usr/bin/env bash
# Colours and characters: NO_COLOR=1 and --no-color draw without colour
# escapes; --ascii and a non-UTF-8 locale draw only ASCII bytes; the default
# uses both (so the checks can fail). Checked on the main, help, op and alert
# screens with tmux capture-pane -e.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics

# tour: capture the main, op, alert and help screens into one file
tour() {
	local out=$1
	wait_for 'cuCtxSync' 10
	keys p
	screen_e >"$out"
	keys g
	keys Enter
	expect '^ cudaMalloc ' "op screen"
	screen_e >>"$out"
	keys Escape
	keys Tab
	keys Tab
	keys Enter
	expect 'chain-[0-9]{4}' "alert screen"
	screen_e >>"$out"
	keys Escape
	keys h
	expect 'help \(' "help screen"
	screen_e >>"$out"
	keys Escape
	keys q
	wait_exit 5
	stop
}

run() { # name env... -- args...
	local name=$1
	shift
	start 120 40 env "$@" "$IG" --speed 0 --replay "$FIXTURE"
	tour "$TMPD/$name.txt"
}

run default LANG=C.UTF-8 LC_ALL=C.UTF-8 NO_COLOR=
[ "$(colour_escapes <"$TMPD/default.txt")" -gt 0 ] || fail "the default theme shows no colour"
[ "$(non_ascii_bytes <"$TMPD/default.txt")" -gt 0 ] || fail "UTF-8 mode shows no UTF-8"
ok "default: colours and UTF-8 glyphs"

run nocolor LANG=C.UTF-8 LC_ALL=C.UTF-8 NO_COLOR=1
n=$(colour_escapes <"$TMPD/nocolor.txt")
[ "$n" = 0 ] || fail "NO_COLOR=1: $n colour escapes"
grep -q $'\e\\[' "$TMPD/nocolor.txt" || fail "NO_COLOR=1: no attributes at all (bold/reverse expected)"
ok "NO_COLOR=1: no colour escapes (attributes only)"

start 120 40 env LANG=C.UTF-8 LC_ALL=C.UTF-8 NO_COLOR= "$IG" --no-color --speed 0 --replay "$FIXTURE"
tour "$TMPD/flag.txt"
n=$(colour_escapes <"$TMPD/flag.txt")
[ "$n" = 0 ] || fail "--no-color: $n colour escapes"
ok "--no-color: no colour escapes"

start 120 40 env LANG=C.UTF-8 LC_ALL=C.UTF-8 NO_COLOR=1 "$IG" --ascii --speed 0 --replay "$FIXTURE"
tour "$TMPD/ascii.txt"
n=$(non_ascii_bytes <"$TMPD/ascii.txt")
[ "$n" = 0 ] || fail "--ascii: $n lines with non-ASCII bytes"
n=$(colour_escapes <"$TMPD/ascii.txt")
[ "$n" = 0 ] || fail "--ascii with NO_COLOR=1: $n colour escapes"
ok "--ascii: ASCII only"

run clocale LANG=C LC_ALL=C NO_COLOR=
n=$(non_ascii_bytes <"$TMPD/clocale.txt")
[ "$n" = 0 ] || fail "LC_ALL=C: $n lines with non-ASCII bytes"
ok "a non-UTF-8 locale: ASCII only"

# c (t in a replay steps it) does not bring colours back under NO_COLOR
start 120 40 env LANG=C.UTF-8 LC_ALL=C.UTF-8 NO_COLOR=1 "$IG" --speed 0 --replay "$FIXTURE"
wait_for 'cuCtxSync' 10
keys c
expect 'colours are off \(NO_COLOR\)' "t under NO_COLOR says why"
n=$(screen_e | colour_escapes)
[ "$n" = 0 ] || fail "t under NO_COLOR: $n colour escapes"
keys q
wait_exit 5
ok "t keeps monochrome under NO_COLOR"
stop

# every standard theme cycles with c and keeps the screen readable
start 120 40 env LANG=C.UTF-8 LC_ALL=C.UTF-8 NO_COLOR= "$IG" --theme high-contrast --speed 0 --replay "$FIXTURE"
wait_for 'cuCtxSync' 10
for th in monochrome default light high-contrast; do
	keys c
	expect "theme: $th" "t -> $th"
	expect '^! GPU API' "$th: the screen is drawn"
done
keys q
wait_exit 5
