"""gilgen: a Python feeding thread that shares CPython's GIL with a busy
thread, and measures its own ground truth (tests/sweep/README.md). The
feeder runs steps of Python work, kernel launches and a synchronisation
through the shim CUDA runtime, called with ctypes.PyDLL so that the GIL is
held during the calls: the GIL is then the only thing the feeder waits for
(the shim's syncs spin). Another thread, cg-pybusy-0, is busy for --busy-us
then sleeps --idle-us, over and over, in one of two ways:

  --mode py   pure-Python bytecode: CPython makes it give the GIL back when
              the feeder has asked for 5 ms (the switch interval)
  --mode c    one long C call that holds the GIL (sum over a range): it gives
              it back only when the call returns

Every phase is timed by the thread's own clocks (wall, thread CPU time, the
run-queue wait of /proc/thread-self/schedstat): time off the CPU that is
neither is waiting for the GIL. Writes causegen's JSON format (--truth).

  python3 gilgen.py --lib LIBCUDART [--seconds S] [--host-us U] [--kernels K]
      [--kernel-us U] [--mode py|c] [--busy-us U] [--idle-us U] [--cpu N]
      [--helper-cpu N] [--truth FILE]
"""
import argparse
import ctypes
import json
import os
import sys
import threading
import time

PR_SET_NAME = 15


def name_thread(name):
    libc = ctypes.CDLL(None)
    libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()), 0, 0, 0)


def pin(cpu):
    os.sched_setaffinity(0, {cpu})  # this thread: the tid is the calling thread's


class Clocks:
    """The thread's clocks, read without letting go of the GIL: os.pread
    would, and each such release wakes the busy thread waiting for the GIL
    before its 5 ms are up, so that it never asks for it (CPython restarts
    the wait): the feeder would then hardly wait for the GIL at all."""

    def __init__(self):
        self.fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        self.libc = ctypes.PyDLL(None, use_errno=True)  # calls keep the GIL
        self.libc.pread.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                                    ctypes.c_long]
        self.buf = ctypes.create_string_buffer(128)

    def runq(self):
        n = self.libc.pread(self.fd, self.buf, 127, 0)
        if n <= 0:
            raise OSError(ctypes.get_errno(), "pread /proc/thread-self/schedstat")
        return int(self.buf.raw[:n].split()[1])

    def mark(self):
        while True:
            rq = self.runq()
            cpu = time.thread_time_ns()
            wall = time.monotonic_ns()
            if self.runq() == rq:
                return wall, cpu, rq


class Acct:
    def __init__(self):
        self.wall = self.cpu = self.pre = self.n = 0

    def add(self, b, e):
        self.wall += e[0] - b[0]
        self.cpu += e[1] - b[1]
        self.pre += e[2] - b[2]
        self.n += 1

    def clip(self):
        self.pre = min(self.pre, self.wall)
        self.cpu = min(self.cpu, self.wall - self.pre)

    @property
    def off(self):
        return max(0, self.wall - self.cpu - self.pre)

    def json(self):
        return {"wall_ns": self.wall, "cpu_ns": self.cpu, "preempted_ns": self.pre,
                "off_ns": self.off, "count": self.n}


def busy_python(ns):
    end = time.monotonic_ns() + ns
    x = 1
    while time.monotonic_ns() < end:
        for _ in range(200):
            x = (x * 3 + 1) & 0xffff
    return x


def busy_c(n):
    return sum(range(n))  # one C call: no switch until it returns


def calibrate_c(ns):
    """The range length that sum() takes ns over, on this machine now."""
    n = 100000
    while True:
        t = time.monotonic_ns()
        busy_c(n)
        d = time.monotonic_ns() - t
        if d > 2000000:
            return max(1000, int(n * ns / d))
        n *= 4


def busy_main(a, started):
    name_thread("cg-pybusy-0")
    pin(a.helper_cpu)
    started.append(threading.get_native_id())
    n = calibrate_c(a.busy_us * 1000) if a.mode == "c" else 0
    while True:
        if a.mode == "c":
            busy_c(n)
        else:
            busy_python(a.busy_us * 1000)
        time.sleep(a.idle_us / 1e6)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--host-us", type=float, default=200)
    ap.add_argument("--kernels", type=int, default=2)
    ap.add_argument("--kernel-us", type=float, default=1000)
    ap.add_argument("--mode", choices=("py", "c"), default="py")
    ap.add_argument("--busy-us", type=float, default=3000)
    ap.add_argument("--idle-us", type=float, default=5000)
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    ap.add_argument("--helper-cpu", type=int, default=min(os.sched_getaffinity(0)))
    ap.add_argument("--truth")
    ap.add_argument("--dir")  # the sweep passes it to every workload
    a = ap.parse_args()
    os.environ["SHIM_SYNC"] = "spin"  # read at the shim's first call
    lib = ctypes.PyDLL(a.lib)  # the GIL is held during the calls
    lib.shimSetKernelTime(ctypes.c_ulonglong(int(a.kernel_us * 1000)))
    # the tracer's wall time of a thread starts at its first CUDA call: so
    # does the measure, the set-up below (asleep, mostly) a part of it
    ck = Clocks()
    first = ck.mark()
    stream = ctypes.c_void_p()
    buf = ctypes.c_void_p()
    lib.cudaStreamCreate(ctypes.byref(stream))
    lib.cudaMalloc(ctypes.byref(buf), ctypes.c_size_t(4096))
    args = (ctypes.c_void_p * 1)(ctypes.addressof(buf))

    pin(a.cpu)
    started = []
    threading.Thread(target=busy_main, args=(a, started), daemon=True).start()
    while not started:
        time.sleep(0.001)
    time.sleep(0.3)  # its calibration, and the tracer's look at the interpreter

    ph = {k: Acct() for k in ("host", "launch", "sync")}
    res = Acct()
    kernels = syncs = steps = 0
    b0 = last = ck.mark()
    end = b0[0] + int(a.seconds * 1e9)
    # cudaLaunchKernel(func, dim3 grid, dim3 block, args, shmem, stream): a dim3
    # (12 bytes) goes in two registers on x86-64, x | y << 32 and z
    launch = lib.cudaLaunchKernel
    launch.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint64,
                       ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    while last[0] < end:
        b = last  # no code between two phases: no residue for the GIL to land in
        busy_python(int(a.host_us * 1000))
        e = ck.mark()
        ph["host"].add(b, e)
        for _ in range(a.kernels):
            launch(ctypes.cast(lib.cudaMalloc, ctypes.c_void_p), 64 | (1 << 32), 1,
                   256 | (1 << 32), 1, args, 0, stream)
        kernels += a.kernels
        b = ck.mark()
        ph["launch"].add(e, b)
        lib.cudaStreamSynchronize(stream)
        syncs += 1
        last = ck.mark()
        ph["sync"].add(b, last)
        steps += 1
    setup = Acct()
    setup.add(first, b0)
    wall = last[0] - first[0]
    for x in list(ph.values()) + [res, setup]:
        x.clip()
    H, L, S = ph["host"], ph["launch"], ph["sync"]
    gil = H.off + L.off + S.off + res.off  # nothing else makes it wait
    gpu_work = kernels * int(a.kernel_us * 1000)
    parts = {p: 0 for p in ("gpu_wait", "api", "call_preempted", "host_cpu", "preempted",
                            "io_wait", "task_wait", "sleep", "fault", "unknown", "throttled",
                            "file_io", "cold_read", "mem_pressure", "lock_wait", "gil_wait",
                            "backpressure", "net_wait", "stopped")}
    parts.update(gpu_wait=S.cpu, api=L.cpu, call_preempted=L.pre + S.pre,
                 host_cpu=H.cpu + res.cpu + setup.cpu, preempted=H.pre + res.pre + setup.pre,
                 gil_wait=gil, sleep=setup.off)
    parts["gpu_wait"] += wall - sum(parts.values())  # the clocks' few ns apart
    zero = Acct().json()
    truth = {
        "generator": "gilgen", "format": 2, "argv": sys.argv,
        "pid": os.getpid(), "tid": threading.get_native_id(), "comm": "python3",
        "cpu": a.cpu, "helper_cpu": a.helper_cpu, "steps": steps, "wall_ns": wall,
        "start_ns": first[0], "end_ns": last[0], "setup_ns": setup.wall,
        "phases": {"loader": zero, "host": H.json(), "io": zero, "sleep": setup.json(), "alloc": zero,
                   "copy": zero, "launch": L.json(), "sync": S.json()},
        "residue": dict(res.json(), share=res.wall / wall if wall else 0),
        "total": {"cpu_ns": H.cpu + L.cpu + S.cpu + res.cpu + setup.cpu,
                  "preempted_ns": H.pre + L.pre + S.pre + res.pre + setup.pre,
                  "off_ns": gil + setup.off},
        "parts": parts,
        "gpu": {"work_ns": gpu_work, "kernels": kernels, "kernel_ns": int(a.kernel_us * 1000),
                "syncs": syncs, "syncs_per_s": syncs * 1e9 / wall if wall else 0,
                "busy_share": gpu_work / wall if wall else 0, "idle_ns": max(0, wall - gpu_work),
                "copies": 0, "copy_bytes": 0,
                # what the host waited for the GPU: the sync's spin (a GIL wait
                # between a launch and its sync overlaps the kernel's run)
                "waited_ns": S.cpu},
        "loader": {"workers": 0, "period_ms": 0, "busy_pct": 0, "prefetch": 0, "batches": 0},
        "io": {"writes": 0, "bytes": 0, "file": "", "dev": "", "disk": "", "fs": "", "mount": "",
               "source": ""},
        "hogs": {"count": 0, "nice": 0, "cpu": a.cpu},
        "alloc": {"count": 0, "us": 0, "every": 1, "bytes": 0},
        "host_us": a.host_us, "sleep_us": 0,
        "mechs": [{"name": "gil-" + a.mode, "class": "gil_wait", "rule": "off", "rest": "",
                   "us": a.busy_us, "steps": steps, "wall_ns": wall, "cpu_ns": 0,
                   "preempted_ns": 0, "off_ns": gil, "psi_ns": 0, "port": 0, "file": ""}],
        "quota": {"pct": 0}, "mem_limit_mb": 0, "own_hogs": 0,
        "helpers": [{"pid": started[0], "comm": "cg-pybusy-0", "role": "pybusy",
                     "cpu": a.helper_cpu, "thread": True}],
    }
    text = json.dumps(truth, indent=1)
    if a.truth:
        with open(a.truth + ".tmp", "w") as f:
            f.write(text)
        os.rename(a.truth + ".tmp", a.truth)
    else:
        print(text)
    print(f"gilgen: pid={os.getpid()} steps={steps} wall_s={wall / 1e9:.3f} "
          f"gil_wait={gil / wall if wall else 0:.3f}", file=sys.stderr)
    return 0


sys.exit(main())
