#!/usr/bin/env bash
# `ingero-top query` on real recordings: the shortcuts on ingero-top's and
# Ingero's files give SQLite's own numbers, CSV and JSON parse, several
# files are one view with a node column; and the negative matrix (writes,
# ATTACH, pragmas that write, load_extension, several statements, a query
# that never ends, a million rows): each refused or cut with one line on
# stderr and a non-zero exit, the file unchanged byte for byte, nothing
# created beside it. Hostile names never reach the terminal raw.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"

S=$ROOT/tests/scenarios
F=$ROOT/tests/fixtures/ingero
cp "$S/cpu-contention.db" "$TMP/cc.db"
cp "$F/pytorch-dataloader-starvation.db" "$TMP/dl.db"
for i in 1 2 3; do cp "$F/sample-gpu-node-0$i.db" "$TMP/n$i.db"; done

q() { "$IG" query "$@" >"$TMP/out" 2>"$TMP/err"; echo $? >"$TMP/rc"; }
rc() { cat "$TMP/rc"; }

# --- the shortcuts -----------------------------------------------------------------
for db in cc dl; do
	q "$TMP/$db.db" --ops --csv
	expect_eq "$db --ops exit" "$(rc)" 0
	python3 - "$TMP/out" "$TMP/$db.db" <<'PY' && ok "$db --ops: calls and p99 of every op equal SQLite's (nearest rank)" || bad "$db --ops differs from SQLite"
import csv, sqlite3, sys
rows = list(csv.DictReader(open(sys.argv[1])))
db = sqlite3.connect(sys.argv[2])
assert rows, "no rows"
# the op as explain names it; Ingero's format stores two under short names
short = {"cudaStreamSynchronize": "cudaStreamSync", "cudaDeviceSynchronize": "cudaDeviceSync"}
assert not set(short.values()) & {r["op"] for r in rows}, [r["op"] for r in rows]
for r in rows:
    d = [x for (x,) in db.execute("SELECT e.duration FROM events e JOIN ops o ON o.source_id = e.source AND o.op_id = e.op JOIN sources s ON s.id = e.source WHERE o.name = ? AND s.name IN ('CUDA', 'DRIVER') ORDER BY e.duration", (short.get(r["op"], r["op"]),))]
    assert int(r["calls"]) == len(d), (r["op"], r["calls"], len(d))
    k = -(-len(d) * 99 // 100)
    assert abs(float(r["p99_us"]) * 1000 - d[k - 1]) <= 50, (r["op"], r["p99_us"], d[k - 1])
PY
done
q "$TMP/cc.db" --slowest cudaStreamSynchronize
expect_eq "--slowest exit" "$(rc)" 0
expect_eq "--slowest rows (20 and the header and rule)" "$(wc -l <"$TMP/out")" 22
top=$(sqlite3 "$TMP/cc.db" "SELECT ROUND(MAX(duration) / 1e3, 1) FROM events WHERE source = 1 AND op = (SELECT op_id FROM ops WHERE source_id = 1 AND name = 'cudaStreamSync')")
expect_eq "--slowest: the first row is the slowest call (us)" "$(awk 'NR == 3 {print $6}' "$TMP/out")" "$top"
expect_eq "--slowest: the op named as explain names it" "$(awk 'NR == 3 {print $2}' "$TMP/out")" cudaStreamSynchronize
grep -q "cudaStreamSynchronize" <("$IG" query "$TMP/cc.db" --ops) && ok "--ops: cudaStreamSynchronize, as explain writes it" ||
	bad "--ops: no cudaStreamSynchronize row"
pid=$(sqlite3 "$TMP/cc.db" "SELECT pid FROM events WHERE source = 1 LIMIT 1")
q "$TMP/cc.db" --timeline "$pid" --json
expect_eq "--timeline rows" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["row_count"])' "$TMP/out")" \
	"$(sqlite3 "$TMP/cc.db" "SELECT COUNT(*) FROM events WHERE pid = $pid")"
q "$TMP/cc.db" --chains
expect_eq "--chains rows" "$(($(wc -l <"$TMP/out") - 2))" "$(sqlite3 "$TMP/cc.db" 'SELECT COUNT(*) FROM causal_chains')"
q "$TMP/dl.db" --slowest cudaStreamSynchronize --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["row_count"] > 0 and "comm" in d["columns"]' "$TMP/out" &&
	ok "Ingero's file: --slowest by ingero-top's op name, comm from process_names" || bad "Ingero --slowest: $(head -c 300 "$TMP/out")"

# --- several files, one view ----------------------------------------------------------
q "$TMP/n1.db" "$TMP/n2.db" "$TMP/n3.db" "SELECT node, COUNT(*) AS n FROM events GROUP BY node ORDER BY node" --csv
want=$(for i in 1 2 3; do echo "gpu-node-0$i,$(sqlite3 "$TMP/n$i.db" 'SELECT COUNT(*) FROM events')"; done)
expect_eq "three files: events per node" "$(tail -n +2 "$TMP/out")" "$want"
q "$TMP/n1.db" "$TMP/n2.db" "$TMP/n3.db" --ops
expect_eq "three files: --ops has the node column first" "$(head -n 1 "$TMP/out" | awk '{print $1}')" node

# --- the negative matrix -----------------------------------------------------------
sum0=$(sha256sum "$TMP/cc.db" | cut -d' ' -f1)
mt0=$(stat -c %Y.%y "$TMP/cc.db")
neg() { # what, regex of the message, sql, options...
	local what=$1 re=$2 sql=$3
	shift 3
	q "$@" "$TMP/cc.db" "$sql"
	if [ "$(rc)" = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -qE "$re" "$TMP/err"; then
		ok "$what: exit 1, $(cut -c1-70 "$TMP/err")"
	else
		bad "$what: exit $(rc), stderr: $(head -c 200 "$TMP/err")"
	fi
}
neg "INSERT" "refused: INSERT into events" "INSERT INTO events(timestamp, pid, tid, source, op, duration) VALUES (1, 1, 1, 1, 1, 1)"
neg "UPDATE" "refused: UPDATE of events" "UPDATE events SET pid = 0"
neg "DELETE" "refused: DELETE from events" "DELETE FROM events"
neg "DROP" "refused: DROP TABLE" "DROP TABLE events"
neg "CREATE" "refused: CREATE TABLE" "CREATE TABLE x(a)"
neg "ATTACH" "refused: ATTACH" "ATTACH DATABASE '$TMP/evil.db' AS evil"
neg "writable_schema" "refused: PRAGMA writable_schema" "PRAGMA writable_schema = 1"
neg "journal_mode" "refused: PRAGMA journal_mode" "PRAGMA journal_mode = WAL"
# a pragma as a table-valued function: named, with why (it said "refused: SELECT * FROM:")
neg "pragma_journal_mode('wal')" \
	"^ingero-top: refused: pragma_journal_mode\(\): journal_mode is not one of the pragmas a query may use \(those that only report" \
	"SELECT * FROM pragma_journal_mode('wal')"
grep -q "FROM:" "$TMP/err" && bad "pragma_journal_mode('wal'): the message still quotes the statement" ||
	ok "pragma_journal_mode('wal'): the message names the function, not the statement's first words"
neg "pragma_writable_schema in a join" "refused: pragma_writable_schema\(\): writable_schema" \
	"SELECT e.pid FROM events e, main.pragma_writable_schema"
if sqlite3 :memory: "SELECT 1 FROM pragma_module_list WHERE name = 'dbstat'" | grep -q 1; then
	neg "the dbstat virtual table" "refused: the virtual table dbstat: a query may read" "SELECT * FROM dbstat"
fi
q "$TMP/cc.db" "SELECT page_count FROM pragma_page_count"
expect_eq "pragma_page_count (a pragma that only reports) as a table-valued function" "$(rc) $(tail -n 1 "$TMP/out" | tr -d ' ')" \
	"0 $(sqlite3 "$TMP/cc.db" 'PRAGMA page_count')"
neg "load_extension" "refused: function load_extension" "SELECT load_extension('$TMP/x.so')"
neg "several statements" "refused: several statements" "SELECT 1; DELETE FROM events"
neg "VACUUM INTO" "refused" "VACUUM INTO '$TMP/copy.db'"
neg "a query that never ends" "time limit" \
	"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c" --timeout 1
neg "a million rows" "cut at 100000 rows" \
	"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000000) SELECT x FROM c"
expect_eq "a million rows: the rows before the cap printed" "$(wc -l <"$TMP/out")" 100002
neg "--max-rows" "cut at 10 rows" "SELECT * FROM events" --max-rows 10
neg "the byte cap" "byte cap" "SELECT randomblob(60000) FROM events" --max-bytes 1M
expect_eq "file unchanged (sha256)" "$(sha256sum "$TMP/cc.db" | cut -d' ' -f1)" "$sum0"
expect_eq "file unchanged (mtime)" "$(stat -c %Y.%y "$TMP/cc.db")" "$mt0"
expect_eq "nothing created beside it" "$(ls "$TMP" | grep -cE 'cc\.db-|evil|copy')" 0

# --- usage and files --------------------------------------------------------------------
q "$TMP/cc.db"
expect_eq "no SQL: exit 2" "$(rc)" 2
q --bogus "$TMP/cc.db" "SELECT 1"
expect_eq "unknown option: exit 2" "$(rc)" 2
q "$TMP/missing.db" "SELECT 1"
expect_eq "missing file: exit 1" "$(rc)" 1
grep -q "No such file" "$TMP/err" && ok "missing file: says so" || bad "missing file: $(cat "$TMP/err")"
: >"$TMP/empty.db"
q "$TMP/empty.db" "SELECT 1"
expect_eq "an empty file: exit 1, said as replay says it" "$(rc) $(cat "$TMP/err")" \
	"1 ingero-top: cannot query $TMP/empty.db: empty file"
sqlite3 "$TMP/foreign.db" "CREATE TABLE t(x); INSERT INTO t VALUES (1)"
for sc in --ops "--slowest cudaMalloc" "--timeline 1"; do
	q "$TMP/foreign.db" $sc
	expect_eq "a foreign SQLite file, $sc: exit 1, said as replay says it" "$(rc) $(cat "$TMP/err")" \
		"1 ingero-top: cannot query $TMP/foreign.db: not an Ingero or ingero-top trace database (no events table)"
done
q "$TMP/foreign.db" --chains
grep -q "no causal_chains table" "$TMP/err" && [ "$(rc)" = 1 ] && ok "a foreign SQLite file, --chains: no causal_chains table" ||
	bad "foreign --chains: $(cat "$TMP/err")"
q "$TMP/foreign.db" "SELECT x FROM t"
expect_eq "a foreign SQLite file: plain SQL still works" "$(rc) $(tail -n 1 "$TMP/out" | tr -d ' ')" "0 1"
cp "$TMP/cc.db" "$TMP/hot.db" && echo wal >"$TMP/hot.db-wal"
q "$TMP/hot.db" "SELECT 1"
grep -q "unfinished WAL" "$TMP/err" && [ "$(rc)" = 1 ] && ok "a file with a WAL beside it: refused, says to query a copy" ||
	bad "hot WAL: $(cat "$TMP/err")"

# --- hostile text -------------------------------------------------------------------------
make_hostile_db "$S/cpu-contention.db" "$TMP/h.db"
for fmt in "" --csv; do
	q "$TMP/h.db" "SELECT pid, name FROM process_names" $fmt
	check_clean "$TMP/out" "hostile names in query ${fmt:-table}"
done
q "$TMP/h.db" "SELECT name FROM process_names" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any("\x1b" in r[0] for r in d["rows"])' "$TMP/out" &&
	ok "--json gives the names back exactly (escaped by JSON)" || bad "--json names: $(head -c 200 "$TMP/out")"

# --- the module under ASan and UBSan (leaks too) -------------------------------------------
echo 'int main(void){return 0;}' >"$TMP/t.c"
if gcc -fsanitize=address,undefined "$TMP/t.c" -o "$TMP/t" 2>/dev/null; then
	CF="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -Wall
	    -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes -std=gnu11 -D_GNU_SOURCE
	    -DIG_VERSION=\"asan\" -I$ROOT/src -I$ROOT/bpf"
	for t in test_query test_query_caps; do
		if (cd "$ROOT" && gcc $CF -o "$TMP/$t" "tests/unit/$t.c" src/store/*.c src/core/ops.c src/core/status.c \
			src/core/hist.c src/core/json.c src/core/escape.c src/report/qout.c -lsqlite3 -ljansson -lm -lpthread); then
			(cd "$ROOT" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$TMP/$t") >"$TMP/asan.log" 2>&1 &&
				ok "$t under ASan/UBSan: $(tail -n 1 "$TMP/asan.log")" || { bad "$t under ASan/UBSan"; tail -n 20 "$TMP/asan.log"; }
		else
			bad "$t does not build with ASan"
		fi
	done
else
	echo "part skipped: gcc cannot build with -fsanitize=address,undefined"
fi
finish
