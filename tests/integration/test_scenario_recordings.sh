#!/usr/bin/env bash
# The demo without root: `ingero-top --demo NAME` replays the recording of the
# scenario shipped in tests/scenarios/ (made by `make scenarios`). Every
# scenario has one, under 12 MiB, with at least 20 s of activity (long
# enough to read: issue 14), and its replayed top chain has the class the
# scenario is about (tests/scenarios/scenarios.txt). Run as root, the replays
# run as nobody.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
as=()
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || { echo "skip: root without setpriv cannot test non-root"; exit 77; }
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	# every scenario ingero-top knows is in the list
	known=$("$IG" --demo nosuch --batch --summary 2>&1 | sed -n 's/.*known: //p')
	listed=$(grep -v '^#' "$ROOT/tests/scenarios/scenarios.txt" | awk 'NF { print $1 }' | xargs)
	expect_eq "scenarios ingero-top knows" "$known" "$listed"
	# A checkout under a directory nobody may enter (mktemp -d is 0700):
	# replay from a copy of the binary and the recordings in $TMP (0755).
	if ! "${as[@]}" test -x "$IG" || ! "${as[@]}" test -r "$ROOT/tests/scenarios/scenarios.txt"; then
		mkdir -p "$TMP/m/build" "$TMP/m/tests/scenarios"
		cp "$IG" "$TMP/m/build/" && cp "$ROOT"/tests/scenarios/*.db "$TMP/m/tests/scenarios/"
		chmod -R a+rX "$TMP/m"
		IG=$TMP/m/build/ingero-top
		echo "     (the checkout is not readable by nobody: replaying copies in $TMP/m)"
	fi
fi
# an unknown scenario is a bad option value: exit 2, in batch and in a terminal
"$IG" --demo nosuch --batch >/dev/null 2>&1
expect_eq "--demo nosuch --batch exit status" "$?" 2
if command -v script >/dev/null; then
	script -qec "$IG --demo nosuch" /dev/null >"$TMP/demo-tty.out" 2>&1
	expect_eq "--demo nosuch in a terminal: exit status" "$?" 2
	grep -q "unknown scenario 'nosuch'" "$TMP/demo-tty.out" && ok "--demo nosuch in a terminal says why" ||
		bad "--demo nosuch in a terminal: $(head -c 200 "$TMP/demo-tty.out")"
fi
while read -r name scale class min_s where rate; do
	[ -n "$name" ] || continue
	db=$ROOT/tests/scenarios/$name.db
	size=$(stat -c %s "$db" 2>/dev/null || echo 0)
	if [ "$size" -gt 0 ] && [ "$size" -lt 12582912 ]; then
		ok "$name.db: $size bytes"
	else
		bad "$name.db: $size bytes (want a file under 12 MiB)"
	fi
	span=$(sqlite3 "$db" "SELECT (MAX(end_ns) - MIN(start_ns)) / 1000000000 FROM events" 2>/dev/null)
	if [ "${span:-0}" -ge "$min_s" ]; then
		ok "$name.db: $span s of activity (at least $min_s)"
	else
		bad "$name.db: ${span:-0} s of activity (want at least $min_s s: long enough to read)"
	fi
	"${as[@]}" "$IG" --demo "$name" --batch --summary --json >"$TMP/$name.json" 2>"$TMP/$name.err"
	rc=$?
	expect_eq "$name: exit status without root" "$rc" 0
	grep -q "not root: replaying the recording of the $name demo" "$TMP/$name.err" &&
		ok "$name: says it replays the recording" || bad "$name: no 'not root: replaying' notice"
	top=$(python3 -c '
import json, sys
d = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
c = d["chains"][0] if d["chains"] else {}
if sys.argv[3] == "any" and any(x["class"] == sys.argv[2] for x in d["chains"]):
    c = [x for x in d["chains"] if x["class"] == sys.argv[2]][0]
print(d["mode"], c.get("class", "none"), c.get("severity", "-"), c.get("summary", ""))
' "$TMP/$name.json" "$class" "$where" 2>/dev/null)
	echo "     $name: $top"
	if [ "$where" = none ]; then # too short to judge (scenarios.txt says why)
		expect_eq "$name: replay, no chain expected" "$(echo "$top" | cut -d' ' -f1-2)" "replay none"
	else
		expect_eq "$name: replay, chain class ($where)" "$(echo "$top" | cut -d' ' -f1-2)" "replay $class"
	fi
done < <(grep -v '^#' "$ROOT/tests/scenarios/scenarios.txt")
finish
