"""queuefeed: a Python feeding thread that takes each batch from a
queue.Queue a producer thread fills every --every-ms (it sleeps between
items, so the GIL is free): the feeder's waits are a condition's, in
Queue.get, ended by the producer. For the call site of a lock wait
(tests/integration/test_lock_site.sh). Writes "pid P", "feeder T",
"producer T" (native thread ids) to EXPECT once both run.

  python3 queuefeed.py LIBCUDART SECONDS EXPECT [--every-ms MS]
"""
import ctypes
import queue
import sys
import threading
import time

lib, seconds, expect = sys.argv[1], float(sys.argv[2]), sys.argv[3]
every = float(sys.argv[5]) / 1000 if len(sys.argv) > 5 and sys.argv[4] == "--every-ms" else 0.008
rt = ctypes.CDLL(lib)
batches = queue.Queue(maxsize=2)
producer_tid = []


def produce():
    producer_tid.append(threading.get_native_id())
    while True:
        time.sleep(every)
        batches.put(object())


def next_batch():
    return batches.get()


rt.cudaDeviceSynchronize()  # a feeding thread from the start
threading.Thread(target=produce, name="producer", daemon=True).start()
while not producer_tid:
    time.sleep(0.001)
with open(expect, "w") as f:
    f.write(f"pid {threading.get_native_id()}\nfeeder {threading.get_native_id()}\n"
            f"producer {producer_tid[0]}\n")
end = time.monotonic() + seconds
while time.monotonic() < end:
    next_batch()
    rt.cudaDeviceSynchronize()
