#!/usr/bin/env bash
# Hostile recordings through the binary (docs/recording.md, "Values out of
# range" and "Replays that never end"): rows out of range are refused and
# the batch header and --json status say how many; no absurd duration or
# share reaches the output; a row from 1970 and one 115 days later do not
# make the batch loop step through the gap a second at a time (frames stay
# few); a path holding '%', '?' and '#' replays that very file.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "skip: the sqlite3 tool is missing"; exit 77; }
OWN=$ROOT/tests/scenarios/cpu-contention.db
ING=$ROOT/tests/fixtures/ingero/pytorch-dataloader-starvation.db

# --- values out of range: ours ---------------------------------------------------------
cp "$OWN" "$TMP/own.db"
sqlite3 "$TMP/own.db" "UPDATE events SET duration = -1 WHERE id = 10;
	UPDATE events SET pid = 0 WHERE id = 20;
	UPDATE events SET preempt_ns = duration, blocked_ns = duration WHERE id =
	  (SELECT MIN(id) FROM events WHERE kind = 1 AND duration > 0);
	UPDATE system_snapshots SET cpu_pct = 922337203685477632 WHERE rowid = 1;
	UPDATE system_snapshots SET mem_pct = 5000 WHERE rowid = 2;"
"$IG" --batch --summary --replay "$TMP/own.db" >"$TMP/own.txt" 2>&1
expect_eq "exit of --batch on a file with values out of range" $? 0
if grep -q "refused 5 rows" "$TMP/own.txt"; then ok "the batch header says refused 5 rows"
else bad "no 'refused 5 rows' in: $(grep '^replay' "$TMP/own.txt")"; fi
"$IG" --json --summary --replay "$TMP/own.db" >"$TMP/own.json" 2>&1
expect_eq "--json status.rows_refused" \
	"$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["status"]["rows_refused"])' "$TMP/own.json")" 5
if grep -Eq '307445734|922337203685477632|5000 ?%|92233720368' "$TMP/own.txt" "$TMP/own.json"; then
	bad "an absurd value reached the output"
else ok "no absurd duration or share in the output"; fi
cmp -s <("$IG" --batch --summary --replay "$OWN" | grep -c refused) <(echo 0) &&
	ok "the shipped recording refuses nothing (and says nothing)" || bad "the shipped recording refused rows"

# --- values out of range: Ingero's ------------------------------------------------------
cp "$ING" "$TMP/ing.db"
sqlite3 "$TMP/ing.db" "UPDATE events SET duration = -1 WHERE rowid = 5;
	UPDATE events SET timestamp = 0 WHERE rowid = 6;
	UPDATE events SET op = 77 WHERE rowid = 7;
	UPDATE system_snapshots SET cpu_pct = 922337203685477632 WHERE rowid = 1;"
"$IG" --batch --summary --replay "$TMP/ing.db" >"$TMP/ing.txt" 2>&1
if grep -q "refused 4 rows" "$TMP/ing.txt"; then ok "Ingero file: refused 4 rows"
else bad "Ingero file: no 'refused 4 rows' in: $(grep '^replay' "$TMP/ing.txt")"; fi
if grep -Eq '307445734|922337203685477632' "$TMP/ing.txt"; then bad "Ingero file: absurd value shown"
else ok "Ingero file: no absurd value shown"; fi

# --- a row from 1970 and one 115 days later ------------------------------------------------
cp "$OWN" "$TMP/far.db"
sqlite3 "$TMP/far.db" "UPDATE events SET start_ns = 0, end_ns = 0 WHERE id = 3;
	UPDATE events SET start_ns = start_ns + 9936000000000000,
	  end_ns = end_ns + 9936000000000000 WHERE id = (SELECT MAX(id) FROM events);"
timeout 120 "$IG" --batch -d 1 --replay "$TMP/far.db" >"$TMP/far.txt" 2>&1
expect_eq "exit of -d 1 over a 115-day gap" $? 0
frames=$(grep -c '^ingero-top replay' "$TMP/far.txt")
# ~3 s of rows, the window (10 s) after them, then the frame of the outlier
if [ "$frames" -gt 0 ] && [ "$frames" -le 40 ]; then ok "$frames frames for 115 days of claimed span"
else bad "$frames frames for a 115-day gap (want a few dozen at most)"; fi
grep -q "refused 1 rows" "$TMP/far.txt" && ok "the 1970 row is refused" || bad "the 1970 row was not refused"
timeout 120 "$IG" --batch --summary --replay "$TMP/far.db" >/dev/null 2>&1
expect_eq "exit of --summary over a 115-day gap" $? 0

# --- paths SQLite would read as URIs ------------------------------------------------------
for name in 'a%41b.db' 'q?mode=memory.db' 'h#frag.db'; do
	cp "$OWN" "$TMP/$name"
	cp "$ING" "$TMP/aAb.db"
	"$IG" --batch --summary --replay "$TMP/$name" >"$TMP/uri.txt" 2>&1
	events=$(grep -o 'events [0-9]*' "$TMP/uri.txt" | head -1)
	want=$("$IG" --batch --summary --replay "$OWN" 2>&1 | grep -o 'events [0-9]*' | head -1)
	expect_eq "events replayed from '$name'" "$events" "$want"
done

# --- a recording's WAL of 512 MiB, sparse: not copied into TMPDIR -----------------------
cp "$OWN" "$TMP/sparse.db"
truncate -s 512M "$TMP/sparse.db-wal"
mkdir "$TMP/tmpdir"
TMPDIR=$TMP/tmpdir "$IG" --batch --summary --replay "$TMP/sparse.db" >"$TMP/sparse.txt" 2>&1
expect_eq "exit with a sparse 512 MiB WAL beside the file" $? 0
expect_eq "files left in TMPDIR" "$(ls -A "$TMP/tmpdir" | wc -l)" 0
grep -q "WAL (512 MiB) has no valid header" "$TMP/sparse.txt" && ok "the header says the WAL was not used" ||
	bad "nothing said about the WAL: $(head -3 "$TMP/sparse.txt")"
finish
