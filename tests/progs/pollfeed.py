"""A consumer that polls a multiprocessing.Queue (get_nowait, then
time.sleep) fed by a producer process that makes a batch every
--producer-ms of busy work, with a launch and a stream sync through the
shim CUDA runtime per batch; or, with --paced, a loop that paces itself
with one sleep of --producer-ms a step and no producer. Its naps are
time.sleep, or with --nap select what time.sleep is in Python 3.10 and
older (a select() with no file descriptors). It measures the
time it spent waiting (polling or paced), and of that the time asleep (less
its CPU time and run-queue wait meanwhile), and writes a JSON truth:

    python3 pollfeed.py --lib LIBCUDART [--seconds S] [--producer-ms MS]
        [--nap-ms MS] [--nap sleep|select] [--paced] [--truth FILE]
"""
import multiprocessing as mp
import queue
import select
import sys
import time

from shimloop import open_shim, parser, write_truth


def producer(q, ms):
    while True:
        t = time.perf_counter() + ms / 1000
        while time.perf_counter() < t:
            pass
        q.put(b"x" * 100)


def main():
    ap = parser(2000)
    ap.add_argument("--producer-ms", type=float, default=5)
    ap.add_argument("--nap-ms", type=float, default=0.5)
    ap.add_argument("--nap", choices=("sleep", "select"), default="sleep")
    ap.add_argument("--paced", action="store_true")
    a = ap.parse_args()
    nap = time.sleep if a.nap == "sleep" else lambda s: select.select([], [], [], s)
    q = mp.Queue(maxsize=4)
    if not a.paced:
        p = mp.Process(target=producer, args=(q, a.producer_ms), daemon=True)
        p.start()
    launch, sync = open_shim(a.lib, a.kernel_us)
    now = time.perf_counter_ns
    first = now()
    end = first + int(a.seconds * 1e9)
    waited = asleep = steps = 0
    # the wait's own CPU (the checks between naps) and run-queue wait are
    # not its sleep: the sleep is what is left (schedstat's second field)
    rq = open("/proc/thread-self/schedstat", "rb", buffering=0)

    def cpu_rq():
        rq.seek(0)
        return time.thread_time_ns() + int(rq.read().split()[1])
    t = first
    while t < end:
        w, c = now(), cpu_rq()
        if a.paced:
            nap(a.producer_ms / 1000)
        else:
            while True:
                try:
                    q.get_nowait()
                    break
                except queue.Empty:
                    nap(a.nap_ms / 1000)
        waited += now() - w
        asleep += now() - w - (cpu_rq() - c)
        launch()
        sync()
        steps += 1
        t = now()
    write_truth(a, {"generator": "pollfeed", "steps": steps, "wall_ns": t - first,
                    "wait_ns": waited, "asleep_ns": asleep, "paced": a.paced,
                    "nap": a.nap})
    return 0


sys.exit(main())
