#!/usr/bin/env bash
# A fake ssh for the fleet screen's tmux test (test_tui_fleet.sh), given as
# --ssh-program: it gets ssh's arguments (`-T -o ... HOST -- ingero-top
# --stream ...`, or `-t ... HOST -- ingero-top ...` for a host's viewer)
# and plays a host by its name:
#   h1  live, one process, a HIGH cpu_contention chain (stress-ng[4711])
#   h2  live, two processes, NCCL rank 3 of 4 that arrives 12 ms late in
#       every collective: the straggler
#   h3  unreachable: ssh's own words on stderr, exit 255
#   h4  live, healthy, NCCL rank 0
# With -t (Enter on a host) it runs the real viewer on a shipped recording
# ($IG --replay tests/scenarios/cpu-contention.db), as ssh -t would run
# the host's ingero-top in the terminal.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
tty=0 host=""
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; [ -z "$host" ] && { host=$1; shift; }; break ;;
	-t) tty=1 ;;
	-[oFplJiE]) shift ;;
	-*) ;;
	*) [ -z "$host" ] && { host=$1; shift; break; } ;;
	esac
	shift
done
host=${host##*@}
if [ "$host" = h3 ]; then
	echo "ssh: connect to host h3 port 22: Connection refused" >&2
	exit 255
fi
if [ "$tty" = 1 ]; then
	exec "${IG:-$ROOT/build/ingero-top}" --replay "$ROOT/tests/scenarios/cpu-contention.db"
fi
export FAKE_HOST=$host
exec python3 -c '
import json, os, select, sys, time
host = os.environ["FAKE_HOST"]
pid = {"h1": 1100, "h2": 2200, "h4": 4400}.get(host, 9900)
rank = {"h1": 1, "h2": 3, "h4": 0}.get(host)
STEP = 20_000_000  # a collective every 20 ms
def emit(o):
    sys.stdout.write(json.dumps(o, separators=(",", ":")) + "\n")
    sys.stdout.flush()
emit({"type": "hello", "stream": 1, "version": "0.1.0", "host": host, "pid": pid,
      "realtime_ns": time.time_ns(), "interval_s": 0.5, "window_s": 10,
      "target": "all CUDA processes"})
last = time.time_ns() // STEP
seq = 0
nxt = time.monotonic()
buf = b""
while True:
    r, _, _ = select.select([0], [], [], max(0.0, nxt - time.monotonic()))
    if r:
        d = os.read(0, 65536)
        if not d:
            emit({"type": "end", "stream": 1, "reason": "stdin closed", "exit": 0})
            sys.exit(0)
        buf += d
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                m = json.loads(line)
            except ValueError:
                continue
            if m.get("type") == "ping":
                emit({"type": "pong", "stream": 1, "id": m.get("id"), "realtime_ns": time.time_ns()})
        continue
    nxt += 0.5
    seq += 1
    now = time.time_ns()
    def proc(p, comm, gpu, cpu, pre, wait, op, p99):
        return {"pid": p, "comm": comm, "exited": False, "calls_per_s": 1200.0,
                "gpu_pct": gpu, "cpu_pct": cpu, "pre_pct": pre, "wait_pct": wait,
                "top_op": {"op": op, "p99_ns": p99, "rate": 1200.0, "calls_win": 12000}}
    procs, chains, nccl = [], [], []
    if host == "h1":
        procs = [proc(pid + 1, "python3", 20.0, 30.0, 38.0, 12.0, "cudaLaunchKernel",
                      4_360_000 + 40_000 * (seq % 5))]
        chains = [{"id": "c1", "severity": "HIGH", "class": "cpu_contention",
                   "op": "cudaLaunchKernel", "pid": pid + 1, "comm": "python3",
                   "culprit_pid": 4711, "culprit_comm": "stress-ng", "impact": 0.42,
                   "summary": "CPU contention: stress-ng[4711] took 38% of python3 time",
                   "advice": "taskset -pc 2-7 4711"}]
    elif host == "h2":
        procs = [proc(pid + 1, "python3", 61.0, 20.0, None, 19.0, "ncclAllReduce",
                      12_300_000 + 100_000 * (seq % 3)),
                 proc(pid + 2, "pt_data_worker", 0.0, 70.0, 5.0, 25.0, "cudaMemcpyAsync", 850_000)]
    else:
        procs = [proc(pid + 1, "python3", 91.0, 7.0, 0.5, 1.5, "cudaStreamSynchronize", 2_100_000)]
    if rank is not None:
        cur = now // STEP
        arr = [[int(s), int(s * STEP + (12_000_000 if host == "h2" else 50_000 * rank))]
               for s in range(max(last + 1, cur - 255), cur + 1)]
        last = cur
        nccl = [{"pid": pid + 1, "key": 0x1A2B3C, "rank": rank, "nranks": 4, "ops_win": 500,
                 "wait_mean_ns": 300_000 if host == "h2" else 12_500_000,
                 "wait_ns_win": 1, "seq": int(cur), "arrivals": arr, "arrivals_lost": 0}]
    emit({"type": "frame", "stream": 1, "seq": seq, "realtime_ns": now, "window_s": 10,
          "status": {"events_total": 1000 * seq, "events_per_s": 2000.0, "drops_kernel": 0,
                     "drops_user": 3 if host == "h1" else 0, "probes_attached": 40,
                     "probes_failed": 0, "nvml": "absent" if host == "h4" else "ok",
                     "message": "", "done": False},
          "procs": procs, "chains": chains,
          "gpus": [] if host == "h4" else
                  [{"index": 0, "name": "NVIDIA H100", "util_gpu_pct": 87,
                    "mem_used": 61 << 30, "mem_total": 80 << 30}],
          "nccl": nccl})
'
