#!/usr/bin/env bash
# Captures the screens shown in README.md and docs/tui.md again, from the
# shipped recording of the demo scenario (reproducible; --live runs the
# demo live instead, as root), and writes them between the
# "<!-- screen:NAME -->" and "<!-- /screen -->" markers of both files:
#
#   tests/tui/readme_screens.sh [--live] [SCENARIO]     (default cpu-contention)
#
# Screens: "main" (the last screen of the demo, 120x40, the empty rows of
# the processes pane left out), "alert" (n: the top alert), "process"
# (the process screen of the traced workload). Not a test: run it after the
# recordings or the screens change, and commit the result.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
live=0
[ "${1:-}" = --live ] && { live=1; shift; }
scn=${1:-cpu-contention}

if [ $live = 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "--live needs root"; exit 1; }
	start 120 40 "$IG" --demo "$scn"
	wait_for 'the command exited|finished' 120
else
	[ -r "tests/scenarios/$scn.db" ] || { echo "no tests/scenarios/$scn.db"; exit 1; }
	start 120 40 "$IG" --replay "tests/scenarios/$scn.db"
	wait_for 'at [0-9hms]+/[0-9hms]+ 100%' 120
fi
sleep 6 # the notices of the end have gone: the screen as it stays

# trailing blanks off; runs of empty lines (the processes pane) to one
tidy() { sed -e 's/[[:space:]]*$//' | cat -s | sed -e 's/^/    /'; }
screen | tidy >"$TMPD/main.txt"
keys n
wait_for '^ \[(HIGH|MEDIUM|LOW|INFO)\] chain-' 10
screen | tidy >"$TMPD/alert.txt"
keys Escape
keys Tab
keys g
keys Enter
wait_for 'where the time goes' 10
screen | tidy >"$TMPD/process.txt"
keys q
wait_exit 30

# replace the block after each marker
put() { # file name
	python3 - "$1" "$2" "$TMPD/$2.txt" <<'PY'
import sys
path, name, src = sys.argv[1:4]
text = open(path).read()
start = "<!-- screen:%s -->\n" % name
if start not in text:
    sys.exit(0)
head, rest = text.split(start, 1)
_, tail = rest.split("<!-- /screen -->", 1)
block = open(src).read().rstrip("\n") + "\n"
open(path, "w").write(head + start + "\n" + block + "\n" + "<!-- /screen -->" + tail)
print("updated %s: %s" % (path, name))
PY
}
for f in README.md docs/tui.md; do
	for s in main alert process; do put "$f" "$s"; done
done
