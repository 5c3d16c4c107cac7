#!/usr/bin/env bash
# The real-GPU check (issue 32, docs/gpu.md "Proof on a real GPU"): on a
# machine with an NVIDIA driver, ingero-top's counts, durations, NVML meters
# and diagnosis are compared with what the CUDA workload measured itself and
# with nvidia-smi taken at the same moments. With --shim DIR the same steps
# run on the shim libraries (CI keeps the script working; nvml-read stands
# in for nvidia-smi). Everything lands in OUT: facts.txt, check.txt, the
# runs' JSON summaries and stderr, the workload's reports, the meters
# sampled on both sides, the recording if small, and verdict.txt.
# Exit 0 when every comparison holds, 1 when one fails, 3 when the machine
# refuses what ingero-top needs (BPF, uprobes: said in verdict.txt).
#
# usage: real_gpu_check.sh --ig BIN --wl BIN [--shim DIR] [--out DIR] [-- WORKLOAD ARGS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
IG= WL= SHIM= OUTDIR=${OUT:-$PWD/gpu-check-out}
while [ $# -gt 0 ]; do
	case $1 in
	--ig) IG=$2; shift 2 ;;
	--wl) WL=$2; shift 2 ;;
	--shim) SHIM=$2; shift 2 ;;
	--out) OUTDIR=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: $0 --ig BIN --wl BIN [--shim DIR] [--out DIR] [-- WORKLOAD ARGS]" >&2; exit 2 ;;
	esac
done
[ -x "$IG" ] && [ -x "$WL" ] || { echo "real_gpu_check: --ig and --wl must be programs" >&2; exit 2; }
IG=$(cd "$(dirname "$IG")" && pwd)/$(basename "$IG")
WL=$(cd "$(dirname "$WL")" && pwd)/$(basename "$WL")
WL_ARGS=("$@")
mkdir -p "$OUTDIR"
O=$OUTDIR
say() { echo "== $*" | tee -a "$O/log.txt"; }
t_start=$(date +%s)

# ---- where we are ------------------------------------------------------------
IGOPT=()
if [ -n "$SHIM" ]; then
	mode=shim
	export INGERO_TOP_NVML=$SHIM/libnvidia-ml.so.1
	export SHIM_NVML_FILE=$O/shim_nvml.txt
	printf '0.name=NVIDIA H100 80GB HBM3\n0.util.gpu=87\n0.util.mem=41\n0.mem.used_mib=32768\n0.power_mw=350000\n0.temp_c=65\n' >"$SHIM_NVML_FILE"
	IGOPT=(--no-system-libs)
else
	mode=real
	# The driver's NVML where the loader does not look (a container's mount).
	if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1 '; then
		for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64 /usr/lib/x86_64-linux-gnu; do
			[ -e "$d/libnvidia-ml.so.1" ] && { export INGERO_TOP_NVML=$d/libnvidia-ml.so.1; break; }
		done
	fi
fi
{
	echo "mode $mode"
	echo "date $(date -u +%FT%TZ)"
	echo "kernel $(uname -r)"
	echo "btf $([ -r /sys/kernel/btf/vmlinux ] && echo yes || echo no)"
	echo "uid $(id -u)"
	echo "cpus $(nproc)"
	echo "ingero_top $("$IG" --version 2>&1 | head -1)"
	echo "ingero_top_needs $(ldd "$IG" 2>/dev/null | awk '{print $1}' | tr '\n' ' ')"
	echo "ingero_top_bytes $(stat -c %s "$IG")"
	echo "nvml_lib ${INGERO_TOP_NVML:-default}"
	if [ "$mode" = real ]; then
		nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv,noheader 2>&1 | sed 's/^/gpu /'
		echo "cudart $(ldd "$WL" | awk '/libcudart/ {print $3}')"
	fi
} >"$O/facts.txt" 2>&1
cat "$O/facts.txt"

# ---- ingero-top check ----------------------------------------------------------
say "ingero-top check"
"$IG" check >"$O/check.txt" 2>&1
echo "exit $?" >>"$O/check.txt"
cat "$O/check.txt"

# ---- the meters on the other side: nvidia-smi (or nvml-read on the shim) -------
# One block per sample: "T <unix ns>", then "G util,memutil,used_mib,reserved_mib,
# total_mib,power_w,temp_c" per device and "P pid,used_mib" per compute process.
sample_meters() {
	while :; do
		echo "T $(date +%s%N)"
		if [ "$mode" = real ]; then
			# memory.reserved apart: a driver without the field fails the whole query
			res=$(nvidia-smi --query-gpu=memory.reserved --format=csv,noheader,nounits 2>/dev/null |
				head -1 | tr -d ' ')
			nvidia-smi --query-gpu=utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,temperature.gpu \
				--format=csv,noheader,nounits 2>/dev/null | tr -d ' ' |
				awk -F, -v r="${res//[^0-9.]/}" '{ print "G " $1 "," $2 "," $3 "," r "," $4 "," $5 "," $6 }'
			nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
				sed 's/ //g; s/^/P /'
		else
			"$SHIM/nvml-read" --lib "$INGERO_TOP_NVML" 2>/dev/null | awk '
				{ v[$1] = $2 }
				$1 == "dev0.procs.v3.proc" { p[++n] = $2 "," int($3 / 1048576) }
				END { printf "G %s,%s,%d,%d,%d,%.2f,%s\n", v["dev0.util.gpu"], v["dev0.util.mem"],
					v["dev0.mem2.used"] / 1048576, v["dev0.mem2.reserved"] / 1048576,
					v["dev0.mem.total"] / 1048576, v["dev0.power_mw"] / 1000, v["dev0.temp_c"]
				      for (i = 1; i <= n; i++) print "P " p[i] }'
		fi
		sleep 0.3
	done
}

# The shim's NVML lists the workload once its pid is known, as a driver would.
shim_list_pid() {
	local pid
	for _ in $(seq 1 600); do
		pid=$(pgrep -o -f "^$WL" 2>/dev/null) && break
		sleep 0.05
	done
	[ -n "${pid:-}" ] || return
	cp "$SHIM_NVML_FILE" "$SHIM_NVML_FILE.new"
	echo "0.procs=$pid:4662" >>"$SHIM_NVML_FILE.new"
	mv "$SHIM_NVML_FILE.new" "$SHIM_NVML_FILE"
}

run_wl() { # name, then the command before the workload
	local name=$1; shift
	"$@" "$WL" "${WL_ARGS[@]}" --expect "$O/$name.expect" --report "$O/$name.report" \
		>"$O/$name.json" 2>"$O/$name.err"
	echo "$?" >"$O/$name.rc"
	say "$name: exit $(cat "$O/$name.rc"), $(wc -l <"$O/$name.json") lines of JSON"
}

say "untraced"
run_wl untraced env

# The shim's NVML lists the workload while it runs (stopped with the run).
lister() { if [ "$mode" = shim ]; then shim_list_pid >/dev/null 2>&1 & echo $!; fi; }

say "traced, stacks on, recording"
lst=$(lister)
sample_meters >"$O/meters.txt" 2>/dev/null &
sampler=$!
rm -f "$O/run.db"
run_wl stacks "$IG" "${IGOPT[@]}" --batch --json --summary -d 0.5 --record "$O/run.db" --
kill "$sampler" $lst 2>/dev/null
wait 2>/dev/null

say "traced, stacks off"
lst=$(lister)
run_wl nostacks "$IG" "${IGOPT[@]}" --batch --json --summary -d 0.5 --no-stacks --
kill $lst 2>/dev/null
wait 2>/dev/null

# What the driver does with CUDA_LAUNCH_BLOCKING=1 (INFO only: where a
# launch's wait lands, spinning in the API or asleep, and what the chains
# say; docs/detection.md, "Synchronous launches").
say "traced, CUDA_LAUNCH_BLOCKING=1"
lst=$(lister)
run_wl blocking "$IG" "${IGOPT[@]}" --batch --json --summary -d 0.5 --no-stacks -- \
	env CUDA_LAUNCH_BLOCKING=1
kill $lst 2>/dev/null
wait 2>/dev/null

# The incident case: ingero-top started against a process already running
# (sudo ingero-top --pid PID), stopped with Ctrl-C once it exited (batch
# mode goes on after its --pid processes, as top -b -p does).
if [ -s "$O/stacks.json" ]; then # (not where tracing was refused)
	say "attach to the running workload (--pid)"
	"$WL" "${WL_ARGS[@]}" --contend 6 --report "$O/attach.report" >/dev/null 2>"$O/attach.wlerr" &
	wl=$!
	for _ in $(seq 1 600); do grep -q libcudart "/proc/$wl/maps" 2>/dev/null && break; sleep 0.05; done
	lst=$(lister)
	timeout 120 "$IG" "${IGOPT[@]}" --batch --json --summary -d 0.5 --pid "$wl" \
		>"$O/attach.json" 2>"$O/attach.err" &
	ig=$!
	wait "$wl"
	kill -INT "$ig" 2>/dev/null
	wait "$ig"
	echo "$?" >"$O/attach.rc"
	kill $lst 2>/dev/null
	wait
	say "attach: exit $(cat "$O/attach.rc")"
fi

say "replay of the recording"
"$IG" --replay "$O/run.db" --batch --json --summary >"$O/replay.json" 2>"$O/replay.err"
echo "$?" >"$O/replay.rc"
"$IG" --replay "$O/run.db" --json --events >"$O/events.jsonl" 2>>"$O/replay.err"

say "verdict"
python3 "$here/gpu_check.py" "$O" "$mode"
rc=$?
# What comes back from a device is at most 8 files: keep the recording only
# when small, and the events (large) only here.
db_kib=$(du -k "$O/run.db" 2>/dev/null | cut -f1)
if [ "${db_kib:-0}" -gt 12000 ]; then rm -f "$O/run.db"; echo "recording: ${db_kib} KiB, not kept" >>"$O/verdict.txt"; fi
echo "elapsed $(($(date +%s) - t_start)) s" | tee -a "$O/verdict.txt"
exit $rc
