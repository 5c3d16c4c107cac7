#!/usr/bin/env bash
# Hostile text in a replayed recording (issue 12 §2): copies of a shipped
# ingero-top recording and of an Ingero one, with process names, event
# comms, stack symbols, library names, recorded chains and the schema
# version holding ESC, BEL, CR, LF, TAB and a forged --events line. In
# --batch frames, --summary, --events and --stacks: not one control byte on
# stdout or stderr, every --events line parses, and every count equals the
# unmodified recording's. --json and --json --events stay valid JSON whose
# names come back byte for byte.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"

run() { # name, db, args...: stdout to $TMP/name.out, stderr to $TMP/name.err
	local name=$1 db=$2; shift 2
	"$IG" "$@" --replay "$db" >"$TMP/$name.out" 2>"$TMP/$name.err"
	local rc=$?
	[ $rc = 0 ] || bad "$name: exit status $rc: $(head -c 300 "$TMP/$name.err")"
}

one() { # label, shipped recording
	local l=$1 src=$2 h=$TMP/$1-hostile.db
	make_hostile_db "$src" "$h" || { bad "$l: cannot build the crafted copy"; return; }
	local names
	names=$(sqlite3 "$h" "SELECT COUNT(*) FROM process_names WHERE name GLOB '*'||char(27)||'*'")
	[ "$names" -gt 0 ] && ok "$l: crafted copy has $names names with ESC" || bad "$l: nothing crafted"

	for v in plain hostile; do
		local db=$src
		[ $v = hostile ] && db=$h
		run "$l-$v-frames" "$db" --batch -d 0.5 --stacks
		run "$l-$v-summary" "$db" --batch --summary --stacks
		run "$l-$v-events" "$db" --events
		run "$l-$v-json" "$db" --json --summary --stacks
		run "$l-$v-jsonev" "$db" --json --events
	done
	for m in frames summary events; do
		check_clean "$TMP/$l-hostile-$m.out" "$l: --$m stdout"
		check_clean "$TMP/$l-hostile-$m.err" "$l: --$m stderr" empty-ok
	done
	check_events "$TMP/$l-hostile-events.out" "$l: hostile"

	# Counts unchanged: events per kind and op, op rows, frame and row counts.
	if diff <(event_shape "$TMP/$l-plain-events.out") <(event_shape "$TMP/$l-hostile-events.out") >"$TMP/d"; then
		ok "$l: --events counts per kind and op equal the plain recording's ($(wc -l <"$TMP/$l-plain-events.out") lines)"
	else
		bad "$l: --events counts differ:"; cat "$TMP/d"
	fi
	expect_eq "$l: --events lines" "$(wc -l <"$TMP/$l-hostile-events.out")" "$(wc -l <"$TMP/$l-plain-events.out")"
	if diff <(op_rows "$TMP/$l-plain-summary.out") <(op_rows "$TMP/$l-hostile-summary.out") >"$TMP/d"; then
		ok "$l: --summary op table equal ($(op_rows "$TMP/$l-plain-summary.out" | wc -l) ops)"
	else
		bad "$l: --summary op table differs:"; cat "$TMP/d"
	fi
	for m in frames summary; do
		expect_eq "$l: --$m lines" "$(wc -l <"$TMP/$l-hostile-$m.out")" "$(wc -l <"$TMP/$l-plain-$m.out")"
		expect_eq "$l: --$m process rows" "$(grep -c '^pid ' "$TMP/$l-hostile-$m.out")" \
			"$(grep -c '^pid ' "$TMP/$l-plain-$m.out")"
		expect_eq "$l: --$m stack frame lines" "$(grep -c '^    ' "$TMP/$l-hostile-$m.out")" \
			"$(grep -c '^    ' "$TMP/$l-plain-$m.out")"
	done
	expect_eq "$l: --json --events lines" "$(wc -l <"$TMP/$l-hostile-jsonev.out")" \
		"$(wc -l <"$TMP/$l-plain-events.out")"

	# JSON: valid, and the names are the crafted bytes.
	if python3 - "$TMP/$l-hostile-json.out" "$TMP/$l-hostile-jsonev.out" "$h" <<'PY'; then
import json, sqlite3, sys
frames, events, db = sys.argv[1:4]
con = sqlite3.connect(db)
con.text_factory = bytes
names = {r[0].decode("utf-8", "replace") for r in con.execute("SELECT name FROM process_names")}
if any(r[1] == b"comm" for r in con.execute("PRAGMA table_info(events)")):
    names |= {r[0].decode("utf-8", "replace") for r in con.execute("SELECT DISTINCT comm FROM events")}
    names |= {r[0].decode("utf-8", "replace") for r in con.execute("SELECT DISTINCT other_comm FROM events")}
objs = [json.loads(l) for l in open(frames, encoding="utf-8")]
procs = [p for o in objs if o.get("type") == "summary" for p in o["procs"]]
comms = [p["comm"] for p in procs] + [q["comm"] for p in procs for q in p["preemptors"] + p["wakers"]]
hostile = [c for c in comms if any(ord(ch) < 32 for ch in c)]
assert procs and hostile, "no process with a hostile name in the JSON summary"
# longer names are cut to the comm length (15 or 16 bytes)
def known(c):
    b = c.encode()
    return c in names or (len(b) >= 15 and any(n.encode().startswith(b) for n in names))
unknown = [c for c in comms if c and not known(c)]
assert not unknown, "names not from the recording: %r" % unknown[:3]
texts = [f["text"] for o in objs if o.get("type") == "stacks" for op in o["ops"]
         for s in op["stacks"] for f in s["frames"]]
assert any("\x1b[1m" in t for t in texts), "stack frames lost their bytes"
n = 0
for l in open(events, encoding="utf-8"):
    e = json.loads(l)
    assert e["type"] == "event" and isinstance(e["ts_ns"], int)
    if "comm" in e and e["comm"]:
        assert known(e["comm"]), e["comm"]
    n += 1
print("    %d JSON objects, %d names (%d with control bytes) from the recording, %d events"
      % (len(objs), len(comms), len(hostile), n))
PY
		ok "$l: --json valid, names and frames round-trip, --json --events valid"
	else
		bad "$l: --json check"
	fi
}

one scenario "$ROOT/tests/scenarios/cpu-contention.db"
one ingero "$ROOT/tests/fixtures/ingero/pytorch-dataloader-starvation.db"

# What the text shows for the crafted stack symbol and names.
grep -qF "    $H_SYM_TEXT+0x" "$TMP/scenario-hostile-summary.out" &&
	ok "scenario: the symbol shows as $H_SYM_TEXT" || bad "scenario: escaped symbol not shown"
grep -qE '^pid [0-9]+ +(\\x1b\]0;pwned\\x07|\\n1234_call_op=x|[a-z-]+\\r\\t_x) ' "$TMP/scenario-hostile-summary.out" &&
	ok "scenario: the process name shows escaped" || bad "scenario: escaped name not shown"
grep -q ' comm=\\n1234_call_op=x$' "$TMP/scenario-hostile-events.out" &&
	ok "scenario: the forged line stays in its field: comm=\\n1234_call_op=x" ||
	bad "scenario: forged name not shown escaped"
grep -qF "schema 0.9\\x1b[31m)" "$TMP/scenario-hostile-frames.out" &&
	ok "scenario: the recorded schema version is escaped" || bad "scenario: schema version"
finish
