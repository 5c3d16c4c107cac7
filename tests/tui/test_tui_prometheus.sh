#!/usr/bin/env bash
# --prometheus with the full-screen viewer (no root: a replay): the viewer
# publishes the metrics once per refresh; at the end of the recording the
# calls per op on /metrics equal the recording's rows; idle clients holding
# every connection slot neither freeze the screen nor the keys, and a
# scrape still gets through (the reserved slot); q quits and
# frees the port. Then the option errors: a bad address or a lone
# --prometheus-procs exit 2 with one line, a taken port exits 1.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
command -v curl >/dev/null || skip "curl is not installed"
DB=$TUI_ROOT/tests/scenarios/cpu-contention.db
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT/metrics

start 120 40 "$IG" --speed 0 --prometheus "127.0.0.1:$PORT" --replay "$DB"
wait_for 'REPLAY' 10
ok "the viewer runs with --prometheus"
# calls per op of the recording, as /metrics must have them at its end
sqlite3 "$DB" "SELECT o.name, COUNT(*) FROM events e JOIN ops o ON o.source_id = e.source AND
	o.op_id = e.op WHERE e.source IN (1, 4) GROUP BY o.name" | tr '|' ' ' |
	sed -e 's/^cudaStreamSync /cudaStreamSynchronize /' -e 's/^cudaDeviceSync /cudaDeviceSynchronize /' |
	sort >"$TMPD/want"
have() {
	curl -s "$URL" >"$TMPD/scrape" || return 1
	awk '/^ingero_top_cuda_calls_total\{/ { match($0, /op="[^"]*"/); op = substr($0, RSTART + 4, RLENGTH - 5)
		c[op] += $NF } END { for (o in c) print o, c[o] }' "$TMPD/scrape" | sort >"$TMPD/got"
	cmp -s "$TMPD/want" "$TMPD/got"
}
for ((i = 0; i < 600; i++)); do have && break; sleep 0.1; done
cmp -s "$TMPD/want" "$TMPD/got" && ok "/metrics: calls per op = the recording's ($(wc -l <"$TMPD/want") ops)" ||
	fail "calls on /metrics differ: $(diff "$TMPD/want" "$TMPD/got" | head -20)"
grep -q '^ingero_top_build_info{version="[^"]*",mode="replay"} 1$' "$TMPD/scrape" && ok "build_info mode=replay" ||
	fail "build_info"
# eight idle clients take every slot: the viewer still answers keys (the
# clients hold them until the test is done; it waits until all eight are
# connected and the server has taken them)
python3 - "$PORT" "$TMPD/held" "$TMPD/release" <<'PY' &
import os, socket, sys, time
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(8)]
open(sys.argv[2], "w").close()
for _ in range(600):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.1)
PY
idle=$!
for ((i = 0; i < 600; i++)); do [ -e "$TMPD/held" ] && break; sleep 0.1; done
[ -e "$TMPD/held" ] || fail "eight idle clients could not connect"
# the server takes them on its next poll: a ninth idle connection, polled,
# gets 503 from the reserved slot once the eight hold the others
python3 - "$PORT" <<'PY' && ok "a ninth idle client gets 503 while eight idle ones hold the slots" || fail "no 503 for a ninth idle client"
import socket, sys
for _ in range(100):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.settimeout(60)
    try:
        data = s.recv(64)
    except OSError:
        data = b""
    s.close()
    if data.startswith(b"HTTP/1.1 503"):
        sys.exit(0)
sys.exit(1)
PY
# a scrape (a whole request at once) still gets through: the reserved slot
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL")
[ "$code" = 200 ] && ok "a scrape gets 200 while eight idle clients hold the slots" || fail "scrape: $code"
keys F1
expect 'help \(replay mode\)' "F1 opens the help while the slots are held"
keys Escape
touch "$TMPD/release"
wait $idle
keys q
wait_exit 10
[ "$(cat "$TMPD/status")" = 0 ] && ok "q quits with status 0" || fail "exit status $(cat "$TMPD/status")"
curl -s -o /dev/null "$URL" && fail "the port is still served after the viewer quit" || ok "the port is closed after q"
stop

# option errors: one line, exit 2 (usage) or 1 (the port is taken)
err() { # want-status, args...
	local want=$1
	shift
	"$IG" "$@" >"$TMPD/o" 2>"$TMPD/e"
	local rc=$?
	[ $rc = "$want" ] && [ "$(wc -l <"$TMPD/e")" = 1 ] || fail "$*: exit $rc, stderr: $(cat "$TMPD/e")"
	ok "$* -> exit $rc: $(cat "$TMPD/e")"
}
err 2 --batch --replay "$DB" --prometheus 99999
err 2 --batch --replay "$DB" --prometheus ':9400'
err 2 --batch --replay "$DB" --prometheus '::1:9400'
err 2 --batch --replay "$DB" --prometheus-procs 3
err 2 --batch --replay "$DB" --prometheus 0 --prometheus-procs 0
python3 -u -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); print(s.getsockname()[1]); time.sleep(30)' \
	>"$TMPD/taken" &
holder=$!
for ((i = 0; i < 100; i++)); do [ -s "$TMPD/taken" ] && break; sleep 0.1; done
err 1 --batch --replay "$DB" --prometheus "127.0.0.1:$(cat "$TMPD/taken")"
kill $holder 2>/dev/null
exit 0
