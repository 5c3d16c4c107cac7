#!/usr/bin/env bash
# Every file ingero-top writes is 0600 whatever the umask (022 here, which
# left exports 0644: process names, command lines and stacks readable by
# every user), and is created safely. The kinds: a Perfetto export (over
# nothing, or over an older export of ours); as root, a --record recording
# and its -wal while it is written, and a flight-recorder save with the
# directory made for it (0700). An export never follows or replaces a link,
# a FIFO, a directory or another user's file at its path, never writes in a
# directory others may write without the sticky bit, and leaves no
# temporary file behind.
. "$(dirname "$0")/lib.sh"
umask 022
S=$ROOT/tests/scenarios
mode() { stat -c %a "$1" 2>/dev/null || echo none; }

# --- exports ---------------------------------------------------------------------------------
"$IG" export --perfetto "$TMP/e.json" "$S/memcpy.db" 2>"$TMP/e.err"
expect_eq "export: exit status" "$?" 0
expect_eq "export: mode of the trace" "$(mode "$TMP/e.json")" 600
echo old >"$TMP/old.json" && chmod 644 "$TMP/old.json"
"$IG" export --perfetto "$TMP/old.json" "$S/memcpy.db" 2>/dev/null
expect_eq "export over an older 0644 export of ours: mode" "$(mode "$TMP/old.json")" 600
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/old.json" &&
	ok "export over an older file: the new trace is in place" || bad "export over an older file: not a trace"

refused() { # what, path, regex of the reason
	"$IG" export --perfetto "$2" "$S/memcpy.db" >/dev/null 2>"$TMP/r.err"
	local rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <"$TMP/r.err")" = 1 ] && grep -qE "^ingero-top: export: cannot write .*$3" "$TMP/r.err"; then
		ok "export to $1: refused: $(sed 's/.*: //' "$TMP/r.err")"
	else
		bad "export to $1: exit $rc: $(cat "$TMP/r.err")"
	fi
}
printf 'must not change\n' >"$TMP/target"
ln -s "$TMP/target" "$TMP/link.json"
refused "a symbolic link" "$TMP/link.json" "is a symbolic link"
[ -L "$TMP/link.json" ] && [ "$(cat "$TMP/target")" = "must not change" ] &&
	ok "the link and its target are unchanged" || bad "the link or its target changed"
ln -s "$TMP/nothing-here" "$TMP/dangling.json"
refused "a dangling link" "$TMP/dangling.json" "is a symbolic link"
[ ! -e "$TMP/nothing-here" ] && ok "nothing created at the dangling link's target" || bad "created through a dangling link"
mkfifo "$TMP/fifo.json"
refused "a FIFO" "$TMP/fifo.json" "not a regular file"
[ -p "$TMP/fifo.json" ] && ok "the FIFO is still a FIFO" || bad "the FIFO was replaced"
mkdir "$TMP/dir.json"
refused "a directory" "$TMP/dir.json" "is a directory"
ln "$TMP/target" "$TMP/hard.json"
refused "a file with another hard link" "$TMP/hard.json" "other hard links"
mkdir "$TMP/open" && chmod 777 "$TMP/open"
refused "a directory everyone may write" "$TMP/open/e.json" "writable by everyone"
chmod 1777 "$TMP/open"
"$IG" export --perfetto "$TMP/open/e.json" "$S/memcpy.db" 2>/dev/null
expect_eq "export in a sticky directory everyone may write: mode" "$(mode "$TMP/open/e.json")" 600
if [ "$(id -u)" = 0 ]; then
	echo theirs >"$TMP/theirs.json" && chown 65534 "$TMP/theirs.json"
	refused "another user's file (as root)" "$TMP/theirs.json" "owned by another user"
	expect_eq "another user's file: unchanged" "$(head -c 20 "$TMP/theirs.json")" theirs
fi
expect_eq "no temporary file left (*.tmpPID)" "$(find "$TMP" -name '*.tmp[0-9]*' | wc -l)" 0

# --- a recording, its WAL and a flight save (root: a live run) --------------------------------
if [ "$(id -u)" != 0 ] || [ ! -x "$WL" ]; then
	echo "skip part: a recording and a flight save need root and $WL"
	finish
fi
mkdir -p "$TMP/home" && chmod 755 "$TMP/home"
"$WL" --wait-signal --iters 100 --kernels 2 --kernel-us 200 --sync-every 1 >"$TMP/wl.ready" 2>&1 &
wl=$!
cleanup_hooks+=("kill $wl 2>/dev/null")
wait_until 30 grep -q ready "$TMP/wl.ready" || bad "the workload never said ready"
env -u XDG_STATE_HOME HOME="$TMP/home" "$IG" -v --batch --summary --no-system-libs \
	--record "$TMP/run.db" --pid "$wl" >/dev/null 2>"$TMP/live.err" &
ig=$!
cleanup_hooks+=("kill $ig 2>/dev/null")
wait_until 30 lines_at_least "$TMP/live.err" "attached [0-9]+ ops" 1 || bad "not attached: $(tail -n 3 "$TMP/live.err")"
kill -USR1 $wl
wait $wl
wait_until 30 test -e "$TMP/run.db-wal" && expect_eq "recording's -wal while recording: mode" "$(mode "$TMP/run.db-wal")" 600 ||
	echo "note: no -wal seen beside the recording"
expect_eq "recording while recording: mode" "$(mode "$TMP/run.db")" 600
kill -USR1 $ig
saved() { grep -q "saved .* events" "$TMP/live.err"; }
wait_until 30 saved || bad "no flight save: $(tail -n 3 "$TMP/live.err")"
fdir=$TMP/home/.local/state/ingero-top
fl=$(ls "$fdir"/ingero-top-flight-*.db 2>/dev/null | head -1)
[ -n "$fl" ] && expect_eq "flight save ($(basename "$fl")): mode" "$(mode "$fl")" 600 || bad "no flight file in $fdir"
expect_eq "the flight directory made for it: mode" "$(mode "$fdir")" 700
kill -INT $ig
wait $ig
expect_eq "recording after the run: mode" "$(mode "$TMP/run.db")" 600
for f in "$TMP"/run.db-* "$fdir"/*; do
	[ -e "$f" ] || continue
	case $f in *.db) ;; *) expect_eq "what is left beside them: $(basename "$f")" "$(mode "$f")" 600 ;; esac
done
finish
