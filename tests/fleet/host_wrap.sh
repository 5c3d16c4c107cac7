#!/bin/bash
# The ForceCommand of a simulated host (tests/fleet/sshd_lib.sh):
#   host_wrap.sh SCENARIO HOSTDIR
# sshd runs it for every session of that host, with what the client asked
# for in $SSH_ORIGINAL_COMMAND. A request for the remote ingero-top
# ([sudo -n] IG ARGS..., IG being $IG of HOSTDIR/host.env or "ingero-top")
# gets the host's scenario:
#   healthy    IG ARGS -- the shim workload, a steady light loop
#   hog        IG ARGS -- the launch-bound workload on $HOG_CPU, with a CPU
#              hog (ig-hog) on the same CPU, started and ended here
#   nccl       IG ARGS -- one rank ($NCCL_RANK of 2, id file $NCCL_ID) of a
#              communicator whose rank $NCCL_LATE busy-spins $NCCL_LATE_US
#              before its collectives (a slow host)
#   dies       IG ARGS -- a workload that ends after a few seconds
#   noingero   what bash says for a command that is not on the PATH (127)
#   older      what an ingero-top without --stream says (exit 2; the
#              message of 0.1.0's cli.c, or $OLDER_MSG)
#   asis       IG ARGS unchanged
# ARGS always come first, as the client sent them; with sudo -n, sudo runs
# for real (a user without sudo rights is refused by sudo itself). Any
# other command (the client's `cat` of a recording, `rm`) runs as asked.
# Every request is appended to HOSTDIR/commands; every process started
# here carries SSHD_MARK in its environment (sshd_leftovers finds them).
scenario=$1 hostdir=$2
# shellcheck source=/dev/null
. "$hostdir/host.env"
export SSHD_MARK
printf '%s\n' "$SSH_ORIGINAL_COMMAND" >>"$hostdir/commands"
cd / || exit 1
# The words, as the remote shell would split them (the client quotes them).
eval "set -- $SSH_ORIGINAL_COMMAND"
sudo=()
if [ "${1:-}" = sudo ] && [ "${2:-}" = -n ]; then
	sudo=(sudo -n env "SSHD_MARK=$SSHD_MARK")
	shift 2
fi
if [ "${1:-}" != "$IG" ] && [ "${1:-}" != ingero-top ]; then
	exec bash -c "$SSH_ORIGINAL_COMMAND" # not ingero-top: run it as asked
fi
shift
args=("$@")
stream=no
for a in "${args[@]}"; do [ "$a" = --stream ] && stream=yes; done

case $scenario in
noingero)
	# bash -c on a host where ingero-top is not on the PATH.
	exec env PATH=/usr/bin:/bin bash -c "ingero-top $(printf '%q ' "${args[@]}")" ;;
older)
	if [ $stream = yes ]; then
		# What ingero-top 0.1.0 before --stream says (src/session/cli.c),
		# or OLDER_MSG (e.g. getopt's "unrecognized option '--stream'").
		echo "${OLDER_MSG:-ingero-top: unknown or ambiguous option '--stream' (see --help)}" >&2
		exit 2
	fi ;;
esac

run() { # the remote ingero-top with ARGS, then "--" and the scenario's command
	exec "${sudo[@]}" "$IG" "${args[@]}" -- "$@"
}
case $scenario in
healthy)
	run "$WL" --cpu "${OTHER_CPU:-0}" --iters 100000000 --kernels 4 --kernel-us 2000 \
		--sync-every 1 ;;
hog)
	# The hog is this script's own child: it ends when the session does.
	"$HOG" --cpu "$HOG_CPU" --seconds 600 &
	hog=$!
	echo "$hog" >"$hostdir/hog.pid"
	SHIM_LAUNCH_US=500 "${sudo[@]}" "$IG" "${args[@]}" -- "$WL" --cpu "$HOG_CPU" --iters 100000000 --kernels 10 \
		--kernel-us 100 --sync-every 1
	rc=$?
	kill "$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
	exit $rc ;;
nccl)
	export SHIM_NCCL_DIR=${NCCL_DIR:?}
	run "$WL" --cpu "${OTHER_CPU:-0}" --iters 100000000 --kernels 2 --kernel-us 20000 \
		--nccl --nccl-ranks 2 --nccl-id "${NCCL_ID:?}" --nccl-rank "${NCCL_RANK:?}" \
		--nccl-ops allreduce --nccl-types float32 \
		--straggler-rank "${NCCL_LATE:?}" --straggler-us "${NCCL_LATE_US:?}" ;;
dies)
	run "$WL" --cpu "${OTHER_CPU:-0}" --iters "${DIES_ITERS:-1500}" --kernels 2 \
		--kernel-us 1000 --sync-every 1 ;;
asis | older)
	exec "${sudo[@]}" "$IG" "${args[@]}" ;;
*)
	echo "host_wrap.sh: unknown scenario $scenario" >&2
	exit 99 ;;
esac
