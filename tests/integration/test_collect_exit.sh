#!/usr/bin/env bash
# needs: root
# Exit status: `-- CMD` exits with the command's status (its exit code, or
# 128 + N when signal N killed it, as shells report it), and a recording
# that fails (here: a full tmpfs) makes ingero-top exit 1 with the whole
# error on stderr, on one line.
. "$(dirname "$0")/lib.sh"
need_root

status_of() { # name, want, command...
	local name=$1 want=$2; shift 2
	"$IG" --batch -d 0.5 ${IGOPT:-} --no-system-libs -- "$@" >"$TMP/o" 2>"$TMP/e"
	expect_eq "$name" "$?" "$want"
}
status_of "true" 0 true
status_of "false" 1 false
status_of "exit 7" 7 sh -c 'exit 7'
status_of "killed by SIGKILL" 137 sh -c 'kill -9 $$'
status_of "killed by SIGTERM" 143 sh -c 'kill -TERM $$'
status_of "a workload that succeeds" 0 "$WL" --iters 20 --kernels 1
IGOPT=--json status_of "exit 3, --json" 3 sh -c 'exit 3'
IGOPT="--summary --events" status_of "exit 4, --summary --events" 4 sh -c 'exit 4'

# A recording on a full file system.
command -v mount >/dev/null || { echo "skip: needs mount"; exit 77; }
mkdir -p "$TMP/full"
mount -t tmpfs -o size=1m tmpfs "$TMP/full" || { echo "skip: cannot mount a tmpfs"; exit 77; }
cleanup_hooks+=("umount '$TMP/full' 2>/dev/null")
"$IG" --batch -d 1 --no-system-libs --record "$TMP/full/run.db" -- "$WL" --iters 20000 --kernels 4 \
	--kernel-us 20 >"$TMP/r.out" 2>"$TMP/r.err"
expect_eq "full disk: exit status" "$?" 1
lines=$(grep -c "recording" "$TMP/r.err")
expect_eq "full disk: lines on stderr about the recording" "$lines" 1
if grep -q "^ingero-top: recording to $TMP/full/run.db stopped: .*\(disk is full\|No space left on device\)" "$TMP/r.err"; then
	ok "full disk: the whole error on stderr: $(grep recording "$TMP/r.err")"
else
	bad "full disk: stderr: $(cat "$TMP/r.err")"
fi
# The command still ran to its end, and was reported as such.
grep -q "exited with status 0" "$TMP/r.err" && ok "full disk: the command ran to its end" \
	|| bad "full disk: command: $(cat "$TMP/r.err")"
finish
