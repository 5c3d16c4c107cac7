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
expect_not() {
	sleep 0.3
	screen | grep -qE -- "$1" && fail "${2:-$1}: /$1/ still on the screen"
	ok "${2:-not $1}"
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
