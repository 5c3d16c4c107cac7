#!/usr/bin/env bash
# needs: root
# The streaming mode (--stream, docs/json.md "Stream") as the fleet's client
# drives it: stdin a pipe it writes pings to, stdout read line by line.
# A two-rank NCCL workload (the shim): the hello first (stream 1, this
# version), frames numbered 1..N, each ping answered with its id, per rank
# the arrivals of every frame together contiguous from 1, exactly the
# workload's number of collectives, none lost, the last frame done and the
# end line with the command's exit; --record writes the run. What the
# command prints on stdout goes to stderr. Closing stdin
# ends a stream within a bounded poll (its command stopped), SIGTERM ends
# one with reason "signal"; as nobody a live stream prints the hello and the
# error line and exits 1; a shipped recording streams without root, and a
# reader that goes away (EPIPE) ends it.
. "$(dirname "$0")/lib.sh"
need_root

VERSION=$("$IG" --version | awk '{print $2}')
ITERS=300

# start NAME ARGS...: ingero-top --stream ARGS with stdin the fifo
# $TMP/NAME.in (held open on fd 3 here), stdout $TMP/NAME.out; PID in IGPID.
start() {
	local name=$1; shift
	mkfifo "$TMP/$name.in"
	"$IG" --stream "$@" <"$TMP/$name.in" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	IGPID=$!
	exec 3>"$TMP/$name.in"
}
# has_line FILE PATTERN: a line of FILE matches (grep -E).
has_line() { grep -qE -- "$2" "$1" 2>/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }

# --- a two-rank NCCL run, to its end ---------------------------------------------
start nccl -d 0.5 --no-system-libs --record "$TMP/nccl.db" -- "$WL" --iters $ITERS --kernels 1 \
	--kernel-us 10000 --nccl --fork --nccl-ops allreduce --nccl-types float32 \
	--expect "$TMP/nccl.expect"
wait_until 60 has_line "$TMP/nccl.out" '"type":"hello"' || bad "no hello"
for id in 1 2 3; do
	echo "{\"type\":\"ping\",\"id\":$id}" >&3
	wait_until 30 has_line "$TMP/nccl.out" "\"type\":\"pong\",\"stream\":1,\"id\":$id," ||
		bad "ping $id: no pong"
	wait_until 30 lines_at_least "$TMP/nccl.out" '"type":"frame"' $((id + 1)) || true
done
echo 'not json, and a request of a later version:' >&3
echo '{"type":"request","id":9,"what":"stacks"}' >&3
wait_until 120 gone "$IGPID" || bad "the stream did not end with its command"
wait "$IGPID"
expect_eq "exit status (the command's)" "$?" 0
exec 3>&-
WANT=$(awk '$1 == "ncclAllReduce" {print $2}' "$TMP/nccl.expect")
expect_eq "the workload's collectives (both ranks)" "$WANT" $((2 * ITERS))
python3 - "$TMP/nccl.out" "$VERSION" "$ITERS" >"$TMP/nccl.check" 2>&1 <<'PY'
import json, sys
out, version, iters = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = [json.loads(l) for l in open(out)]
def say(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
h = lines[0]
say(h["type"] == "hello" and h["stream"] == 1 and h["version"] == version and
    h["target"].startswith("command ") and h["interval_s"] == 0.5, "hello first: stream 1, version " + version)
say(all(o["stream"] == 1 for o in lines), "every line has stream 1")
frames = [o for o in lines if o["type"] == "frame"]
say([f["seq"] for f in frames] == list(range(1, len(frames) + 1)) and len(frames) >= 3,
    "frames seq 1..%d" % len(frames))
pongs = [o["id"] for o in lines if o["type"] == "pong"]
say(pongs == [1, 2, 3], "pongs echo the ids: %s" % pongs)
say(all(not f["status"]["done"] for f in frames[:-1]) and frames[-1]["status"]["done"],
    "the last frame, only it, says done")
end = lines[-1]
say(end["type"] == "end" and end["reason"] == "command exited 0" and end["exit"] == 0,
    "end: %s" % json.dumps(end))
ranks = {}
for f in frames:
    for r in f.get("nccl", []):
        k = (r["pid"], r["key"], r["rank"])
        e = ranks.setdefault(k, {"seqs": [], "ns": [], "lost": 0, "seq": 0, "nranks": r["nranks"]})
        e["seqs"] += [a[0] for a in r["arrivals"]]
        e["ns"] += [a[1] for a in r["arrivals"]]
        e["lost"] += r["arrivals_lost"]
        e["seq"] = r["seq"]
say(len(ranks) == 2 and sorted(k[2] for k in ranks) == [0, 1] and len({k[1] for k in ranks}) == 1
    and all(e["nranks"] == 2 for e in ranks.values()), "two ranks of one communicator: %s" % list(ranks))
for k, e in sorted(ranks.items()):
    say(e["seqs"] == list(range(1, iters + 1)) and e["lost"] == 0 and e["seq"] == iters,
        "rank %d (pid %d): arrivals 1..%d contiguous over the frames, none lost (got %d, lost %d)" %
        (k[2], k[0], iters, len(e["seqs"]), e["lost"]))
    say(e["ns"] == sorted(e["ns"]) and e["ns"][0] >= h["realtime_ns"] - 10**9,
        "rank %d: entry times in order, after the hello" % k[2])
def adds_up(p):
    v = [p[k] for k in ("gpu_pct", "cpu_pct", "pre_pct", "wait_pct") if p[k] is not None]
    return p["gpu_pct"] is None or abs(sum(v) - 100) < 0.01
say(all(adds_up(p) for f in frames for p in f["procs"]) and
    any(len(f["procs"]) == 2 and all(p["gpu_pct"] is not None for p in f["procs"]) for f in frames),
    "the two processes, their four shares adding up to 100")
PY
cat "$TMP/nccl.check"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/nccl.check")))
[ "$FAILS" = 0 ] || { echo "stderr:"; cat "$TMP/nccl.err"; }
n=$("$IG" --batch --json --summary --replay "$TMP/nccl.db" 2>/dev/null | python3 -c '
import json, sys
f = [json.loads(l) for l in sys.stdin][-1]
print(sum(o["calls"] for o in f["ops"] if o["op"] == "ncclAllReduce"))')
expect_eq "--record: the recording's collectives" "$n" $((2 * ITERS))

# --- stdin closed, and a signal: the end within a bounded poll -------------------
for how in stdin signal; do
	# (what the command prints on its stdout goes to stderr, not between the lines)
	start "$how" -d 0.5 --no-system-libs -- sh -c 'echo "words on stdout"; exec "$0" "$@"' "$WL" \
		--iters 100000 --kernels 1 --kernel-us 1000
	wait_until 60 lines_at_least "$TMP/$how.out" '"type":"frame"' 1 || bad "$how: no frame"
	wl=$(pgrep -P "$IGPID" | head -1)
	if [ "$how" = stdin ]; then exec 3>&-; else kill -TERM "$IGPID"; fi
	wait_until 30 gone "$IGPID" || bad "$how: still running"
	wait "$IGPID"
	expect_eq "$how: exit status" "$?" 0
	want=$([ "$how" = stdin ] && echo "stdin closed" || echo "signal")
	tail -1 "$TMP/$how.out" | grep -q "^{\"type\":\"end\",\"stream\":1,\"reason\":\"$want\",\"exit\":0}$" &&
		ok "$how: the end line says '$want'" || bad "$how: last line $(tail -1 "$TMP/$how.out")"
	[ -z "$wl" ] || wait_until 30 gone "$wl" && ok "$how: its command is gone" ||
		bad "$how: the workload $wl is still running"
	python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$TMP/$how.out" &&
		grep -q "^words on stdout$" "$TMP/$how.err" &&
		ok "$how: the command's stdout went to stderr, every line on stdout is JSON" ||
		bad "$how: the command's stdout: $(grep -c words "$TMP/$how.out") lines among the stream's"
	exec 3>&-
done

# --- not root: the hello, the error line, exit 1 -----------------------------------
cp "$IG" "$TMP/ingero-top" && chmod 755 "$TMP/ingero-top"
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$TMP/ingero-top" --stream --pid $$ </dev/null >"$TMP/nobody.out" 2>"$TMP/nobody.err"
	expect_eq "not root: exit status" "$?" 1
	sed -n 1p "$TMP/nobody.out" | grep -q '^{"type":"hello","stream":1,"version":"'"$VERSION"'"' &&
		ok "not root: the hello first" || bad "not root: first line $(sed -n 1p "$TMP/nobody.out")"
	msg=$(sed 's/^ingero-top: //' "$TMP/nobody.err")
	line2=$(sed -n 2p "$TMP/nobody.out")
	python3 -c 'import json,sys; o=json.loads(sys.argv[1]); sys.exit(not (o["type"] == "error" and o["stream"] == 1 and o["message"] == sys.argv[2] and "root" in o["message"]))' \
		"$line2" "$msg" && ok "not root: the error line says what stderr says: $msg" ||
		bad "not root: second line $line2 (stderr: $msg)"
	expect_eq "not root: lines on stdout" "$(wc -l <"$TMP/nobody.out")" 2
fi

# --- a shipped recording, without root; a reader that goes away -------------------
# a copy nobody can read (a checkout under a private directory is not)
cp "$ROOT/tests/scenarios/cpu-contention.db" "$TMP/rec.db" && chmod 644 "$TMP/rec.db"
REC=$TMP/rec.db
mkfifo "$TMP/rp.in"
setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/ingero-top" --stream -d 0.2 --speed 1000 \
	--replay "$REC" <"$TMP/rp.in" >"$TMP/rp.out" 2>"$TMP/rp.err" &
IGPID=$!
exec 3>"$TMP/rp.in"
wait_until 120 gone "$IGPID" || bad "replay: did not end"
wait "$IGPID"
expect_eq "replay: exit status" "$?" 0
exec 3>&-
python3 - "$TMP/rp.out" <<'PY' >"$TMP/rp.check"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
frames = [o for o in lines if o["type"] == "frame"]
ok = (lines[0]["type"] == "hello" and lines[0]["target"].startswith("replay ") and frames and
      frames[-1]["status"]["done"] and lines[-1] == {"type": "end", "stream": 1, "reason": "replay ended", "exit": 0}
      and [f["seq"] for f in frames] == list(range(1, len(frames) + 1))
      and any(c["class"] == "cpu_contention" for f in frames for c in f["chains"]))
print(("ok   " if ok else "FAIL ") + "replay as nobody: hello, %d frames, a cpu_contention chain, 'replay ended'" % len(frames))
PY
cat "$TMP/rp.check"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/rp.check")))

mkfifo "$TMP/pipe.in"
( "$IG" --stream -d 0.05 --speed 1 --replay "$REC" <"$TMP/pipe.in" 2>"$TMP/pipe.err"; echo $? >"$TMP/pipe.rc" ) | head -n 3 >"$TMP/pipe.out" &
exec 3>"$TMP/pipe.in"
wait_until 60 test -s "$TMP/pipe.rc" && ok "EPIPE: the stream ended when its reader went away" ||
	bad "EPIPE: still running"
expect_eq "EPIPE: exit status" "$(cat "$TMP/pipe.rc" 2>/dev/null)" 0
exec 3>&-
finish
