#!/usr/bin/env bash
# needs: root
# shares: pool (tests/run.sh: beside the tmux tests; the hog and the late rank
# are made by construction, the checks poll with deadlines)
# The fleet over real OpenSSH (docs/fleet.md): one sshd per simulated host
# on loopback (tests/fleet/sshd_lib.sh), each with its own host key and a
# ForceCommand that gives it a workload (tests/fleet/host_wrap.sh), and
# `ingero-top --ssh` with the system ssh client, our ssh_config, BatchMode.
#
# Run 1 (--ssh, --json): a host with a CPU hog on its workload's CPU (live,
# HIGH cpu_contention by the hog), two hosts each with one rank of one NCCL
# communicator, rank 0 on hnA 10 ms late to every collective (hnA named
# straggler and first), a healthy host (live, no HIGH chain), one whose
# workload ends (ended), an unreachable port, a wrong host key (refused,
# never live, no session in its sshd's log), a password-only sshd (refused
# at once, no hang), no ingero-top there, an older one (both messages) —
# each with the state and the line docs/fleet.md gives.
# Run 2 (--hosts-file, --ssh-sudo, --record DIR, --ssh-program logging
# ssh's argv): root's sudo -n works (live, DIR/hsudo.db copied back and
# replayable, the remote file removed); a user without sudo rights fails.
# Run 3 (--batch text): the reasons as the table prints them.
# After each run: nothing left running on the hosts (stdin EOF ended every
# remote ingero-top, its workload and the hog), failed and ended hosts
# never retried, ssh never told to skip host-key checking.
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/fleet/sshd_lib.sh
. "$ROOT/tests/fleet/sshd_lib.sh"
need_root
pick_cpus 2
CHECK=$ROOT/tests/fleet/fleet_check.py
HOG_CPU=${CPUS[${#CPUS[@]} - 1]} OTHER_CPU=${CPUS[0]}
LATE_US=10000 # rank 0 (host hnA) busy-spins this long before each collective
sshd_setup || { bad "sshd setup"; finish; }
cpus=(--env "HOG_CPU=$HOG_CPU" --env "OTHER_CPU=$OTHER_CPU")
nccl=(--env "NCCL_DIR=$SSHD_DIR/shm" --env "NCCL_ID=$SSHD_DIR/nccl.id" --env NCCL_LATE=0
	--env "NCCL_LATE_US=$LATE_US")
mkdir -p "$SSHD_DIR/shm"
chmod 777 "$SSHD_DIR/shm"
ups=0
sshd_host hhog hog "${cpus[@]}" || ups=1
sshd_host hnA nccl "${cpus[@]}" "${nccl[@]}" --env NCCL_RANK=0 || ups=1
sshd_host hnB nccl "${cpus[@]}" "${nccl[@]}" --env NCCL_RANK=1 || ups=1
sshd_host hok healthy "${cpus[@]}" || ups=1
sshd_host hdie dies "${cpus[@]}" || ups=1
sshd_host hwk healthy "${cpus[@]}" --wrong-key || ups=1
sshd_host huk healthy "${cpus[@]}" --unknown-key || ups=1
sshd_host hpw healthy "${cpus[@]}" --password || ups=1
sshd_host hni noingero || ups=1
sshd_host hold older || ups=1
sshd_host hold2 older --env "OLDER_MSG=ingero-top: unrecognized option '--stream'" || ups=1
sshd_unreachable hun
sshd_user_add || ups=1
sshd_host hnosudo asis --user "$SSHD_USER" || ups=1
sshd_host hsudo healthy "${cpus[@]}" || ups=1
[ $ups = 0 ] && ok "13 sshd hosts up, each with its own host key" || { bad "sshd hosts"; finish; }

# The harness itself: the right key logs in, the others are refused.
out=$(sshd_ssh hok echo hello 2>&1 </dev/null)
expect_eq "harness: ssh -F cfg hok echo hello" "$out" hello
out=$(sshd_ssh hwk echo hello 2>&1 </dev/null)
[[ $out == *"Host key verification failed."* ]] && ok "harness: wrong host key refused by ssh" ||
	bad "harness: wrong key: $out"
out=$(timeout 60 bash -c "ssh -F '$SSHD_CONFIG' -T -o BatchMode=yes hpw -- true" 2>&1 </dev/null)
[[ $out == *"Permission denied (password,keyboard-interactive)."* ]] &&
	ok "harness: password-only host refused under BatchMode" || bad "harness: password: $out"
: >"$SSHD_DIR/hok/commands"

# wait_leftovers RUN: nothing the hosts' sessions started is still running.
no_leftovers() { [ -z "$(sshd_leftovers)" ]; } # looked at again at each try
wait_leftovers() {
	if wait_until 60 no_leftovers; then
		ok "$1: no process left on the hosts (every remote ingero-top ended with its stdin)"
	else
		bad "$1: left running on the hosts: $(sshd_leftovers | xargs -r ps -o pid=,args= -p | tr '\n' ';')"
	fi
}
# fleet_run NAME OUT EXPECT MODE ARGS...: runs the fleet until MODE
# (check|text) says EXPECT holds of its output (FLEET_WAIT s at most: a
# guard, not a speed limit; each host needs an ssh login and, when it
# traces, its probes attached), then ends it with SIGINT; FLEET_RC is its
# exit status.
FLEET_WAIT=${FLEET_WAIT:-150}
FLEET_PID=""
cleanup_hooks+=('[ -n "$FLEET_PID" ] && kill "$FLEET_PID" 2>/dev/null')
fleet_run() {
	local name=$1 out=$2 expect=$3 mode=$4 start=$SECONDS
	shift 4
	"$IG" "$@" >"$out" 2>"$out.err" </dev/null &
	FLEET_PID=$!
	while [ $((SECONDS - start)) -lt "$FLEET_WAIT" ]; do
		python3 "$CHECK" "$mode" "$out" "$expect" --quiet && break
		kill -0 "$FLEET_PID" 2>/dev/null || break
		sleep 1
	done
	kill -INT "$FLEET_PID" 2>/dev/null
	wait "$FLEET_PID"
	FLEET_RC=$?
	FLEET_PID=""
	echo "  $name: the fleet ran $((SECONDS - start)) s; at the end:"
	if [ "$mode" = check ]; then
		python3 "$CHECK" show "$out" | sed 's/^/    /'
	else
		tail -n 8 "$out" | sed 's/^/    /'
	fi
	[ -s "$out.err" ] && sed 's/^/    stderr: /' "$out.err" | tail -5
}

echo "run 1: --ssh, --json"
rm -f "$SSHD_DIR/nccl.id"
cat >"$TMP/run1.expect" <<EOF
{"hosts": {
  "hhog": {"state": "live", "why": "", "straggler": false,
           "chain": {"class": "cpu_contention", "severity": "HIGH", "culprit_comm": "ig-hog"}},
  "hnA": {"state": "live", "why": "", "straggler": true},
  "hnB": {"state": "live", "why": "", "straggler": false},
  "hok": {"state": "live", "why": "", "no_high": true, "straggler": false},
  "hdie": {"state": "ended"},
  "hun": {"state": "unreachable",
          "why": "ssh: connect to host 127.0.0.1 port $(sshd_port hun): Connection refused"},
  "hwk": {"state": "refused",
          "why": "host key does not match known_hosts: refused (ssh said: Host key verification failed.)"},
  "huk": {"state": "refused",
          "why": "host key is not in known_hosts: refused (ssh said: Host key verification failed.)"},
  "hpw": {"state": "refused",
          "why": "authentication refused (BatchMode: no password prompt; ssh said: root@127.0.0.1: Permission denied (password,keyboard-interactive).)"},
  "hni": {"state": "failed", "why": "$IG is not installed there (not on the remote PATH)"},
  "hold": {"state": "failed", "why": "$IG there is older (no --stream; stream 1 needed)"},
  "hold2": {"state": "failed", "why": "$IG there is older (no --stream; stream 1 needed)"}},
 "first": "hnA",
 "straggler": {"host": "hnA", "rank": 0, "late_min_ns": $((LATE_US * 1000 / 2)),
               "late_max_ns": $((LATE_US * 1000 * 3 / 2))}}
EOF
fleet_run run1 "$TMP/run1.json" "$TMP/run1.expect" check --ssh \
	hhog,hnA,hnB,hok,hdie,hun,hwk,huk,hpw,hni,hold,hold2 --ssh-config "$SSHD_CONFIG" \
	--ssh-remote "$IG" --batch --json -d 1
expect_eq "run 1: the fleet's exit status after SIGINT" "$FLEET_RC" 0
python3 "$CHECK" check "$TMP/run1.json" "$TMP/run1.expect"
FAILS=$((FAILS + $?))
hog=$(cat "$SSHD_DIR/hhog/hog.pid" 2>/dev/null)
cpid=$(python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
h = [h for h in (o[-1]["hosts"] if o else []) if h["host"] == "hhog"] or [{}]
print((h[0].get("chains") or [{}])[0].get("culprit_pid"))' "$TMP/run1.json")
expect_eq "run 1: hhog's culprit is the hog host_wrap.sh started" "$cpid" "${hog:-(none started)}"
for h in hwk huk; do
	expect_eq "run 1: $h was never live" "$(python3 "$CHECK" ever "$TMP/run1.json" $h live)" 0
	expect_eq "run 1: $h: no session in its sshd's log (no login)" "$(sshd_sessions $h)" 0
	expect_eq "run 1: $h: nothing ran there" "$(sshd_commands $h | wc -l)" 0
done
t=$(python3 "$CHECK" first "$TMP/run1.json" hpw refused)
awk -v t="$t" 'BEGIN { exit !(t >= 0 && t <= 60) }' &&
	ok "run 1: the password-only host refused ${t} s after the first table (no prompt, no hang)" ||
	bad "run 1: password-only host: refused after '$t' s"
for h in hni hold hold2; do
	expect_eq "run 1: $h failed once, not retried (sessions)" "$(sshd_sessions $h)" 1
done
expect_eq "run 1: hdie ended once, not made again (sessions)" "$(sshd_sessions hdie)" 1
eval "set -- $(head -1 "$SSHD_DIR/hok/commands")"
expect_eq "run 1: the command hok was asked to run (first words)" "${1:-} ${2:-}" "$IG --stream"
wait_leftovers "run 1"

echo "run 2: --hosts-file, --ssh-sudo, --record DIR"
cat >"$SSHD_DIR/hosts" <<EOF
# run 2: the host where sudo works, then one where it does not

root@hsudo
hnosudo
EOF
cat >"$SSHD_DIR/ssh-log" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >>"$SSHD_DIR/ssh-argv"
exec ssh "\$@"
EOF
chmod 755 "$SSHD_DIR/ssh-log"
cat >"$TMP/run2.expect" <<EOF
{"hosts": {
  "hsudo": {"state": "live", "why": "", "no_high": true},
  "hnosudo": {"state": "failed", "why": "sudo -n refused: no passwordless sudo for $IG (sudo said: sudo: a password is required)"}}}
EOF
rec=$TMP/rec
mkdir "$rec"
fleet_run run2 "$TMP/run2.json" "$TMP/run2.expect" check --hosts-file "$SSHD_DIR/hosts" \
	--ssh-sudo --ssh-config "$SSHD_CONFIG" --ssh-remote "$IG" --ssh-program "$SSHD_DIR/ssh-log" \
	--record "$rec" --batch --json -d 1
# docs/fleet.md: 1 when a host's recording is missing (hnosudo never ran).
expect_eq "run 2: the fleet's exit status after SIGINT (a recording missing)" "$FLEET_RC" 1
expect_eq "run 2: what stderr says of the recordings" "$(grep -c "^ingero-top: 1 of 2 recordings copied to $rec\$" "$TMP/run2.json.err")" 1
python3 "$CHECK" check "$TMP/run2.json" "$TMP/run2.expect"
FAILS=$((FAILS + $?))
eval "set -- $(head -1 "$SSHD_DIR/hsudo/commands")"
expect_eq "run 2: hsudo was asked for sudo -n ingero-top --stream" "${1:-} ${2:-} ${3:-} ${4:-}" \
	"sudo -n $IG --stream"
expect_eq "run 2: hnosudo failed once, not retried (sessions)" "$(sshd_sessions hnosudo)" 1
if [ -s "$rec/hsudo.db" ]; then
	ok "run 2: $rec/hsudo.db copied back ($(stat -c %s "$rec/hsudo.db") bytes)"
	"$IG" --replay "$rec/hsudo.db" --batch --summary >"$TMP/replay.txt" 2>&1
	expect_eq "run 2: --replay $rec/hsudo.db --batch --summary exit status" "$?" 0
	grep -q 'workload' "$TMP/replay.txt" && ok "run 2: the replay names the workload" ||
		bad "run 2: the replay: $(head -5 "$TMP/replay.txt" | tr '\n' ' ')"
else
	bad "run 2: no $rec/hsudo.db: $(ls -la "$rec" 2>&1 | tr '\n' ' ') $(tail -3 "$TMP/run2.json.err")"
fi
[ ! -e "$rec/hnosudo.db" ] && ok "run 2: no recording for the host that failed" ||
	bad "run 2: $rec/hnosudo.db exists"
remote=$(sed -n 's/.*--record \([^ ]*\).*/\1/p' "$SSHD_DIR/hsudo/commands" | head -1)
remote=$(eval "echo $remote")
[ -n "$remote" ] && [ ! -e "$remote" ] && ok "run 2: the remote recording ($remote) removed" ||
	bad "run 2: the remote recording '$remote' is still there or unknown"
n=$(grep -c . "$SSHD_DIR/ssh-argv" 2>/dev/null)
nb=$(grep -c -- '-o BatchMode=yes' "$SSHD_DIR/ssh-argv" 2>/dev/null)
[ "${n:-0}" -ge 2 ] && [ "$nb" = "$n" ] && ok "run 2: every ssh run ($n) had -o BatchMode=yes" ||
	bad "run 2: ssh runs: $n, with -o BatchMode=yes: $nb"
nk=$(grep -ciE 'StrictHostKeyChecking=(no|off|accept-new)|UserKnownHostsFile=/dev/null|KnownHostsCommand' \
	"$SSHD_DIR/ssh-argv" 2>/dev/null)
expect_eq "run 2: no ssh run turned host-key checking off" "${nk:-0}" 0
wait_leftovers "run 2"

echo "run 3: --batch (text)"
IGRE=${IG//./\\\\.} # $IG in a regular expression, in JSON
cat >"$TMP/run3.expect" <<EOF
{"rows": {
  "hni": "^hni +failed +$IGRE is not installed there \\\\(not on the remote PATH\\\\)$",
  "hold": "^hold +failed +$IGRE there is older \\\\(no --stream; stream 1 needed\\\\)$",
  "hwk": "^hwk +refused +host key does not match known_hosts: refused \\\\(ssh said: Host key verification failed\\\\.\\\\)$",
  "hpw": "^hpw +refused +authentication refused \\\\(BatchMode: no password prompt; ssh said: root@127\\\\.0\\\\.0\\\\.1: Permission denied \\\\(password,keyboard-interactive\\\\)\\\\.\\\\)$",
  "hun": "^hun +unreachable +ssh: connect to host 127\\\\.0\\\\.0\\\\.1 port $(sshd_port hun): Connection refused$"}}
EOF
fleet_run run3 "$TMP/run3.txt" "$TMP/run3.expect" text --ssh hni,hold,hwk,hpw,hun \
	--ssh-config "$SSHD_CONFIG" --ssh-remote "$IG" --batch -d 1
python3 "$CHECK" text "$TMP/run3.txt" "$TMP/run3.expect"
FAILS=$((FAILS + $?))
expect_eq "run 3: hwk still never logged in" "$(sshd_sessions hwk)" 0
wait_leftovers "run 3"
finish
