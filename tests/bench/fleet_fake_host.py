#!/usr/bin/env python3
"""A simulated host for the fleet benchmark, standing in for ssh.

ingero-top --ssh runs it as its --ssh-program with ssh's arguments
(`-T -o ... [-p PORT] [-l USER] HOST -- [sudo -n] ingero-top --stream ...`).
It answers as a remote `ingero-top --stream` would (docs/json.md, "Stream"):
a hello at once, then one frame a second with what a busy 8-GPU training
host shows (3 processes, a chain, 8 GPUs from NVML, 8 NCCL ranks of one
communicator with the collectives they enqueued since the previous frame),
a pong for each ping read on stdin, and an end when stdin closes.

The hosts are named PREFIX<N> (fh0, fh1, ...): host N holds ranks 8N..8N+7
of a communicator of 8 x FLEET_FAKE_HOSTS ranks that enqueues a collective
every FLEET_FAKE_STEP_MS. Each host's wall clock is off by its own amount
(up to +-150 ms, as unsynchronised hosts are), in everything it reports;
the client must correct it with its pings to join the arrivals.

Environment:
  FLEET_FAKE_HOSTS      hosts in the job (64)
  FLEET_FAKE_RANKS      NCCL ranks on each host (8)
  FLEET_FAKE_STEP_MS    ms between collectives (50: 20 collectives/s)
  FLEET_FAKE_LATE       HOST:LOCALRANK:US, that rank arrives US late (17:3:4000)
  FLEET_FAKE_STALL      a host name that sends its hello and then nothing
  FLEET_FAKE_EPOCH_NS   the job's start (wall ns), the same for every host
  FLEET_FAKE_LOG        a file: "host seq ms" per frame, ms the time the reader
                        took to read it all (the pipe drained), 1 ms steps
"""
import fcntl
import json
import os
import select
import stat
import struct
import sys
import time

OPT_WITH_VALUE = set("-o -F -p -l -i -J -E -b -c -D -e -I -L -m -O -Q -R -S -W -w -B".split())


def parse_ssh_args(argv):
    """(host, remote words) from ssh's command line."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            continue
        if a in OPT_WITH_VALUE:
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        host = a.split("@")[-1]
        rest = [w for w in argv[i + 1:] if w != "--"]
        return host, rest
    return "", []


def unread_bytes(fd):
    """Bytes written to fd that its reader has not read yet (a pipe: FIONREAD
    counts the pipe's content from either end; a socket: SIOCOUTQ), or None."""
    try:
        mode = os.fstat(fd).st_mode
        req = 0x541B if stat.S_ISFIFO(mode) else 0x5411  # FIONREAD, SIOCOUTQ
        return struct.unpack("i", fcntl.ioctl(fd, req, b"\0\0\0\0"))[0]
    except OSError:
        return None


def pickup_ms(fd, limit_s=0.5):
    """How long the reader takes to read what was just written (ms, 1 ms steps)."""
    t0 = time.monotonic()
    while True:
        n = unread_bytes(fd)
        if n is None:
            return None
        if n == 0:
            return (time.monotonic() - t0) * 1000.0
        if time.monotonic() - t0 > limit_s:
            return limit_s * 1000.0
        time.sleep(0.001)


def host_index(name):
    digits = "".join(c for c in name if c.isdigit())
    return int(digits) if digits else 0


def main():
    host, words = parse_ssh_args(sys.argv[1:])
    if "--stream" not in " ".join(words):
        # Not a stream (a `cat` of a recording, the viewer): nothing to give.
        print("fleet_fake_host: only --stream is simulated", file=sys.stderr)
        return 1
    nhosts = int(os.environ.get("FLEET_FAKE_HOSTS", "64"))
    nlocal = int(os.environ.get("FLEET_FAKE_RANKS", "8"))
    step_ns = int(float(os.environ.get("FLEET_FAKE_STEP_MS", "50")) * 1e6)
    late = os.environ.get("FLEET_FAKE_LATE", "17:3:4000").split(":")
    late_host, late_rank, late_ns = int(late[0]), int(late[1]), int(late[2]) * 1000
    stall = os.environ.get("FLEET_FAKE_STALL", "") == host
    log = open(os.environ["FLEET_FAKE_LOG"], "a") if os.environ.get("FLEET_FAKE_LOG") else None
    idx = host_index(host)
    offset_ns = ((idx * 7919) % 301 - 150) * 1_000_000  # this host's clock error
    pid = 40000 + idx

    def now():
        return time.time_ns() + offset_ns

    out = sys.stdout

    def emit(obj):
        out.write(json.dumps(obj, separators=(",", ":")) + "\n")
        out.flush()

    emit({"type": "hello", "stream": 1, "version": os.environ.get("FLEET_FAKE_VERSION", "0.1.0"),
          "host": host, "pid": pid, "realtime_ns": now(), "interval_s": 1.0, "window_s": 10,
          "target": "all CUDA processes"})
    comms = ["python3", "pt_data_worker", "pt_data_worker"]
    pids = [pid + 1, pid + 2, pid + 3]
    # The collectives: seq s was enqueued (true time) at epoch + s * step,
    # the same epoch on every host (the job's start).
    epoch = int(os.environ.get("FLEET_FAKE_EPOCH_NS") or
                (time.time_ns() // 10**12 - 1) * 10**12)
    last_seq = [(time.time_ns() - epoch) // step_ns] * nlocal
    seq_no = 0
    next_frame = time.monotonic() + 1.0
    buf = b""
    while True:
        timeout = max(0.0, next_frame - time.monotonic())
        r, _, _ = select.select([0], [], [], timeout)
        if r:
            data = os.read(0, 65536)
            if not data:
                if not stall:
                    emit({"type": "end", "stream": 1, "reason": "stdin closed", "exit": 0})
                return 0
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("type") == "ping" and not stall:
                    emit({"type": "pong", "stream": 1, "id": msg.get("id"), "realtime_ns": now()})
            continue
        next_frame += 1.0
        if stall:
            continue
        seq_no += 1
        t = time.time_ns()
        ranks = []
        for lr in range(nlocal):
            rank = idx * nlocal + lr
            now_seq = (t - epoch) // step_ns
            arrivals = []
            for s in range(last_seq[lr] + 1, now_seq + 1):
                entry = epoch + s * step_ns + ((s * 2654435761 + rank * 40503) % 200_000)
                if idx == late_host and lr == late_rank:
                    entry += late_ns
                arrivals.append([int(s), int(entry + offset_ns)])
            lost = max(0, len(arrivals) - 256)
            arrivals = arrivals[lost:]
            last_seq[lr] = now_seq
            waits = 3_000_000 if not (idx == late_host and lr == late_rank) else 200_000
            ranks.append({"pid": pids[0] if lr == 0 else pid + 10 + lr, "key": 0x5eed1234,
                          "rank": rank, "nranks": nhosts * nlocal, "ops_win": 200,
                          "wait_mean_ns": waits, "wait_ns_win": waits * 200,
                          "seq": int(now_seq), "arrivals": arrivals, "arrivals_lost": lost})
        procs = []
        for k in range(3):
            procs.append({"pid": pids[k], "comm": comms[k], "exited": False,
                          "calls_per_s": 4200.0 / (k + 1), "gpu_pct": 61.5 - 20 * k,
                          "cpu_pct": 20.1 + 5 * k, "pre_pct": 2.5 + (idx % 5), "wait_pct": 15.9,
                          "top_op": {"op": "cudaStreamSynchronize",
                                     "p99_ns": 4_100_000 + 1000 * (seq_no % 50) + idx,
                                     "rate": 20.0, "calls_win": 200}})
        chains = []
        if idx % 4 == 1:
            chains.append({"id": "c%d" % idx, "severity": "MEDIUM", "class": "cpu_contention",
                           "op": "cudaLaunchKernel", "pid": pids[0], "comm": "python3",
                           "culprit_pid": pid + 99, "culprit_comm": "ig-hog",
                           "impact": 0.12 + idx / 1000.0,
                           "summary": "CPU contention by ig-hog[%d]: 12 %% of python3's time "
                                      "preempted" % (pid + 99),
                           "advice": "taskset -pc 2-7 %d" % (pid + 99)})
        gpus = [{"index": g, "name": "NVIDIA H100 80GB HBM3", "util_gpu_pct": 87 - g,
                 "mem_used": 61 << 30, "mem_total": 80 << 30} for g in range(8)]
        frame = {"type": "frame", "stream": 1, "seq": seq_no, "realtime_ns": now(), "window_s": 10,
                 "status": {"events_total": 1_000_000 * seq_no, "events_per_s": 52000.0,
                            "drops_kernel": 0, "drops_user": 0, "probes_attached": 41,
                            "probes_failed": 0, "nvml": "ok", "message": "", "done": False},
                 "procs": procs, "chains": chains, "gpus": gpus, "nccl": ranks}
        emit(frame)
        if log:
            ms = pickup_ms(1)
            log.write("%s %d %s\n" % (host, seq_no, "-" if ms is None else "%.1f" % ms))
            log.flush()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)
