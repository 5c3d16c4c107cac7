"""Loads the shim CUDA runtime with dlopen (ctypes) only when told to, the
way a Python program loads a pip wheel's libcudart when it first needs it,
then makes a known number of calls.

    python3 late_dlopen.py LIBCUDART GO_FILE CALLS PAUSE_S

Prints "ready PID", waits until GO_FILE exists, dlopens LIBCUDART, sleeps
PAUSE_S, makes CALLS cudaMalloc + cudaFree pairs (each calling the shim
driver's cuMemAlloc / cuMemFree), and prints "done"."""
import ctypes
import os
import sys
import time


def main():
    lib_path, go, calls, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    print("ready", os.getpid(), flush=True)
    while not os.path.exists(go):
        time.sleep(0.02)
    lib = ctypes.CDLL(lib_path)
    time.sleep(pause)
    p = ctypes.c_void_p()
    for _ in range(calls):
        lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(4096))
        lib.cudaFree(p)
    time.sleep(0.3)
    print("done", flush=True)


main()
