"""The sweep's cases, generated: causegen arguments from design shares.

Each case is a dict: name, args (causegen arguments, without --truth, --cpu,
--helper-cpu, --dir), intended (the classes the case is about), healthy,
quick (in the quick subset), design (the share of wall time each cause was
designed to take: a guide for reading the results; the checks use the
workload's own measure, never the design).

The base loop is GPU-bound: G = 2 ms of kernels per step, one stream sync.
A cause of share f takes f of the step: with causes of total share F the
step lasts T = G / (1 - F) and cause i takes f_i * T of it.
"""

G_US = 2000.0
SECONDS = 5
# Per 4 KiB write + fdatasync on the test VM's virtio disk: ~120 us, of
# which ~72 us blocked and the rest on the CPU in the kernel. The io phase
# runs for its design's time (--io-us), so these only turn a design's
# blocked share into its wall share.
IO_WALL_US, IO_OFF_US = 120.0, 72.0
# CFS/EEVDF weights of nice levels: an always-runnable feeder (sync in spin
# mode) beside one busy hog at nice n loses w(n) / (w(n) + 1024) of its time.
NICE_W = {0: 1024, 5: 335, 10: 110, 15: 36, 19: 15}



def _fmt(x):
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.1f}"


def hog_share(n, nice):
    w = n * NICE_W[nice]
    return w / (w + 1024)


# The class each mechanism of causegen --mech counts in (tests/progs/causegen/mech.c).
MECH_CLASS = {
    "lock-mutex": "lock_wait", "lock-cond": "lock_wait", "lock-timedcond": "lock_wait",
    "lock-flock": "lock_wait", "lock-timedmutex": "lock_wait", "lock-rwlock": "lock_wait",
    "input-unix": "loader_wait", "input-eventfd": "loader_wait",
    "child-fork": "loader_wait", "child-spawn": "loader_wait",
    "full-pipe": "backpressure", "full-unix": "backpressure", "net-tcp": "net_wait",
    "net-udp": "net_wait", "paced-epoll": "timer_sleep", "paced-timerfd": "timer_sleep",
    "paced-cond": "timer_sleep", "paced-sigwait": "timer_sleep",
    "paced-sigsuspend": "timer_sleep", "file-fsync": "file_io", "file-bigwrite": "file_io",
    "file-dread": "file_io", "file-cread": "file_io", "cold-seq": "cold_read",
    "cold-rand": "cold_read", "fault-malloc": "page_faults", "fault-dontneed": "page_faults",
    "mem-swap": "memory_pressure", "mem-shm": "memory_pressure", "mem-thrash": "memory_pressure",
    "stop-signal": "stopped", "stop-ptrace": "stopped",
    "poll-eventfd": "poll_wait", "poll-unix": "poll_wait", "poll-select": "poll_wait",
    "poll-ppoll": "poll_wait", "paced-select": "timer_sleep", "cow-fork": "page_faults",
    "file-aio": "file_io", "file-uring": "file_io",
}


def loop(host=0.0, sleep=0.0, alloc=0.0, copy=0.0, loader=0.0, io=0.0, loaders=2,
         kernels=2, kernel_us=G_US / 2, syncs=1, hog=None, mech=(), quota=None, own_hogs=0,
         mem_limit=0):
    """(causegen arguments, design shares) for the base loop plus causes at
    design shares of the step. hog = (count, nice, spin): busy hogs on the
    feeder's CPU, which take hog_share() of the time the feeder is runnable
    (host work, allocations, and the GPU wait when the sync spins)."""
    g = kernels * kernel_us
    p, spin = (hog_share(hog[0], hog[1]), hog[2]) if hog else (0.0, False)
    if own_hogs:  # busy threads of its own, at nice 0, on its CPU: spin
        p, spin = hog_share(own_hogs, 0), True
    g_run = g if spin else 0.0
    # the io phase also spends CPU: its wall is IO_WALL/IO_OFF times its off share
    blocked = sleep + loader + copy + io * IO_WALL_US / IO_OFF_US + sum(f for _, f in mech)
    runnable = (host + alloc) / (1 - p)
    assert blocked + runnable < 0.95, (blocked, runnable)
    T = (g_run / (1 - p) + g - g_run) / (1 - runnable - blocked)
    a = ["--kernels", str(kernels), "--kernel-us", _fmt(kernel_us), "--syncs", str(syncs)]
    if host:
        a += ["--host-us", _fmt(host * T)]
    if sleep:  # nanosleep overshoots by the timer slack, ~55 us
        a += ["--sleep-us", _fmt(max(1.0, sleep * T - 55))]
    if alloc:  # one pair costs the allocation + ~10 us (free, calls)
        n = max(1, round(alloc * T / 500))
        a += ["--allocs", str(n), "--alloc-us", _fmt(max(1.0, alloc * T / n - 10))]
    if copy:  # 10 us + 1 ns per 10 bytes
        a += ["--h2d", str(int(max(4096, (copy * T - 10) * 10000)))]
    if loader:  # a batch every T from `loaders` workers
        a += ["--loaders", str(loaders), "--loader-ms", f"{loaders * T / 1000:.3f}"]
    if io:  # for a time, not a count of writes: its share is not the disk's speed
        a += ["--io-us", _fmt(io * T * IO_WALL_US / IO_OFF_US), "--io-bytes", "4096"]
    if hog:
        a += ["--hogs", str(hog[0]), "--hog-nice", str(hog[1])]
        a += ["--sync-mode", "spin"] if spin else []
    if own_hogs:
        a += ["--own-hogs", str(own_hogs), "--sync-mode", "spin"]
    for name, f in mech:
        a += ["--mech", f"{name}:{_fmt(max(50.0, f * T))}"]
    if mem_limit:
        a += ["--mem-limit", str(mem_limit)]
    design = {"host_work": host, "timer_sleep": sleep, "alloc_spikes": alloc,
              "copy_dominated": copy, "loader_wait": loader,
              "file_io": io * IO_WALL_US / IO_OFF_US,
              "cpu_contention": p * (g_run / (1 - p) + runnable * T) / T,
              "gpu_bound": g / T}
    for name, f in mech:
        design[MECH_CLASS[name]] = design.get(MECH_CLASS[name], 0) + f
    if quota:  # pct of one CPU for a loop that always runs (sync spin), burners beside
        pct, burners = quota
        a += ["--cpu-quota", str(pct), "--sync-mode", "spin"]
        if burners:
            a += ["--quota-burners", str(burners)]
        share = 1 - pct / 100 / (1 + burners)
        design = {k: v * (1 - share) for k, v in design.items()}
        design["cpu_quota"] = share
    return a, {k: round(v, 3) for k, v in design.items() if v > 0}


CASES = []


def case(name, spec, intended, healthy=False, quick=False, seconds=SECONDS, extra=(),
         prog="causegen", needs=(), bare_floor=None):
    """bare_floor: {class: share} the generator alone must show, where a third
    of the design is not what it makes (sweep.py bare_check)."""
    args, design = spec
    CASES.append({"name": name, "args": args + list(extra) + ["--seconds", str(seconds)],
                  "intended": intended, "design": design, "healthy": healthy,
                  "quick": quick, "prog": prog, "needs": needs,
                  "bare_floor": bare_floor or {}})


def _healthy():
    for hz, k, us in ((1, 10, 100000), (10, 4, 25000), (100, 2, 5000), (1000, 1, 950)):
        case(f"healthy-{hz}hz", loop(kernels=k, kernel_us=us), ["gpu_bound"], healthy=True,
             quick=hz in (100, 1000), seconds=6 if hz == 1 else SECONDS)
    case("healthy-spin-100hz", loop(kernels=2, kernel_us=5000), ["gpu_bound"], healthy=True,
         extra=["--sync-mode", "spin"])
    case("healthy-host2-100hz", loop(host=0.02, kernels=2, kernel_us=5000), ["gpu_bound"],
         healthy=True)
    case("healthy-2sync-400hz", loop(kernels=4, kernel_us=1250, syncs=2), ["gpu_bound"],
         healthy=True)


def _single():
    for p in (3, 10, 25, 50, 70):
        case(f"host-{p}", loop(host=p / 100), ["host_work"], quick=p == 25)
    for p in (3, 10, 25, 50):
        case(f"sleep-{p}", loop(sleep=p / 100), ["timer_sleep"], quick=p == 3)
    for p in (3, 10, 25, 50):
        case(f"loader-{p}", loop(loader=p / 100), ["loader_wait"], quick=p == 50)
    case("loader-70-one", loop(loader=0.7, loaders=1), ["loader_wait"])
    for p in (3, 10, 25, 50):
        case(f"io-{p}", loop(io=p / 100), ["file_io"], quick=p == 25)
    args, design = loop(kernels=4, kernel_us=2500)
    case("io-ckpt", (args + ["--io-writes", "1", "--io-bytes", "1048576", "--io-every", "5"],
                     dict(design, file_io=0.025)), ["file_io"])
    for n, nice in ((1, 19), (1, 15), (1, 10), (1, 5), (1, 0), (2, 0)):
        case(f"hog-{round(100 * hog_share(n, nice))}", loop(hog=(n, nice, True)),
             ["cpu_contention"], quick=(n, nice) == (1, 0))
    case("hog-between", loop(host=0.25, hog=(2, 0, False)), ["cpu_contention"])
    for p in (3, 10, 25, 50):
        case(f"alloc-{p}", loop(alloc=p / 100), ["alloc_spikes"], quick=p == 25)
    args, design = loop()
    case("alloc-periodic", (args + ["--allocs", "1", "--alloc-us", "8000", "--alloc-every", "10"],
                            dict(design, alloc_spikes=0.28)), ["alloc_spikes"])
    for p in (10, 25, 50):
        case(f"copy-{p}", loop(copy=p / 100), ["copy_dominated"], quick=p == 25)
    # sync storms: 50 syncs per step, one short kernel before each
    for us, idle in ((5, 0.6), (20, 0.35), (50, 0.2), (200, 0.06)):
        args, design = loop(kernels=50, kernel_us=us, syncs=50)
        case(f"storm-{us}us", (args, {"sync_storm": idle, "gpu_bound": 1 - idle}),
             ["sync_storm"], quick=us == 20)


def _pairs():
    def mix(name, intended, quick=False, **kw):
        case(name, loop(**kw), intended, quick=quick)

    mix("mix-host25-sleep25", ["host_work", "timer_sleep"], host=0.25, sleep=0.25)
    mix("mix-host40-sleep10", ["host_work", "timer_sleep"], host=0.4, sleep=0.1)
    mix("mix-sleep40-host10", ["timer_sleep", "host_work"], sleep=0.4, host=0.1)
    mix("mix-host30-loader15", ["host_work", "loader_wait"], host=0.3, loader=0.15)
    mix("mix-loader40-host10", ["loader_wait", "host_work"], loader=0.4, host=0.1)
    mix("mix-io25-host15", ["file_io", "host_work"], io=0.25, host=0.15)
    mix("mix-io15-loader30", ["loader_wait", "file_io"], io=0.15, loader=0.3)
    mix("mix-io10-sleep10", ["file_io", "timer_sleep"], io=0.1, sleep=0.1)
    mix("mix-alloc20-sleep10", ["alloc_spikes", "timer_sleep"], alloc=0.2, sleep=0.1)
    mix("mix-copy30-host10", ["copy_dominated", "host_work"], copy=0.3, host=0.1)
    mix("mix-loader25-io25", ["loader_wait", "file_io"], loader=0.25, io=0.25)
    mix("mix-host20-alloc20", ["host_work", "alloc_spikes"], host=0.2, alloc=0.2)
    mix("mix-sleep20-loader20-host20", ["timer_sleep", "loader_wait", "host_work"],
        sleep=0.2, loader=0.2, host=0.2)
    mix("mix-loader30-hog", ["loader_wait", "cpu_contention"], quick=True, loader=0.3,
        hog=(1, 10, True))
    mix("mix-sleep30-hog", ["timer_sleep", "cpu_contention"], sleep=0.3, hog=(1, 10, True))
    mix("mix-host30-hog", ["cpu_contention", "host_work"], host=0.3, hog=(2, 0, False))
    mix("mix-host20-hog", ["host_work", "cpu_contention"], host=0.2, hog=(1, 0, False))
    args, design = loop(host=0.2, kernels=50, kernel_us=20, syncs=50)
    case("mix-storm-host20", (args, dict(design, sync_storm=0.25)), ["sync_storm", "host_work"])


def _mechanisms():
    """Two mechanisms or more per class of the kernel's evidence, each at
    a weak and a strong share, and mixes (tests/sweep/README.md)."""
    def m(name, intended, quick=False, needs=(), **kw):
        case(name, loop(**kw), intended, quick=quick, needs=needs)

    for mech, shares in (("lock-mutex", (10, 30, 60)), ("lock-cond", (30,)),
                         ("lock-timedcond", (25, 50)), ("lock-flock", (25, 50)),
                         ("lock-timedmutex", (30,)), ("lock-rwlock", (30,)),
                         ("input-unix", (20, 50)), ("input-eventfd", (30,)),
                         ("child-fork", (30,)), ("child-spawn", (30,)),
                         ("full-pipe", (20, 50)), ("full-unix", (30,)),
                         ("net-tcp", (20, 50)), ("net-udp", (30,)),
                         ("paced-epoll", (30,)), ("paced-timerfd", (40,)), ("paced-cond", (20,)),
                         ("paced-sigwait", (30,)), ("paced-sigsuspend", (30,)),
                         ("file-bigwrite", (20, 50)), ("file-dread", (30,)),
                         ("file-cread", (40,)), ("file-aio", (20, 45)), ("file-uring", (30,)),
                         ("cold-seq", (30, 60)), ("cold-rand", (30,)),
                         ("fault-malloc", (20, 50)), ("fault-dontneed", (30,)),
                         ("cow-fork", (20, 45)),
                         ("stop-signal", (15, 40)), ("stop-ptrace", (15, 40)),
                         ("poll-eventfd", (15, 40)), ("poll-unix", (30,)),
                         ("poll-select", (20, 45)), ("poll-ppoll", (30,)),
                         ("paced-select", (30,))):
        for f in shares:
            m(f"{mech}-{f}", [MECH_CLASS[mech]], mech=[(mech, f / 100)],
              quick=(mech, f) in (("lock-mutex", 30), ("file-bigwrite", 50)))
    for mech in ("mem-swap", "mem-shm"):
        m(f"{mech}-30", ["memory_pressure"], mech=[(mech, 0.3)], mem_limit=64, needs=("swap",))
    m("mem-thrash-40", ["file_io", "memory_pressure"], mech=[("mem-thrash", 0.4)], mem_limit=64)
    for pct, burners in ((50, 0), (70, 0), (100, 1)):
        m(f"quota-{pct}" + (f"-burners{burners}" if burners else ""), ["cpu_quota"],
          quota=(pct, burners), host=0.2, quick=(pct, burners) == (50, 0))
    m("own-hogs-1", ["cpu_contention"], own_hogs=1)
    m("own-hogs-2", ["cpu_contention"], own_hogs=2)
    # mixes with the old causes and among the new
    m("mix-lock30-host20", ["lock_wait", "host_work"], mech=[("lock-mutex", 0.3)], host=0.2)
    m("mix-net25-file15", ["net_wait", "file_io"],
      mech=[("net-tcp", 0.25), ("file-bigwrite", 0.15)])
    m("mix-full30-loader20", ["backpressure", "loader_wait"], mech=[("full-pipe", 0.3)],
      loader=0.2)
    m("mix-cold25-faults15", ["cold_read", "page_faults"],
      mech=[("cold-rand", 0.25), ("fault-malloc", 0.15)])
    m("mix-paced30-lock20", ["timer_sleep", "lock_wait"],
      mech=[("paced-epoll", 0.3), ("lock-cond", 0.2)])
    m("mix-quota60-host40", ["cpu_quota", "host_work"], quota=(60, 0), host=0.4)


def _gil():
    """A Python feeder and a busy Python thread (tests/progs/gilgen.py): the
    busy one gives the GIL back at the switch interval (py) or only when its
    C call returns (c). Design: busy/(busy + max(idle, 5 ms)) of the cycle,
    the holder's duty cycle: the most the feeder can wait. It gets the GIL
    back at its own requests, so it waits a fraction of that (16 to 24 % in
    the sweep of 2026-11-27): the generator alone need only show the wait
    (3 %)."""
    for mode, busy, idle in (("py", 3000, 4000), ("py", 6000, 2000), ("c", 4000, 6000),
                             ("c", 8000, 3000)):
        share = busy / (busy + max(idle, 5000))
        case(f"gil-{mode}-{round(100 * share)}",
             (["--mode", mode, "--busy-us", str(busy), "--idle-us", str(idle), "--host-us",
               "200", "--kernels", "1", "--kernel-us", "2000"],
              {"gil_wait": round(share, 3)}), ["gil_wait"], prog="gilgen",
             quick=(mode, busy) == ("py", 3000), bare_floor={"gil_wait": 0.03})


def _launch():
    """Synchronous launches: the loop sets CUDA_LAUNCH_BLOCKING=1 at its start
    (causegen --launch-blocking, as os.environ does), each launch then waits
    for its kernel, spinning (the driver's default). Design: what overlap
    gives back, the smaller of the GPU's share and the host work's; with
    little host work (3 %) there is nothing to give back and no chain; with
    much (70 %), the host work left once launches overlap (40 %) is the top
    cause."""
    for host, k_us, quick in ((0.03, 1000, False), (0.2, 1000, False), (0.4, 1000, True),
                              (0.4, 25, False), (0.7, 1000, False)):
        args, design = loop(host=host, kernel_us=k_us)
        design = {"launch_blocking": round(min(host, 1 - host), 3),
                  "host_work": round(max(0.0, 2 * host - 1), 3)}
        intended = (["gpu_bound"] if host < 0.05 else
                    ["host_work", "launch_blocking"] if host > 0.5 else ["launch_blocking"])
        case(f"launch-blocking-{round(100 * host)}" + ("-short" if k_us < 100 else ""),
             (args, design), intended, quick=quick,
             extra=["--launch-blocking", "1", "--sync-mode", "spin"])


_healthy()
_single()
_pairs()
_mechanisms()
_launch()
_gil()
