#!/usr/bin/env bash
# The fleet client (--ssh) against tests/fleet/fake_ssh.sh, a stand-in ssh
# that plays a host per name (no sshd, no root, no BPF): every state and
# reason of docs/fleet.md, a silent host and a 5 MiB line that stall no
# one, the concurrency bound, the back-off, the cross-host straggler under a
# 5 s clock skew, the remote command's quoting, --record DIR, explain
# --ssh, the option errors, and no ssh process left behind after SIGTERM.
. "$(dirname "$0")/lib.sh"

FAKE=$ROOT/tests/fleet/fake_ssh.sh
S=$$ # in every host name: this run's fake processes, and only them
fleet() { "$IG" --ssh-program "$FAKE" "$@"; }
leftovers() { pgrep -f "fake_ssh.sh.*-$S" || true; }

# Starts the fleet in the background writing JSON every 0.2 s to $TMP/$1.json.
start() { # name, args...
	local n=$1
	shift
	"$IG" --ssh-program "$FAKE" "$@" --json -d 0.2 >"$TMP/$n.json" 2>"$TMP/$n.err" &
	echo $! >"$TMP/$n.pid"
}
stop() { # name: SIGTERM, its exit status in $TMP/name.rc
	local pid
	pid=$(cat "$TMP/$1.pid")
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	echo $? >"$TMP/$1.rc"
}
cleanup_hooks+=('for p in "$TMP"/*.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null; done')

# check NAME PYTHON-EXPR: the last whole JSON line of NAME satisfies the
# expression (h: host name -> host object, o: the object).
check() {
	python3 - "$TMP/$1.json" "$2" "$S" <<'PY' 2>/dev/null
import json, sys
lines = [l for l in open(sys.argv[1]).read().split("\n")[:-1] if l]
o = json.loads(lines[-1])
h = {x["host"].replace("-" + sys.argv[3], ""): x for x in o["hosts"]}
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
expect() { # name, description, expression
	if wait_until 60 check "$1" "$3"; then ok "$2"; else bad "$2: $(tail -n 1 "$TMP/$1.json" | head -c 3000)"; fi
}

# --- every state and reason ----------------------------------------------------
hosts=""
for n in live hog down hostkey denied missing older nosudo error v2 silent huge ends stall mute; do
	hosts+="${hosts:+,}$n-$S"
done
start states --ssh "$hosts"
expect states "live hosts read" 'h["live"]["state"] == "live" and h["live"]["frames"] >= 2 and h["live"]["version"] == "0.1.0"'
expect states "a frame's numbers" 'h["live"]["procs"][0]["pid"] == 4242 and h["live"]["procs"][0]["gpu_pct"] == 61.5 and h["live"]["procs"][0]["pre_pct"] is None and h["live"]["drops"] == 3 and h["live"]["gpu"]["util_pct"] == 87'
expect states "p99 and the previous frame's" 'h["live"]["procs"][0]["p99_ns"] - h["live"]["procs"][0]["p99_prev_ns"] == 1000000'
expect states "the clock measured" 'h["live"]["clock"] is not None and h["live"]["clock"]["unc_ns"] > 0'
expect states "a chain: worst first" 'o["hosts"][0]["host"].startswith("hog") and h["hog"]["chains"][0]["class"] == "cpu_contention" and h["hog"]["chains"][0]["impact"] == 0.71'
expect states "unreachable: ssh's words" "h['down']['state'] == 'unreachable' and h['down']['why'] == 'ssh: connect to host down-$S port 22: Connection refused'"
expect states "host key: refused" 'h["hostkey"]["state"] == "refused" and h["hostkey"]["why"] == "host key does not match known_hosts: refused (ssh said: Host key verification failed.)"'
expect states "authentication: refused" "h['denied']['state'] == 'refused' and h['denied']['why'].startswith('authentication refused (BatchMode: no password prompt; ssh said: root@denied-$S: Permission denied')"
expect states "not installed: failed" 'h["missing"]["state"] == "failed" and h["missing"]["why"] == "ingero-top is not installed there (not on the remote PATH)"'
expect states "older: failed" 'h["older"]["state"] == "failed" and h["older"]["why"] == "ingero-top there is older (no --stream; stream 1 needed)"'
expect states "no sudo: failed" 'h["nosudo"]["state"] == "failed" and h["nosudo"]["why"] == "sudo -n refused: no passwordless sudo for ingero-top (sudo said: sudo: a password is required)"'
expect states "an error line: failed with it" 'h["error"]["state"] == "failed" and h["error"]["why"] == "cannot trace: not root (run it with sudo, or --ssh-sudo)"'
expect states "stream 2: version mismatch" 'h["v2"]["state"] == "failed" and h["v2"]["why"] == "version mismatch: ingero-top there speaks stream 2, this one 1: install the same version on both"'
expect states "a 5 MiB line dropped, the host live" 'h["huge"]["state"] == "live" and h["huge"]["lines_dropped"] == 1 and h["huge"]["frames"] >= 2'
expect states "a session that ends: ended" 'h["ends"]["state"] == "ended" and h["ends"]["why"] == "command exited 0" and h["ends"]["frames"] == 2'
expect states "a silent host stays connecting" 'h["silent"]["state"] == "connecting" and h["silent"]["connects"] == 1'
expect states "a host without frames: stale" 'h["stall"]["state"] == "stale" and h["stall"]["why"].startswith("no frame for")'
expect states "a hello and no frame: stale, since the hello" 'h["mute"]["state"] == "stale" and h["mute"]["why"].startswith("no frame for") and h["mute"]["why"].endswith("since the hello")'
expect states "unreachable reconnects with back-off" 'h["down"]["connects"] >= 3'
expect states "refused is not retried at once" 'h["hostkey"]["connects"] == 1 and h["denied"]["connects"] == 1'
expect states "failed is never retried" 'h["missing"]["connects"] == 1 and h["older"]["connects"] == 1 and h["v2"]["connects"] == 1'
stop states
expect_eq "SIGTERM: exit status" "$(cat "$TMP/states.rc")" 0
expect_eq "SIGTERM: no ssh left" "$(leftovers)" ""
[ -s "$TMP/states.err" ] && bad "stderr: $(head -c 300 "$TMP/states.err")"

# --- at most --ssh-jobs connecting ---------------------------------------------------
start jobs --ssh "silent-a-$S,silent-b-$S,live-c-$S" --ssh-jobs 1
expect jobs "one connection at a time" 'h["silent-a"]["connects"] == 1 and h["silent-b"]["connects"] == 0 and h["live-c"]["connects"] == 0'
stop jobs
expect_eq "jobs: no ssh left" "$(leftovers)" ""

# --- the straggler: rank 1 is 50 ms late, its clock 5 s ahead ------------------------
start nccl --ssh "nccl-0-3-$S,nccl-1-3-slow-skew-$S,nccl-2-3-$S"
expect nccl "straggler: rank 1 on its host" "o['straggler'] and o['straggler']['rank'] == 1 and o['straggler']['host'] == 'nccl-1-3-slow-skew-$S' and o['straggler']['key'] == 1715004"
expect nccl "straggler: last in every collective, ~49 ms after the others' median" 'o["straggler"]["collectives"] >= 10 and o["straggler"]["last_count"] == o["straggler"]["collectives"] and abs(o["straggler"]["late_mean_ns"] - 49e6) <= 2 * o["straggler"]["unc_ns"] + 3e6'
expect nccl "straggler: host marked and first" 'o["hosts"][0]["straggler"] and o["straggler"]["unc_ns"] > 0'
expect nccl "the 5 s clock offset measured" 'abs(h["nccl-1-3-slow-skew"]["clock"]["offset_ns"] - 5e9) < 1e9'
stop nccl

# --- the batch table -----------------------------------------------------------------
"$IG" --ssh-program "$FAKE" --ssh "live-a-$S,nccl-0-2-$S,nccl-1-2-slow-$S,down-b-$S" --batch -d 0.3 \
	>"$TMP/batch.txt" 2>&1 &
echo $! >"$TMP/batch.pid"
wait_until 60 grep -q "^straggler: rank 1 " "$TMP/batch.txt"
stop batch
expect_eq "batch: exit after SIGTERM" "$(cat "$TMP/batch.rc")" 0
# the last whole table (each ends with a blank line) that names the straggler
awk -v RS= '/\nstraggler: rank 1 / { t = $0 } END { print t }' "$TMP/batch.txt" >"$TMP/last.txt"
if grep -qE "^straggler: rank 1 of comm 0x1a2b3c on nccl-1-2-slow-$S \(pid [0-9]+\): last in [0-9]+ of [0-9]+ collectives, [0-9.]+ms after the others' median \(clock ±[0-9.]+[mu]?s\)$" "$TMP/last.txt"; then
	ok "batch: the straggler line"
else bad "batch: the straggler line: $(cat "$TMP/last.txt")"; fi
grep -q "^HOST  *STATE  *GPU%  *CPU%  *PRE%  *WAIT%  *OP  *P99 (change)  *GPU-UTIL  *MEM  *CHAIN  *DROPS$" "$TMP/last.txt" &&
	ok "batch: the header" || bad "batch: the header: $(cat "$TMP/last.txt")"
grep -q "^\*nccl-1-2-slow-$S  *live " "$TMP/last.txt" && ok "batch: straggler marked" || bad "batch: no marked row"
# (between its tries it may be connecting again, with the same why)
grep -qE "^down-b-$S  *(unreachable|connecting ) ssh: connect to host down-b-$S port 22: Connection refused$" "$TMP/last.txt" &&
	ok "batch: why of an unreachable host" || bad "batch: unreachable row: $(cat "$TMP/last.txt")"

# every host failed: the table once, exit 1
fleet --ssh "missing-a-$S,older-b-$S" --batch -d 0.2 >"$TMP/fail.txt" 2>&1
expect_eq "all failed: exit" $? 1
expect_eq "all failed: one table" "$(grep -c '^ingero-top fleet ' "$TMP/fail.txt")" 1

# an ssh that cannot be run: failed, with why
"$IG" --ssh "live-p-$S" --ssh-program "$TMP/no-ssh" --batch -d 0.2 >"$TMP/nossh.txt" 2>&1
expect_eq "no ssh program: exit" $? 1
grep -q "^live-p-$S  *failed  *cannot run $TMP/no-ssh: No such file or directory$" "$TMP/nossh.txt" &&
	ok "no ssh program: why" || bad "no ssh program: $(cat "$TMP/nossh.txt")"

# --- the remote command line: one string, each word quoted ----------------------------
cat >"$TMP/remote.sh" <<EOF
#!/bin/sh
for a in "\$@"; do printf '[%s]' "\$a"; done >"$TMP/remote.args"
echo '{"type":"hello","stream":1,"version":"0.1.0","host":"x","interval_s":1}'
echo '{"type":"end","stream":1,"reason":"command exited 0","exit":0}'
EOF
chmod +x "$TMP/remote.sh"
fleet --ssh "local-q-$S" --ssh-remote "$TMP/remote.sh" --batch -n 1 -d 0.2 --window 5 -- \
	python3 "my run" "it's" '$(touch x)' >/dev/null 2>&1
expect_eq "quoting: the remote's argv" "$(cat "$TMP/remote.args" 2>/dev/null)" \
	"[--stream][-d][0.2][--window][5][--][python3][my run][it's][\$(touch x)]"

# --- --record DIR: each host's file copied back, 0600, the remote one removed ----------
mkdir -m 700 "$TMP/rec"
fleet --ssh "live-r1-$S,admin@live-r2-$S:2222,down-r3-$S,a@live-r4-$S,b@live-r4-$S" --record "$TMP/rec" \
	--batch -n 2 -d 0.2 >/dev/null 2>"$TMP/rec.err"
expect_eq "record: exit (one host unreachable)" $? 1
expect_eq "record: one name, two users" "$(cat "$TMP/rec/a_live-r4-$S.db" "$TMP/rec/b_live-r4-$S.db" 2>/dev/null)" \
	"recording of live-r4-$S
recording of live-r4-$S"
expect_eq "record: live-r1" "$(cat "$TMP/rec/live-r1-$S.db" 2>/dev/null)" "recording of live-r1-$S"
expect_eq "record: live-r2 (port in the name)" "$(cat "$TMP/rec/live-r2-${S}_2222.db" 2>/dev/null)" \
	"recording of live-r2-$S"
expect_eq "record: mode" "$(stat -c %a "$TMP/rec/live-r1-$S.db" 2>/dev/null)" 600
expect_eq "record: no remote file left" "$(ls /tmp/ingero-fleet-*-*.db 2>/dev/null | grep -c "$(hostname)")" 0
grep -q "^ingero-top: down-r3-$S: no recording (ssh: connect to host" "$TMP/rec.err" &&
	ok "record: the host without one says why" || bad "record: stderr: $(cat "$TMP/rec.err")"
grep -q "^ingero-top: 4 of 5 recordings copied to $TMP/rec$" "$TMP/rec.err" &&
	ok "record: the count" || bad "record: stderr: $(cat "$TMP/rec.err")"

# --- explain --ssh ---------------------------------------------------------------------------
"$IG" explain --ssh "hog-x-$S,live-y-$S,down-z-$S" --ssh-program "$FAKE" --seconds 2 -d 0.2 \
	>"$TMP/ex.txt" 2>"$TMP/ex.err"
expect_eq "explain: exit" $? 0
grep -q "^  host hog-x-$S costs the most$" "$TMP/ex.txt" && ok "explain: the verdict's host" ||
	bad "explain: $(head -20 "$TMP/ex.txt")"
grep -q "^  why: HIGH cpu_contention 71% by stress-ng\[2231\]: cudaStreamSynchronize p99 142ms" "$TMP/ex.txt" &&
	ok "explain: why" || bad "explain: why: $(head -20 "$TMP/ex.txt")"
grep -q "^  what to do: move stress-ng off the GPU feeding CPUs$" "$TMP/ex.txt" && ok "explain: what to do" ||
	bad "explain: advice"
expect_eq "explain: a section per host" "$(grep -c '^== ' "$TMP/ex.txt")" 3
"$IG" explain --ssh "nccl-0-2-$S,nccl-1-2-slow-$S,hog-x-$S" --ssh-program "$FAKE" --seconds 3 -d 0.2 \
	--json >"$TMP/ex.json" 2>/dev/null
if python3 - "$TMP/ex.json" "$S" <<'PY'; then ok "explain --json: the straggler's host"; else bad "explain --json: $(head -c 600 "$TMP/ex.json")"; fi
import json, sys
o = json.load(open(sys.argv[1]))
v = o["verdict"]
assert o["type"] == "fleet_explain" and v["kind"] == "straggler", v
assert v["host"] == "nccl-1-2-slow-" + sys.argv[2], v
assert o["fleet"]["straggler"]["rank"] == 1
PY
expect_eq "explain: no ssh left" "$(leftovers)" ""

# --- option errors: one line, exit 2 ---------------------------------------------------------
opt_err() { # description, expected line, args...
	local d=$1 want=$2
	shift 2
	"$IG" "$@" >"$TMP/o.out" 2>"$TMP/o.err"
	local rc=$?
	if [ $rc = 2 ] && [ "$(cat "$TMP/o.err")" = "$want" ] && [ ! -s "$TMP/o.out" ]; then ok "error: $d"
	else bad "error: $d: rc $rc: $(cat "$TMP/o.err")"; fi
}
opt_err "empty item" "ingero-top: --ssh: an empty host in the list" --ssh a,,b --batch
opt_err "bad port" "ingero-top: --ssh: invalid host 'a:0': bad port (a number from 1 to 65535)" --ssh a:0 --batch
opt_err "an option as a host" "ingero-top: --ssh: invalid host '-oProxyCommand=x': a host name cannot start with '-'" --ssh=-oProxyCommand=x --batch
opt_err "--ssh-jobs 0" "ingero-top: invalid --ssh-jobs '0': expected a whole number from 1 to 256 (see ingero-top --help)" --ssh a --ssh-jobs 0 --batch
opt_err "an option not forwarded" "ingero-top: invalid option '--replay': not an option of --ssh (docs/fleet.md lists them) (see ingero-top --help)" --ssh a --replay x.db
opt_err "-n alone" "ingero-top: -n counts the tables of --batch or --json" --ssh a -n 3
opt_err "two targets" "ingero-top: give one of --pid, --demo or -- CMD (each host runs it)" --ssh a --pid 1 --demo --batch
opt_err "a bad pid list" "ingero-top: invalid --pid '1,,2': expected process ids separated by commas (see ingero-top --help)" --ssh a --pid 1,,2 --batch
opt_err "--record not a directory" "ingero-top: invalid --record '$TMP/nope': with --ssh, a directory that exists (DIR/HOST.db) (see ingero-top --help)" --ssh a --record "$TMP/nope" --batch
opt_err "no terminal for the screen" "ingero-top: the fleet screen needs a terminal; use --batch or --json" --ssh a </dev/null
opt_err "explain: --batch" "ingero-top explain: invalid option '--batch': not an option of explain --ssh (see ingero-top explain --help)" explain --ssh a --batch
printf '# c\n\nbad host\n' >"$TMP/hosts"
opt_err "hosts file line" "ingero-top: $TMP/hosts:3: invalid host 'bad host': a host name has letters, digits, '.', '-' and '_' only" --hosts-file "$TMP/hosts" --batch

expect_eq "no ssh left at all" "$(leftovers)" ""
finish
