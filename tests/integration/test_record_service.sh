#!/usr/bin/env bash
# needs: root
# `ingero-top record`, the always-on recorder, on the shim workload with
# 5 s files and a small size cap (docs/recording.md, "Always-on
# recording"): files rotate on the boundaries and are named by them, the
# oldest are pruned, each file is a sound recording; a replay of the
# directory (and of a glob) with --since/--until lands on the second asked
# (its per-op counts are the SQL counts of that second, from the file that
# holds it); after kill -9 the files hold every call the workload made up to
# one second before the kill (the workload's own count, --progress); a full
# disk is said on one line and the recorder runs on.
# RECORD_SECS (default 22) is how long it records before the kill,
# RECORD_ROTATE the seconds of a file (5), RECORD_MAX_MB the cap (10),
# RECORD_SLEEP_US the workload's sleep per step (500: ~0.5 MB/s recorded;
# a file must fit in half the cap, or --max-db prunes inside it);
# tests/bench/record_soak.sh runs it for 10 minutes with 1-minute files.
. "$(dirname "$0")/lib.sh"
need_root

D=$TMP/rec
secs=${RECORD_SECS:-22}
rot_s=${RECORD_ROTATE:-5}
cap_mb=${RECORD_MAX_MB:-10}
sleep_us=${RECORD_SLEEP_US:-500}
iters=$((3000000 + $$ % 10000)) # a command line no other test uses
"$IG" record --dir "$D" --rotate ${rot_s}s --max-size ${cap_mb}M --retain 1h --no-system-libs -- \
	"$WL" --iters $iters --kernels 2 --sleep-us "$sleep_us" --progress "$TMP/progress" \
	2>"$TMP/rec.err" &
rec=$!
cleanup_hooks+=("kill -9 $rec 2>/dev/null")
# Wait for the rotations and a pruning, then for the rest of the time.
for _ in $(seq 1 $((secs * 10))); do
	grep -q "pruned the oldest" "$TMP/rec.err" && [ "$(grep -c 'recording to .*\.db' "$TMP/rec.err")" -ge $((secs / rot_s)) ] && break
	sleep 0.1
done
started=$(head -1 "$TMP/progress" 2>/dev/null | cut -d' ' -f1)
while [ $(( ($(date +%s%N) - ${started:-0}) / 1000000000 )) -lt "$secs" ]; do sleep 0.1; done
kill -0 $rec 2>/dev/null && ok "the recorder runs after ${secs}s" || { bad "the recorder died: $(tail -3 "$TMP/rec.err")"; finish; }
kill_ns=$(date +%s%N)
kill -9 $rec
wait $rec 2>/dev/null
wpid=$(pgrep -f "workload --iters $iters " | head -1)
[ -n "$wpid" ] && kill "$wpid"

# Rotation: one file per 5 s boundary, named by it; pruning: the oldest gone.
rot=$(($(grep -c 'recording to .*/ingero-.*\.db' "$TMP/rec.err") - 1))
[ "$rot" -ge $((secs / rot_s - 1)) ] && ok "rotated $rot times in ${secs}s at ${rot_s}s" || bad "rotations: $rot"
open_ms=$(grep -o 'opened in [0-9.]* ms' "$TMP/rec.err" | awk '{print $3}' | sort -n | tail -1)
ok "the slowest rotation on the loop (the next file made ahead by the thread): $open_ms ms"
grep -q "pruned the oldest" "$TMP/rec.err" && ok "pruned: $(grep -m1 'pruned the oldest' "$TMP/rec.err" | sed 's/.*pruned/pruned/')" \
	|| bad "nothing pruned under --max-size ${cap_mb}M"
ls "$D" >"$TMP/ls"
n=$(grep -c '^ingero-.*\.db$' "$TMP/ls")
first=$(grep -m1 'recording to .*/ingero-' "$TMP/rec.err" | grep -o 'ingero-[0-9T-]*\.db')
[ "$n" -ge 2 ] && ! grep -qx "$first" "$TMP/ls" && ok "$n files kept, the first ($first) pruned" || bad "files: $(tr '\n' ' ' <"$TMP/ls")"
bytes=$(du -cb "$D" | tail -1 | cut -f1)
[ "$bytes" -le $(((cap_mb + 1) * 1048576)) ] && ok "the directory holds $bytes bytes (cap ${cap_mb}M)" || bad "the directory holds $bytes bytes, over the ${cap_mb}M cap"
# A file's events end from its name's second on and before the next
# boundary (a record handed over late may end up to a second before: the
# replay of a directory merges the files, and picks them with a second's
# margin).
names_ok=1 spans=""
for f in $(grep '^ingero-.*\.db$' "$TMP/ls"); do
	t=$(echo "$f" | sed 's/ingero-\(.*\)T\(..\)-\(..\)-\(..\)\.db/\1T\2:\3:\4Z/')
	s=$(date -d "$t" +%s)
	read -r lo hi < <(sqlite3 -separator ' ' "$D/$f" "SELECT MIN(end_ns) / 1000000, MAX(end_ns) / 1000000 FROM events")
	if [ -z "$lo" ]; then # the next file, made ahead of its boundary
		[ "$f" = "$(grep '^ingero-.*\.db$' "$TMP/ls" | tail -1)" ] || names_ok=0
		spans="$spans $f:empty"
		continue
	fi
	spans="$spans $f:$((lo - s * 1000))..$((hi - s * 1000))ms"
	[ $((s % rot_s)) = 0 ] && [ "$lo" -ge $((s * 1000 - 1000)) ] && [ "$hi" -lt $((s * 1000 + rot_s * 1000 + 100)) ] || names_ok=0
done
[ $names_ok = 1 ] && ok "files start on ${rot_s} s boundaries, named by them, and hold their ${rot_s} s:$spans" || bad "file names or spans:$spans"

# Each file is a recording: sound, its events in its span.
all_ok=1
for f in $(grep '^ingero-.*\.db$' "$TMP/ls"); do
	[ "$(sqlite3 "$D/$f" 'PRAGMA integrity_check')" = ok ] || all_ok=0
done
[ $all_ok = 1 ] && ok "every file passes integrity_check (the last one after kill -9, with its WAL)" || bad "integrity_check"

# Replay the directory at a second in the middle of the oldest file kept
# (a whole one: the first, partial, file was pruned), and across its end.
[ "$n" -ge 2 ] || { bad "too few files kept to replay across them: $n"; finish; }
f2=$(grep '^ingero-.*\.db$' "$TMP/ls" | sed -n '1p')
t2=$(echo "$f2" | sed 's/ingero-\(.*\)T\(..\)-\(..\)-\(..\)\.db/\1T\2:\3:\4Z/')
S=$(($(date -d "$t2" +%s) + 2))
iso=$(date -u -d "@$S" +%Y-%m-%dT%H:%M:%SZ)
until_iso=$(date -u -d "@$S" +%Y-%m-%dT%H:%M:%S).999999999Z
sql_calls() { # the calls of [S, S+1) in file $1: rows and summarised
	sqlite3 "$1" "SELECT (SELECT COUNT(*) FROM events WHERE source IN (1, 4) AND end_ns >= ${S}000000000 AND end_ns < $((S + 1))000000000)
		+ (SELECT COALESCE(SUM(calls), 0) FROM ingero_top_summaries WHERE to_ns >= ${S}000000000 AND to_ns < $((S + 1))000000000)"
}
want=0
for f in $(grep '^ingero-.*\.db$' "$TMP/ls"); do want=$((want + $(sql_calls "$D/$f"))); done
replay_calls() { awk '/^OP /{t=1; next} t && NF == 0 {exit} t {s += $2} END {print s + 0}' "$1"; }
"$IG" --batch --summary --replay "$D" --since "$iso" --until "$until_iso" >"$TMP/rp.txt" 2>"$TMP/rp.err"
expect_eq "replay DIR --since $iso: exit status" "$?" 0
expect_eq "replay DIR opens the one file that holds $iso" "$(grep '^replay: ' "$TMP/rp.txt" | sed 's/^replay: \([^ ]*\).*/\1/' | tr '\n' ' ')" "$D/$f2 "
[ "$want" -gt 100 ] && expect_eq "replay DIR --since $iso: the second's calls = SQL count" "$(replay_calls "$TMP/rp.txt")" "$want" \
	|| bad "too few calls in the second $iso: $want"
grep -q "^replay $iso \.\. $iso" "$TMP/rp.txt" && ok "the replay's range is the second asked" || bad "replay range: $(grep '^replay ' "$TMP/rp.txt")"
"$IG" --batch --summary --replay "$D/*.db" --since "$iso" --until "$until_iso" >"$TMP/rpg.txt" 2>/dev/null
expect_eq "replay 'DIR/*.db' (a glob): the same calls" "$(replay_calls "$TMP/rpg.txt")" "$want"
# Across a boundary: the last 2 s of one file and the first 2 s of the next.
b=$(($(date -d "$t2" +%s) + rot_s))
across=0
for f in $(grep '^ingero-.*\.db$' "$TMP/ls"); do
	across=$((across + $(sqlite3 "$D/$f" "SELECT (SELECT COUNT(*) FROM events WHERE source IN (1, 4) AND end_ns >= $((b - 2))000000000 AND end_ns < $((b + 2))000000000)
		+ (SELECT COALESCE(SUM(calls), 0) FROM ingero_top_summaries WHERE to_ns >= $((b - 2))000000000 AND to_ns < $((b + 2))000000000)")))
done
"$IG" --batch --summary --replay "$D" --since "$((b - 2))000000000" --until "$((b + 2))000000000" >"$TMP/rpx.txt" 2>/dev/null
expect_eq "replay across a file boundary: $(grep -c '^replay: ' "$TMP/rpx.txt") files, calls = SQL count" "$(replay_calls "$TMP/rpx.txt")" "$across"

# kill -9: every call the workload made up to 1 s before the kill is there.
# From the oldest file kept (after the progress line before its start) to
# the last progress line at least 1 s before the kill.
oldest=$(grep -m1 '^ingero-.*\.db$' "$TMP/ls")
o_ns=$(sqlite3 "$D/$oldest" "SELECT MIN(end_ns) FROM events WHERE source IN (1, 4)")
read -r a_ns a_n < <(awk -v t="$o_ns" '$1 >= t {print; exit}' "$TMP/progress")
read -r k_ns k_n < <(awk -v t="$((kill_ns - 1000000000))" '$1 <= t {l = $0} END {print l}' "$TMP/progress")
low=0 high=0
for f in $(grep '^ingero-.*\.db$' "$TMP/ls"); do
	read -r l h < <(sqlite3 -separator ' ' "$D/$f" "SELECT
		(SELECT COUNT(*) FROM events WHERE source IN (1, 4) AND end_ns > $a_ns AND end_ns <= $k_ns)
		+ (SELECT COALESCE(SUM(calls), 0) FROM ingero_top_summaries WHERE from_ns > $a_ns AND to_ns <= $k_ns),
		(SELECT COALESCE(SUM(calls), 0) FROM ingero_top_summaries WHERE (from_ns <= $a_ns AND to_ns > $a_ns) OR (from_ns <= $k_ns AND to_ns > $k_ns))")
	low=$((low + l)) high=$((high + h))
done
want=$((k_n - a_n))
[ "$want" -gt 1000 ] && [ "$low" -le "$want" ] && [ "$want" -le $((low + high)) ] \
	&& ok "kill -9: the files hold the workload's $want calls up to 1 s before the kill (rows and runs: $low..$((low + high)))" \
	|| bad "kill -9: the workload made $want calls from $a_ns to $k_ns; the files hold $low..$((low + high))"
last=$(for f in $(grep '^ingero-.*\.db$' "$TMP/ls"); do sqlite3 "$D/$f" "SELECT COALESCE(MAX(end_ns), 0) FROM events"; done | sort -n | tail -1)
lost_ms=$(((kill_ns - last) / 1000000))
[ "$lost_ms" -le 1000 ] && ok "kill -9: the newest event in the files is ${lost_ms} ms before the kill" || bad "kill -9: the newest event is ${lost_ms} ms before the kill"

# A full disk (a 2 MiB tmpfs): said on one line, collection goes on, a
# new file is tried at the next boundary, SIGINT ends it.
mkdir "$TMP/full" && mount -t tmpfs -o size=2M tmpfs "$TMP/full" || { bad "cannot mount a tmpfs"; finish; }
cleanup_hooks+=("umount '$TMP/full' 2>/dev/null")
"$IG" record --dir "$TMP/full/d" --rotate 2s --max-size 20M --no-system-libs -- \
	"$WL" --iters $((iters + 1)) --kernels 2 --sleep-us 100 2>"$TMP/full.err" &
rec=$!
for _ in $(seq 1 150); do grep -q "cannot record to .*disk is full" "$TMP/full.err" && break; sleep 0.1; done
kill -0 $rec 2>/dev/null && ok "a full disk: the recorder runs on" || bad "a full disk: the recorder died: $(tail -2 "$TMP/full.err")"
kill -INT $rec; wait $rec
st=$? # 1 when the file being written at the end had stopped, 0 when none was
[ $st = 0 ] || [ $st = 1 ] && ok "a full disk: SIGINT ends it (exit $st)" || bad "a full disk: exit $st"
grep -q "^ingero-top record: recording to .* stopped: cannot commit: database or disk is full (No space left on device) (trying again with the next file)$" "$TMP/full.err" \
	&& ok "a full disk: one line says so: $(grep -m1 'disk is full' "$TMP/full.err" | cut -c1-90)..." || bad "a full disk: $(cat "$TMP/full.err")"
grep -q "cannot record to .*disk is full (trying again with the next file)" "$TMP/full.err" && ok "a full disk: a new file is tried at the next boundary" || bad "no retry"
umount "$TMP/full"
finish
