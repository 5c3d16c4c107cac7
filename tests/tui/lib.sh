# Helpers for the TUI tests: drive the real binary in a private tmux server
# (send keys, read the screen). Sourced by tests/tui/test_*.sh; not a test.
# Exit codes of the tests: 0 pass, 77 skip (with a reason), anything else fail.

IG=${IG:-$PWD/${BUILD:-build}/ingero-top}
# The shipped Ingero recording (tests/fixtures/ingero; IG_TRACES names
# another directory, FIXTURE another file).
TUI_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FIXTURE=${FIXTURE:-${IG_TRACES:-$TUI_ROOT/tests/fixtures/ingero}/pytorch-dataloader-starvation.db}
SOCK=ingero-tui-$$
T=tui
TMUX_CMD=(tmux -L "$SOCK" -f /dev/null)
TMPD=$(mktemp -d /tmp/ingero-tui.XXXXXX)

skip() { echo "skip: $*"; exit 77; }
fail() {
	echo "FAIL: $*"
	echo "--- screen:"
	screen 2>/dev/null | sed 's/^/| /'
	exit 1
}
ok() { echo "ok: $*"; }

need_basics() {
	command -v tmux >/dev/null || skip "tmux is not installed"
	[ -x "$IG" ] || skip "$IG not built"
	# shipped in the repository: missing means a broken checkout, not a skip
	[ -r "$FIXTURE" ] || { echo "FAIL: fixture $FIXTURE missing"; exit 1; }
}

# A live test: tmux, the binary, the workload (WL), root, and a machine
# where `ingero-top check` passes; else the test is skipped with the reason.
need_live() {
	command -v tmux >/dev/null || skip "tmux is not installed"
	[ -x "$IG" ] || skip "$IG not built"
	WL=${WL:-$PWD/${BUILD:-build}/workload}
	[ -x "$WL" ] || skip "$WL not built (make test-build)"
	[ "$(id -u)" = 0 ] || skip "needs root"
	"$IG" check >"$TMPD/check.txt" 2>&1 || skip "ingero-top check fails here: $(tail -n 1 "$TMPD/check.txt")"
}

cleanup() {
	"${TMUX_CMD[@]}" kill-server 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT

# start W H COMMAND...: runs COMMAND in a fresh tmux server of W x H; the
# pane stays after the command exits (its status is in $TMPD/status).
start() {
	local w=$1 h=$2
	shift 2
	printf '%q ' "$@" >"$TMPD/cmd"
	"${TMUX_CMD[@]}" new-session -d -s $T -x "$w" -y "$h" \
		"bash -c '$(cat "$TMPD/cmd"); echo \$? > $TMPD/status; sleep 600'" ||
		fail "cannot start tmux"
	"${TMUX_CMD[@]}" set-option -g window-size manual >/dev/null 2>&1
}

# stop: ends the tmux server (and the program) so that start can run again.
stop() {
	"${TMUX_CMD[@]}" kill-server 2>/dev/null
	rm -f "$TMPD/status"
	sleep 0.2
}

# shell W H: a plain interactive shell in the pane (for stty checks).
shell() {
	"${TMUX_CMD[@]}" new-session -d -s $T -x "$1" -y "$2" "bash --norc --noprofile" ||
		fail "cannot start tmux"
	"${TMUX_CMD[@]}" set-option -g window-size manual >/dev/null 2>&1
	sleep 0.3
}

keys() { "${TMUX_CMD[@]}" send-keys -t $T "$@"; sleep "${KEY_PAUSE:-0.25}"; }
# literal text (no key-name lookup)
text() { "${TMUX_CMD[@]}" send-keys -t $T -l "$1"; sleep "${KEY_PAUSE:-0.25}"; }
screen() { "${TMUX_CMD[@]}" capture-pane -p -t $T; }
screen_e() { "${TMUX_CMD[@]}" capture-pane -p -e -t $T; }
resize() { "${TMUX_CMD[@]}" resize-window -t $T -x "$1" -y "$2"; sleep 0.5; }

# Deadlines are generous (a loaded machine is slow): at least TUI_WAIT
# seconds whatever a caller asks; they cost time only when a test fails.
TUI_WAIT=${TUI_WAIT:-30}
# wait_for REGEX [SECONDS]: until the screen matches (grep -E).
wait_for() {
	local re=$1 secs=${2:-$TUI_WAIT} i
	[ "$secs" -lt "$TUI_WAIT" ] && secs=$TUI_WAIT
	for ((i = 0; i < secs * 10; i++)); do
		screen | grep -qE -- "$re" && return 0
		sleep 0.1
	done
	fail "timed out waiting for /$re/"
}
# wait_gone REGEX [SECONDS]: until the screen no longer matches.
wait_gone() {
	local re=$1 secs=${2:-$TUI_WAIT} i
	[ "$secs" -lt "$TUI_WAIT" ] && secs=$TUI_WAIT
	for ((i = 0; i < secs * 10; i++)); do
		screen | grep -qE -- "$re" || return 0
		sleep 0.1
	done
	fail "timed out waiting for /$re/ to go"
}
# expect REGEX WHAT: the screen matches (polled up to TUI_WAIT seconds).
expect() {
	local re=$1 what=${2:-$1} i
	for ((i = 0; i < TUI_WAIT * 10; i++)); do
		screen | grep -qE -- "$re" && { ok "$what"; return 0; }
		sleep 0.1
	done
	fail "$what: no /$re/ on the screen"
}
# expect_not REGEX WHAT: the screen does not match: after 0.3 s (time for
# something wrong to show), polled until it is gone (up to TUI_WAIT seconds):
# a screen that is slow to redraw after a key is not a failure, one that
# keeps the text is.
expect_not() {
	local i
	sleep 0.3
	for ((i = 0; i < TUI_WAIT * 10; i++)); do
		screen | grep -qE -- "$1" || { ok "${2:-not $1}"; return 0; }
		sleep 0.1
	done
	fail "${2:-$1}: /$1/ still on the screen"
}
line() { screen | sed -n "${1}p"; }
# exited: the command ended (its status in $TMPD/status)
wait_exit() {
	local i secs=${1:-$TUI_WAIT}
	[ "$secs" -lt "$TUI_WAIT" ] && secs=$TUI_WAIT
	for ((i = 0; i < secs * 10; i++)); do
		[ -s "$TMPD/status" ] && return 0
		sleep 0.1
	done
	fail "the program did not exit"
}

# Colour SGR parameters (30-38, 40-48, 90-97, 100-107) in a capture -e.
colour_escapes() {
	python3 -c '
import re, sys
n = 0
for m in re.finditer(r"\x1b\[([0-9;:]*)m", sys.stdin.read()):
    ps = m.group(1).replace(":", ";").split(";")
    for p in ps:
        if re.fullmatch(r"3[0-8]|4[0-8]|9[0-7]|10[0-7]", p):
            n += 1
print(n)'
}
non_ascii_bytes() { LC_ALL=C grep -c -P '[^\x00-\x7f]' || true; }

# The sizes every issue-14 check runs at (SIZES="120x40" for one).
SIZES=${SIZES:-80x24 120x40 200x60}

# row_of REGEX: the 0-based screen row of the first line that matches, or -1.
row_of() { screen | grep -nE -- "$1" | head -1 | cut -d: -f1 | awk '{ print ($1 ? $1 - 1 : -1) }'; }
# col_of REGEX: the 0-based column where the first match begins, or -1.
col_of() {
	screen | python3 -c '
import re, sys
for l in sys.stdin:
    m = re.search(sys.argv[1], l.rstrip("\n"))
    if m:
        print(len(l[:m.start()])); sys.exit()
print(-1)' "$1"
}
# A mouse click (X10 encoding, what ncurses reads under tmux) at row y,
# column x, 0-based: press and release; dclick twice within the interval.
# The X10 mouse sequence as hex bytes (send-keys -H): as text, a byte that
# is ';' (row 26: 33 + 26) at the end of the argument is read by tmux as a
# command separator and the sequence arrives cut short.
mouse_ev() { # button y x
	local b=$1 y=$2 x=$3
	"${TMUX_CMD[@]}" send-keys -t $T -H 1b 5b 4d "$(printf '%02x' $((32 + b)))" \
		"$(printf '%02x' $((33 + x)))" "$(printf '%02x' $((33 + y)))"
}
click() { mouse_ev 0 "$1" "$2"; mouse_ev 3 "$1" "$2"; sleep "${KEY_PAUSE:-0.25}"; sleep 0.25; }
dclick() { mouse_ev 0 "$1" "$2"; mouse_ev 3 "$1" "$2"; mouse_ev 0 "$1" "$2"; mouse_ev 3 "$1" "$2"; sleep 0.6; }
wheel_down() { mouse_ev 65 "$1" "$2"; sleep "${KEY_PAUSE:-0.25}"; }
# names_whole: every "name[pid" on the screen is closed ("]"): no name[pid]
# cut in the middle.
names_whole() { ! screen | grep -qE '[A-Za-z0-9_.-]\[[0-9]+($|[^]0-9])'; }
# size_w 120x40 -> 120, size_h 120x40 -> 40
size_w() { echo "${1%x*}"; }
size_h() { echo "${1#*x}"; }
# cell TITLE_REGEX ROW_REGEX COLUMN: the value of a right-aligned COLUMN in
# the first row matching ROW_REGEX under the title row matching TITLE_REGEX
# (the token that ends where the column title ends); "" when not shown.
cell() {
	screen | python3 -c '
import re, sys
title_re, row_re, col = sys.argv[1:4]
lines = [l.rstrip("\n") for l in sys.stdin]
for i, l in enumerate(lines):
    if not re.search(title_re, l):
        continue
    m = re.search(r"(?<![A-Z0-9/%])" + re.escape(col) + r"(?![A-Z0-9/%])", l)
    if not m:
        break
    end = m.end()
    for r in lines[i + 1:]:
        if re.search(row_re, r):
            tok = r[:end].split(" ")[-1] if len(r) >= end else ""
            print(tok)
            sys.exit()
    break' "$1" "$2" "$3"
}
# expect_scroll REGEX WHAT: the screen matches, scrolling down a page at a
# time (up to 10 pages) to find it; back to the top after.
expect_scroll() {
	local i
	for ((i = 0; i < 10; i++)); do
		screen | grep -qE -- "$1" && { ok "$2"; keys g; return 0; }
		keys NPage
	done
	fail "$2: no /$1/ on any page"
}
