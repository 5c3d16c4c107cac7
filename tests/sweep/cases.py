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
# which ~72 us blocked and the rest on the CPU in the kernel.
IO_WALL_US, IO_OFF_US = 120.0, 72.0
# CFS/EEVDF weights of nice levels: an always-runnable feeder (sync in spin
# mode) beside one busy hog at nice n loses w(n) / (w(n) + 1024) of its time.
NICE_W = {0: 1024, 5: 335, 10: 110, 15: 36, 19: 15}



def _fmt(x):
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.1f}"


def hog_share(n, nice):
    w = n * NICE_W[nice]
    return w / (w + 1024)


def loop(host=0.0, sleep=0.0, alloc=0.0, copy=0.0, loader=0.0, io=0.0, loaders=2,
         kernels=2, kernel_us=G_US / 2, syncs=1, hog=None):
    """(causegen arguments, design shares) for the base loop plus causes at
    design shares of the step. hog = (count, nice, spin): busy hogs on the
    feeder's CPU, which take hog_share() of the time the feeder is runnable
    (host work, allocations, and the GPU wait when the sync spins)."""
    g = kernels * kernel_us
    p, spin = (hog_share(hog[0], hog[1]), hog[2]) if hog else (0.0, False)
    g_run = g if spin else 0.0
    # the io phase also spends CPU: its wall is IO_WALL/IO_OFF times its off share
    blocked = sleep + loader + copy + io * IO_WALL_US / IO_OFF_US
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
    if io:
        a += ["--io-writes", str(max(1, round(io * T / IO_OFF_US))), "--io-bytes", "4096"]
    if hog:
        a += ["--hogs", str(hog[0]), "--hog-nice", str(hog[1])]
        a += ["--sync-mode", "spin"] if spin else []
    design = {"host_work": host, "timer_sleep": sleep, "alloc_spikes": alloc,
              "copy_dominated": copy, "loader_wait": loader, "block_io": io,
              "cpu_contention": p * (g_run / (1 - p) + runnable * T) / T,
              "gpu_bound": g / T}
    return a, {k: round(v, 3) for k, v in design.items() if v > 0}


CASES = []


def case(name, spec, intended, healthy=False, quick=False, seconds=SECONDS, extra=()):
    args, design = spec
    CASES.append({"name": name, "args": args + list(extra) + ["--seconds", str(seconds)],
                  "intended": intended, "design": design, "healthy": healthy,
                  "quick": quick})


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
        case(f"io-{p}", loop(io=p / 100), ["block_io"], quick=p == 25)
    args, design = loop(kernels=4, kernel_us=2500)
    case("io-ckpt", (args + ["--io-writes", "1", "--io-bytes", "1048576", "--io-every", "5"],
                     dict(design, block_io=0.015)), ["block_io"])
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
    mix("mix-io25-host15", ["block_io", "host_work"], io=0.25, host=0.15)
    mix("mix-io15-loader30", ["loader_wait", "block_io"], io=0.15, loader=0.3)
    mix("mix-io10-sleep10", ["block_io", "timer_sleep"], io=0.1, sleep=0.1)
    mix("mix-alloc20-sleep10", ["alloc_spikes", "timer_sleep"], alloc=0.2, sleep=0.1)
    mix("mix-copy30-host10", ["copy_dominated", "host_work"], copy=0.3, host=0.1)
    mix("mix-loader25-io25", ["loader_wait", "block_io"], loader=0.25, io=0.25)
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


_healthy()
_single()
_pairs()
