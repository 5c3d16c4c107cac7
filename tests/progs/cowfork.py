"""A training-like loop over the shim CUDA runtime that writes its own
buffer each step (a weight update: one byte of every page of a slice of
it), then launches a kernel and synchronises. How its pages come to fault
is the mode:

    fork   each time it has written the whole buffer it forks a child
           (a checkpoint saved by a forked process, as some trainers do)
           that lives until the next one: every page it writes is then
           shared with the child, copied at the first write (copy on write);
    fresh  no fork: each pass over the buffer writes a new one (mapped for
           the pass, unmapped after): fresh memory, faulted in;
    zero   no fork: each pass writes a new anonymous mapping that it read
           first (the kernel maps the zero page on a read): the write
           copies, but nothing was forked.

It measures its own time in the buffer writes (and in making a new buffer:
its reads of the zero page), less its run-queue wait (schedstat), not the
forks themselves, and prints a JSON truth line at the end:

    python3 cowfork.py --lib LIBCUDART [--mode fork|fresh|zero]
        [--mb MB] [--pages N] [--seconds S] [--kernel-us U] [--truth FILE]
"""
import mmap
import os
import signal
import sys
import time

from shimloop import open_shim, parser, write_truth

PAGE = 4096


def main():
    ap = parser(1000)
    ap.add_argument("--mode", choices=("fork", "fresh", "zero"), default="fork")
    ap.add_argument("--mb", type=int, default=128)
    ap.add_argument("--pages", type=int, default=256, help="pages written a step")
    a = ap.parse_args()
    size = a.mb << 20
    launch, sync = open_shim(a.lib, a.kernel_us)
    rq = open("/proc/thread-self/schedstat", "rb", buffering=0)

    def waited():
        rq.seek(0)
        return int(rq.read().split()[1])

    def new_buffer():
        # private: a shared mapping (mmap's default) is not copied on write
        m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
        if a.mode == "zero":
            bytes(memoryview(m)[::PAGE])  # read first: the zero page mapped
        elif a.mode == "fork":
            m[::PAGE] = b"\1" * (size // PAGE)  # its own pages before a fork
        return m

    buf = new_buffer()
    now = time.perf_counter_ns
    child = 0
    write_ns = forks = steps = pos = 0
    step_bytes = a.pages * PAGE
    first = now()
    end = first + int(a.seconds * 1e9)
    t = first
    while t < end:
        if pos == 0:
            if a.mode == "fork":
                if child:
                    os.kill(child, signal.SIGKILL)
                    os.waitpid(child, 0)
                child = os.fork()
                if child == 0:  # the "checkpoint writer": shares every page
                    while True:
                        signal.pause()
                forks += 1
        if pos == 0 and a.mode != "fork" and steps:
            buf.close()  # munmap: a syscall, not a fault
        w, q = now(), waited()
        if buf.closed:
            buf = new_buffer()
        n = min(step_bytes, size - pos)
        buf[pos:pos + n:PAGE] = b"\2" * (n // PAGE)
        write_ns += now() - w - (waited() - q)
        pos = (pos + n) % size
        launch()
        sync()
        steps += 1
        t = now()
    if child:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    write_truth(a, {"generator": "cowfork", "mode": a.mode, "steps": steps,
                    "wall_ns": t - first, "write_ns": write_ns, "forks": forks})
    return 0


sys.exit(main())
