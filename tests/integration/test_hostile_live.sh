#!/usr/bin/env bash
# needs: root
# Hostile text traced live (issue 12 §2): tests/progs/hostile, started
# through a link whose name is ESC ] 0 ; pwned BEL, renames its threads
# with prctl(PR_SET_NAME) to names holding ESC, BEL, CR, LF, TAB, invalid
# UTF-8 and a forged --events line, and calls CUDA through a function whose
# ELF symbol holds ESC, BEL, TAB and CR. In --events, --batch frames,
# --summary and --stacks: not one control byte on stdout or stderr, every
# --events line parses, and the call counts equal the program's own and
# those of the same program with plain names. --json stays valid and
# gives the names back byte for byte.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"
need_root
HP=$B/tests/progs/hostile
[ -x "$HP" ] || { echo "skip: $HP not built (make test-build)"; exit 77; }
mkdir -p "$TMP/bin"
LINK=$TMP/bin/$H_TITLE
ln -s "$HP" "$LINK"
ITERS=40

trace() { # name, ingero-top options..., --, program args
	local name=$1; shift
	"$IG" --no-system-libs "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	local rc=$?
	expect_eq "$name: exit status" "$rc" 0
	[ $rc = 0 ] || head -c 600 "$TMP/$name.err"
}
calls_of() { awk '$2 == "call" { for (i = 5; i <= NF; i++) if ($i ~ /^op=/) c[substr($i, 4)]++ }
		  END { for (o in c) print o, c[o] }' "$1" | sort; }
runtime_of() { calls_of "$1" | grep '^cuda'; }

# 1. --events: plain and hostile names, the same calls.
trace plain-events --events -- "$HP" --plain --iters $ITERS --expect "$TMP/plain.expect"
trace events --events -- "$LINK" --iters $ITERS --expect "$TMP/hostile.expect"
check_clean "$TMP/events.out" "--events stdout"
check_clean "$TMP/events.err" "--events stderr"
check_events "$TMP/events.out" "--events"
if diff <(sort "$TMP/hostile.expect") <(runtime_of "$TMP/events.out") >"$TMP/d"; then
	ok "--events: runtime calls equal the program's own ($(awk '{s += $2} END {print s}' "$TMP/hostile.expect"))"
else
	bad "--events: runtime calls differ from the program's own:"; cat "$TMP/d"
fi
if diff <(calls_of "$TMP/plain-events.out") <(calls_of "$TMP/events.out") >"$TMP/d"; then
	ok "--events: per-op calls equal the plain-named run's ($(calls_of "$TMP/events.out" | wc -l) ops)"
else
	bad "--events: per-op calls differ from the plain-named run's:"; cat "$TMP/d"
fi
for want in 'comm=\x1b]0;pwned\x07' 'comm=a\rb\nc\td' 'comm=\n1_call_op=x' 'comm=sp_ace\\x1b' \
	'comm=e\x1b[2J\xff\xc2\x9b'; do
	n=$(grep -cF " $want" "$TMP/events.out")
	[ "$n" -gt 0 ] && ok "--events: $n lines with $want" || bad "--events: no line with $want"
done
grep -qF 'exec pid=' "$TMP/events.out" && grep ' exec ' "$TMP/events.out" | grep -qF 'comm=\x1b]0;pwned\x07' &&
	ok "--events: the exec'd name (from the link) is escaped" || bad "--events: exec name"

# 2. --batch frames and --summary.
trace frames --batch -d 0.2 -- "$LINK" --iters $ITERS
check_clean "$TMP/frames.out" "--batch frames stdout"
check_clean "$TMP/frames.err" "--batch frames stderr"
n=$(grep -c '^ingero-top live ' "$TMP/frames.out")
[ "$n" -ge 1 ] && ok "--batch: $n frames" || bad "--batch: no frame"
trace plain-summary --batch --summary -- "$HP" --plain --iters $ITERS
trace summary --batch --summary -- "$LINK" --iters $ITERS
check_clean "$TMP/summary.out" "--summary stdout"
check_clean "$TMP/summary.err" "--summary stderr"
if diff <(op_rows "$TMP/plain-summary.out") <(op_rows "$TMP/summary.out") >"$TMP/d"; then
	ok "--summary: the op table's calls equal the plain-named run's"
else
	bad "--summary: op table differs:"; cat "$TMP/d"
fi
grep -qE '^pid [0-9]+ +\\x1b\]0;pwned\\x07 ' "$TMP/summary.out" &&
	ok "--summary: the process shows as \\x1b]0;pwned\\x07" || bad "--summary: process name"

# 3. --stacks: the program waits (--hold) until its frames are named.
"$IG" --no-system-libs --batch -d 0.3 --stacks -- "$LINK" --iters 5 --hold "$TMP/go" \
	>"$TMP/stacks.out" 2>"$TMP/stacks.err" &
igpid=$!
cleanup_hooks+=("touch $TMP/go; kill $igpid 2>/dev/null")
sym='hostile\x1b]0;sym\x07\tX\rY+0x'
for _ in $(seq 600); do grep -qF "$sym" "$TMP/stacks.out" && break; sleep 0.1; done
touch "$TMP/go"
wait $igpid
expect_eq "--stacks: exit status" "$?" 0
check_clean "$TMP/stacks.out" "--stacks stdout"
check_clean "$TMP/stacks.err" "--stacks stderr"
n=$(grep -cF "    $sym" "$TMP/stacks.out")
[ "$n" -gt 0 ] && ok "--stacks: $n frame lines show the symbol as ${sym%+0x}" ||
	bad "--stacks: symbol not shown escaped"

# 4. --json: valid, names byte for byte.
trace json --json --summary -- "$LINK" --iters $ITERS
trace jsonev --json --events -- "$LINK" --iters $ITERS
if python3 - "$TMP/json.out" "$TMP/jsonev.out" "$ITERS" <<'PY'; then
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
procs = [p for o in objs if o["type"] == "summary" for p in o["procs"]]
assert [p["comm"] for p in procs] == ["\x1b]0;pwned\x07"], [p["comm"] for p in procs]
want = {"\x1b]0;pwned\x07", "a\rb\nc\td", "\n1 call op=x", "sp ace\\x1b", "e\x1b[2J\ufffd\x9b"}
seen, calls = set(), 0
for l in open(sys.argv[2], encoding="utf-8"):
    e = json.loads(l)
    if e["kind"] == "call":
        calls += e["op"].startswith("cuda")
        seen.add(e["comm"])
assert seen == want, seen ^ want
assert calls == 4 * 5 * int(sys.argv[3]), calls
print("    procs %r, %d thread names, %d runtime calls" % ([p["comm"] for p in procs], len(seen), calls))
PY
	ok "--json: valid; --json --events: valid, names round-trip, runtime calls exact"
else
	bad "--json check"
fi
finish
