"""A training-like loop over the shim CUDA runtime through ctypes that sets
CUDA_LAUNCH_BLOCKING=1 itself, as a script does with os.environ before it
imports torch: the variable is in its live environment only, not in
/proc/PID/environ. Each step: host work (a Python busy loop), K kernel
launches, one stream synchronisation. It measures its own time in launches
and prints a JSON truth line at the end:

    python3 launchblock.py --lib LIBCUDART [--seconds S] [--host-us U]
        [--kernels K] [--kernel-us U] [--no-env] [--truth FILE]

The shim reads CUDA_LAUNCH_BLOCKING and SHIM_SYNC at its first call, as
the driver does at cuInit: with it, each launch returns once its kernel has
ended (tests/shim/simgpu.c sim_launch).
"""
import os
import sys
import time

from shimloop import open_shim, parser, write_truth


def main():
    ap = parser(500)
    ap.add_argument("--host-us", type=float, default=1500)
    ap.add_argument("--kernels", type=int, default=4)
    ap.add_argument("--no-env", action="store_true")
    a = ap.parse_args()
    if not a.no_env:
        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"  # the line advice tells to remove
    os.environ.setdefault("SHIM_SYNC", "spin")  # the driver's default with a free core
    launch, sync = open_shim(a.lib, a.kernel_us)
    now = time.perf_counter_ns
    launch_ns = steps = 0
    first = now()
    end = first + int(a.seconds * 1e9)
    t = first
    while t < end:
        spin = t + int(a.host_us * 1000)
        while now() < spin:
            pass
        b = now()
        for _ in range(a.kernels):
            launch()
        t = now()
        launch_ns += t - b
        sync()
        t = now()
        steps += 1
    write_truth(a, {"generator": "launchblock", "steps": steps, "wall_ns": t - first,
                    "launch_ns": launch_ns, "env": not a.no_env})
    return 0


sys.exit(main())
