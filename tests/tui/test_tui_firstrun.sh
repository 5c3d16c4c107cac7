#!/usr/bin/env bash
# First run (issue 14): argument errors come first, before privileges and
# the terminal (an unknown --theme, a recording that cannot be read); a
# non-root --demo says on the screen that it replays a recording (at
# 80x24, 120x40 and 200x60), and hidden-sync's that its summarised calls'
# times are estimated (in the log too); w saves the flight recorder into the user's
# state directory, never into the current one, and the header and the log
# say where (live: root). `check` listing a library once is
# tests/integration/test_check_libs.sh.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics

# --- arguments first: no terminal here, and the error is the argument's
"$IG" --theme nosuch --replay "$FIXTURE" </dev/null >"$TMPD/out" 2>"$TMPD/err"
rc=$?
[ "$rc" = 2 ] || fail "--theme nosuch: exit $rc, want 2"
grep -q "^ingero-top: unknown theme 'nosuch': use default, light, high-contrast, monochrome" \
	"$TMPD/err" || fail "--theme nosuch: $(cat "$TMPD/err")"
ok "--theme nosuch: a clear error, exit 2, before the terminal check"
"$IG" --replay /nonexistent/x.db </dev/null >"$TMPD/out" 2>"$TMPD/err"
rc=$?
[ "$rc" = 1 ] && grep -q 'cannot replay /nonexistent/x.db: No such file' "$TMPD/err" ||
	fail "a missing recording: exit $rc: $(cat "$TMPD/err")"
ok "a missing recording is named before the terminal check"
if [ "$(id -u)" = 0 ]; then
	# live without privileges: the argument error still comes first
	setpriv --reuid=65534 --regid=65534 --clear-groups "$IG" --theme nosuch --pid 1 \
		</dev/null >"$TMPD/out" 2>"$TMPD/err"
	grep -q "unknown theme 'nosuch'" "$TMPD/err" || fail "not root: $(cat "$TMPD/err")"
	ok "--theme nosuch comes before the privilege check"
fi

# --- a non-root --demo replays the scenario's recording and says so
as_user=()
DEMO_IG=$IG
if [ "$(id -u)" = 0 ]; then
	as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	# A checkout under a directory nobody may enter (mktemp -d is 0700):
	# the binary and the recording from copies anybody can read.
	if ! "${as_user[@]}" test -r "$PWD/tests/scenarios/cpu-contention.db" ||
		! "${as_user[@]}" test -x "$IG"; then
		m=$TMPD/demo
		chmod a+x "$TMPD" # enterable, not listable: the copies are inside
		mkdir -p "$m/build" "$m/tests/scenarios"
		cp "$IG" "$m/build/" && cp tests/scenarios/cpu-contention.db tests/scenarios/hidden-sync.db \
			"$m/tests/scenarios/"
		chmod -R a+rX "$m"
		DEMO_IG=$m/build/ingero-top
		echo "(the checkout is not readable by nobody: the demo runs from copies in $m)"
	fi
fi
for size in $SIZES; do
	w=$(size_w "$size") h=$(size_h "$size")
	start "$w" "$h" "${as_user[@]}" "$DEMO_IG" --demo cpu-contention
	expect 'not root: replaying a recording' "$size: non-root --demo says it replays"
	expect '^ REPLAY ' "$size: in replay mode"
	keys q
	wait_exit 10
	stop
done
# hidden-sync's recording was made with --record-rate (docs/recording.md):
# its replay says the summarised calls' times are estimated, on the screen
# and in the log, and the storm's 24 s have the storm's alert
start 80 24 "${as_user[@]}" "$DEMO_IG" --demo hidden-sync
expect "record-rate recording: summarised calls' counts exact" "80x24: hidden-sync says its calls were summarised"
expect '^HIGH .*sync storm in workload' "80x24: hidden-sync's storm alert"
keys l
expect "info  --record-rate recording: summarised calls' counts exact, times estimated" \
	"80x24: the notice is in the message log, whole"
keys q
wait_exit 10
stop

# --- w: the user's state directory, the path on the screen and in the log
[ "$(id -u)" = 0 ] || skip "the flight recorder is live only: needs root (the rest passed)"
WL=${WL:-$PWD/${BUILD:-build}/workload}
[ -x "$WL" ] || skip "$WL not built"
"$IG" check >"$TMPD/check.txt" 2>&1 || skip "ingero-top check fails here"
mkdir -p "$TMPD/home" "$TMPD/cwd"
before=$(ls -A "$TMPD/cwd" | wc -l)
start 120 40 env HOME="$TMPD/home" XDG_STATE_HOME= sh -c "cd $TMPD/cwd && exec $IG -- $WL --iters 100000000 --kernels 2"
wait_for 'cudaLaunchKernel +[0-9]' 30
keys w
dir="$TMPD/home/.local/state/ingero-top"
expect "(flight recorder: saving|saved .* to) ~/.local/state/ingero-top/ingero-top-flight-[0-9-]+\.db" \
	"w: the header says where (the user's state directory, ~ for \$HOME)"
for i in $(seq 100); do ls "$dir"/ingero-top-flight-*.db >/dev/null 2>&1 && break; sleep 0.1; done
ls "$dir"/ingero-top-flight-*.db >/dev/null 2>&1 || fail "no flight recording in $dir"
ok "w: the recording is in $dir"
[ "$(stat -c %a "$dir")" = 700 ] || fail "$dir is not mode 700"
ok "the state directory is private (700)"
[ "$(ls -A "$TMPD/cwd" | wc -l)" = "$before" ] || fail "w wrote into the current directory"
ok "nothing was written into the current directory"
keys l
expect "flight recorder: .*$dir/ingero-top-flight-" "the log keeps the path"
keys q
wait_exit 60
