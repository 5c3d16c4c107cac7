#!/usr/bin/env bash
# A stand-in for ssh in the fleet tests without sshd (--ssh-program): it
# takes ssh's options and ignores them, then HOST, "--" and the remote
# command line, and plays the host its name names, so that every state and
# reason of docs/fleet.md is exercised:
#
#   live-*        stream 1: a hello, a frame every -d seconds, pongs to pings
#   hog-*         live, with a HIGH cpu_contention chain (impact 0.71)
#   nccl-R-N-*    live, NCCL rank R of N on comm 0x1a2b3c, one collective
#                 every 100 ms of wall time (seq = time / 100 ms); "-slow"
#                 in the name: 50 ms late to each; "-skew": its clock 5 s ahead
#   ends-*        live for two frames, then {"type":"end"} and exit 0
#   huge-*        live, but its first frame is a 5 MiB line (dropped)
#   silent-*      says nothing until its stdin ends
#   stall-*       a hello and one frame, then nothing until its stdin ends
#   mute-*        a hello, then nothing (an attach that hangs) until stdin ends
#   v2-*          a hello of stream 2 (version mismatch)
#   error-*       a hello, then {"type":"error"} (not root) and exit 1
#   hostkey-*     the host key changed: refused
#   denied-*      publickey refused: refused
#   down-*        connection refused: unreachable
#   missing-*     ingero-top: command not found (127)
#   older-*       ingero-top without --stream: unknown option (exit 2)
#   nosudo-*      sudo: a password is required (exit 1)
#   local-*       runs the remote command here (sh -c)
#
# A remote command that starts with "cat ", "rm -f " or "sudo -n " followed
# by those (the copy of --record) runs here too. Every streaming host ends
# when its stdin ends ({"type":"end","reason":"stdin closed"}), and writes
# its --record file then (a few bytes that say which host it was).
set -u
while [ $# -gt 0 ]; do
	case $1 in
	-o | -F | -p | -l | -i) shift 2 ;;
	-*) shift ;;
	*) break ;;
	esac
done
host=${1:-}
shift
[ "${1:-}" = -- ] && shift
cmd="$*"

case $cmd in
"cat "* | "rm -f "* | "sudo -n cat "* | "sudo -n rm -f "*) exec sh -c "$cmd" ;;
esac

interval=1
[[ $cmd =~ (^|\ )-d\ ([0-9.]+) ]] && interval=${BASH_REMATCH[2]}
record=
[[ $cmd =~ --record\ ([^ ]+) ]] && record=${BASH_REMATCH[1]//\'/}

# NOW: the wall clock in ns (+ the skew), without a subshell (a pong
# answered late reads as clock uncertainty).
now() { local t=$EPOCHREALTIME; NOW=$((10#${t/./} * 1000 + skew)); }
skew=0
[[ $host == *-skew* ]] && skew=5000000000

hello() { # stream
	now
	printf '{"type":"hello","stream":%s,"version":"0.1.0","host":"%s","pid":%d,"realtime_ns":%s,"interval_s":%s,"window_s":10,"target":"all CUDA processes","future":{"x":1}}\n' \
		"$1" "$host" $$ "$NOW" "$interval"
}

chain='[]'
[[ $host == hog-* ]] && chain='[{"id":"chain-0001","severity":"HIGH","class":"cpu_contention","op":"cudaStreamSynchronize","pid":4242,"comm":"python3","culprit_pid":2231,"culprit_comm":"stress-ng","impact":0.71,"summary":"cudaStreamSynchronize p99 142ms: 71% of the tail preempted by stress-ng[2231]","advice":"move stress-ng off the GPU feeding CPUs"}]'

last_k=0
arrivals() { # ARR: the collectives since the previous frame
	local rank=$1 slow=$2 k first sep=""
	k=$(((NOW - skew) / 100000000))
	first=$((last_k ? last_k + 1 : k - 5))
	((k - first > 50)) && first=$((k - 50))
	ARR=""
	for ((s = first; s <= k; s++)); do
		ARR+="$sep[$s,$((s * 100000000 + rank * 1000000 + slow + skew))]"
		sep=,
	done
	last_k=$k
}

seq=0
frame() {
	seq=$((seq + 1))
	now
	local p99=$((12000000 + seq * 1000000)) nccl=""
	if [[ $host =~ ^nccl-([0-9]+)-([0-9]+) ]]; then
		local r=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]} slow=0
		[[ $host == *-slow* ]] && slow=50000000
		arrivals "$r" "$slow"
		printf -v nccl ',"nccl":[{"pid":%d,"key":1715004,"rank":%d,"nranks":%d,"ops_win":10,"wait_mean_ns":1000000,"wait_ns_win":10000000,"seq":%d,"arrivals":[%s],"arrivals_lost":0}]' \
			$$ "$r" "$n" "$last_k" "$ARR"
	fi
	printf '{"type":"frame","stream":1,"seq":%d,"realtime_ns":%s,"window_s":10,"status":{"events_total":%d,"events_per_s":250.5,"drops_kernel":1,"drops_user":2,"probes_attached":20,"probes_failed":0,"nvml":"ok","message":"","done":false},"procs":[{"pid":4242,"comm":"python3","exited":false,"calls_per_s":100,"gpu_pct":61.5,"cpu_pct":20,"pre_pct":null,"wait_pct":18.5,"top_op":{"op":"cudaStreamSynchronize","p99_ns":%d,"rate":50,"calls_win":500}}],"chains":%s,"gpus":[{"index":0,"name":"Sim GPU","util_gpu_pct":87,"mem_used":1073741824,"mem_total":8589934592}]%s,"unknown":[1,2]}\n' \
		"$seq" "$NOW" $((seq * 250)) "$p99" "$chain" "$nccl"
}

finish() { # reason code
	[ -n "$record" ] && printf 'recording of %s\n' "$host" >"$record"
	printf '{"type":"end","stream":1,"reason":"%s","exit":%d}\n' "$1" "$2"
	exit "$2"
}

# Reads stdin for up to the interval: answers pings; returns 1 at EOF.
serve() {
	local line deadline=$1 rc
	while :; do
		IFS= read -r -t "$deadline" line
		rc=$?
		((rc > 128)) && return 0
		((rc != 0)) && return 1
		if [[ $line =~ \"id\":([0-9]+) ]]; then
			now
			printf '{"type":"pong","stream":1,"id":%s,"realtime_ns":%s}\n' \
				"${BASH_REMATCH[1]}" "$NOW"
		fi
		deadline=0.01
	done
}

stream() {
	hello 1
	local n=0
	while :; do
		serve "$interval" || finish "stdin closed" 0
		if [[ $host == huge-* ]] && [ $n = 0 ]; then
			head -c 5242880 /dev/zero | tr '\0' 'x'
			echo
		fi
		frame
		n=$((n + 1))
		[[ $host == ends-* ]] && [ $n = 2 ] && finish "command exited 0" 0
		[[ $host == stall-* ]] && { cat >/dev/null; finish "stdin closed" 0; }
	done
}

case $host in
live-* | hog-* | nccl-* | ends-* | huge-* | stall-*) stream ;;
silent-*) cat >/dev/null; exit 0 ;;
mute-*) hello 1; cat >/dev/null; exit 0 ;;
v2-*) hello 2; cat >/dev/null; exit 0 ;;
error-*)
	hello 1
	echo '{"type":"error","stream":1,"message":"cannot trace: not root (run it with sudo, or --ssh-sudo)"}'
	echo "ingero-top: cannot trace: not root" >&2
	exit 1 ;;
hostkey-*)
	cat >&2 <<EOF
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
Host key verification failed.
EOF
	exit 255 ;;
denied-*) echo "root@$host: Permission denied (publickey,password)." >&2; exit 255 ;;
down-*) echo "ssh: connect to host $host port 22: Connection refused" >&2; exit 255 ;;
missing-*) echo "bash: line 1: ingero-top: command not found" >&2; exit 127 ;;
older-*) echo "ingero-top: invalid option '--stream': unknown option (see ingero-top --help)" >&2; exit 2 ;;
nosudo-*) echo "sudo: a password is required" >&2; exit 1 ;;
local-*) exec sh -c "$cmd" ;;
*) echo "ssh: Could not resolve hostname $host: Name or service not known" >&2; exit 255 ;;
esac
