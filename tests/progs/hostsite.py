"""A training-like loop over the shim CUDA runtime whose host work between
calls is in two functions of its own: decode() (--decode-us of busy work a
step) and log_step() (--log-us), then a launch and a stream sync. It
measures its own time in each and prints a JSON truth line at the end:

    python3 hostsite.py --lib LIBCUDART [--seconds S] [--decode-us U]
        [--log-us U] [--kernel-us U] [--truth FILE]

The host work's call site is where it runs most: decode().
"""
import sys
import time

from shimloop import open_shim, parser, write_truth

now = time.perf_counter_ns


def busy(us):
    end = now() + int(us * 1000)
    while now() < end:
        pass


def decode(us):
    busy(us)


def log_step(us):
    busy(us)


def main():
    ap = parser(1000)
    ap.add_argument("--decode-us", type=float, default=1500)
    ap.add_argument("--log-us", type=float, default=300)
    a = ap.parse_args()
    launch, sync = open_shim(a.lib, a.kernel_us)
    decode_ns = log_ns = steps = 0
    first = now()
    end = first + int(a.seconds * 1e9)
    t = first
    while t < end:
        b = now()
        decode(a.decode_us)
        m = now()
        log_step(a.log_us)
        t = now()
        decode_ns += m - b
        log_ns += t - m
        launch()
        sync()
        steps += 1
        t = now()
    write_truth(a, {"generator": "hostsite", "steps": steps, "wall_ns": t - first,
                    "decode_ns": decode_ns, "log_ns": log_ns})
    return 0


sys.exit(main())
