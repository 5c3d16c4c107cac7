#!/usr/bin/env bash
# needs: root
# Batch mode on a live workload: --summary op rows carry the exact counts,
# -n N prints N frames, --json prints one valid JSON object per frame; a
# --record of the run replays (no root needed) to the same per-op counts and
# percentiles and the same chains, at full speed and paced.
. "$(dirname "$0")/lib.sh"
need_root

summary_ops() { # frame -> "op calls p50 p95 p99 max"
	awk '/^OP /{t=1; next} t && NF == 0 {exit} t {print $1, $2, $5, $7, $9, $11}' "$1" | sort
}

"$IG" --batch --summary --no-system-libs --record "$TMP/run.db" -- "$WL" --iters 60 --kernels 3 \
	--kernel-us 800 --h2d 262144 --sync-every 1 --malloc-every 6 --expect "$TMP/run.expect" \
	>"$TMP/live.txt" 2>"$TMP/live.err"
expect_eq "live --summary exit status" "$?" 0
summary_ops "$TMP/live.txt" | awk '{print $1, $2}' >"$TMP/live.counts"
expect_counts "$TMP/run.expect" >"$TMP/want.counts"
diff -u "$TMP/want.counts" "$TMP/live.counts" >/dev/null && ok "--summary op rows: exact counts ($(wc -l <"$TMP/want.counts") ops)" \
	|| { bad "--summary counts"; diff -u "$TMP/want.counts" "$TMP/live.counts"; }
grep -q "^pid [0-9]* *workload" "$TMP/live.txt" && ok "--summary lists the workload process" || bad "no process row"

# The recording replays to the same frame, without root.
sqlite3 "$TMP/run.db" "PRAGMA integrity_check" | grep -qx ok && ok "recording passes integrity_check" || bad "integrity_check"
rows=$(sqlite3 "$TMP/run.db" "SELECT COUNT(*) FROM events WHERE source IN (1, 4)")
want=$(awk '{s += $2} END {print s}' "$TMP/want.counts")
expect_eq "recorded CUDA/driver rows" "$rows" "$want"
# Every chain the run recorded (how many depends on the machine) has its
# recommendations and timeline as valid JSON arrays.
chains=$(sqlite3 "$TMP/run.db" "SELECT COUNT(*) FROM causal_chains")
valid=$(sqlite3 "$TMP/run.db" "SELECT COUNT(*) FROM causal_chains WHERE json_type(timeline) = 'array' AND json_type(recommendations) = 'array'")
expect_eq "recorded chains ($chains) with JSON-array recommendations and timeline" "$valid" "$chains"
chmod 644 "$TMP/run.db"
replay() { setpriv --reuid=65534 --regid=65534 --clear-groups "$IG" --batch --summary --replay "$TMP/run.db" "$@"; }
replay >"$TMP/rp.txt" 2>"$TMP/rp.err"
expect_eq "replay as nobody: exit status" "$?" 0
summary_ops "$TMP/live.txt" >"$TMP/live.ops"; summary_ops "$TMP/rp.txt" >"$TMP/rp.ops"
diff -u "$TMP/live.ops" "$TMP/rp.ops" >/dev/null && ok "replay: same counts, p50, p95, p99 and max per op" \
	|| { bad "replay differs from live"; diff -u "$TMP/live.ops" "$TMP/rp.ops"; }
grep '^\[' "$TMP/live.txt" | sed 's/ *$//' >"$TMP/live.chains"
grep '^\[' "$TMP/rp.txt" | sed 's/ *$//' >"$TMP/rp.chains"
diff -u "$TMP/live.chains" "$TMP/rp.chains" >/dev/null && ok "replay: same chains ($(wc -l <"$TMP/live.chains"): ids, classes, severities)" \
	|| { bad "chains differ"; diff -u "$TMP/live.chains" "$TMP/rp.chains"; }
# The workload's parent (ingero-top, which launched it) is recorded and
# replayed with its name.
wpid=$(awk '$1 == "pid" {print $2; exit}' "$TMP/run.expect")
ppid=$(sqlite3 "$TMP/run.db" "SELECT ppid FROM process_names WHERE pid = $wpid AND is_event = 1 AND ppid > 0 LIMIT 1")
[ -n "$ppid" ] && [ "$ppid" -gt 1 ] && ok "recorded ppid of the workload: $ppid" || bad "recorded ppid: '$ppid'"
replay --json >"$TMP/rp.json" 2>/dev/null
python3 -c '
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
procs = {p["pid"]: p for p in last["procs"]}
sys.exit(0 if procs[int(sys.argv[2])]["ppid"] == int(sys.argv[3]) else 1)' "$TMP/rp.json" "$wpid" "${ppid:-0}" \
	&& ok "replay --json: the workload's ppid" || bad "replay --json: wrong or no ppid"
replay --speed 1 >/dev/null 2>&1 # batch replays ignore pacing: as fast as possible
summary_ops "$TMP/rp.txt" >"$TMP/rp2.ops"
diff -q "$TMP/live.ops" "$TMP/rp2.ops" >/dev/null && ok "replay again: identical" || bad "second replay differs"

# -n 3: three frames, then exit while the workload still runs.
iters=$((100000 + $$ % 10000)) # a command line no other test uses
"$IG" --batch -n 3 -d 0.5 --no-system-libs -- "$WL" --iters $iters --kernels 2 --kernel-us 500 \
	>"$TMP/n3.txt" 2>/dev/null
expect_eq "-n 3: frames printed" "$(grep -c '^ingero-top live' "$TMP/n3.txt")" 3
pgrep -f "workload --iters $iters " >/dev/null && bad "workload left running" || ok "-n 3: the launched command was stopped on exit"

# --json: one valid object per frame.
"$IG" --json -n 2 -d 0.5 --no-system-libs -- "$WL" --iters 100000 --kernels 2 --kernel-us 500 \
	>"$TMP/j.txt" 2>/dev/null
expect_eq "--json: lines" "$(wc -l <"$TMP/j.txt")" 2
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert o["ops"] and any(r["op"] == "cudaLaunchKernel" for r in o["ops"]), o.keys()
' "$TMP/j.txt" && ok "--json: every line parses and has the op table" || bad "--json output"
finish
