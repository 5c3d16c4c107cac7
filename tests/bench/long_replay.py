#!/usr/bin/env python3
"""A long recording for tests/bench/bench_walk.c: the events and host
snapshots of a shipped recording repeated back to back, each copy shifted
by the recording's span, to MINUTES of event time. Not a workload anyone
ran: the same 22 s again and again, for what walking costs in a big file.

usage: long_replay.py SRC.db OUT.db MINUTES
"""
import shutil
import sqlite3
import sys

src, out, minutes = sys.argv[1], sys.argv[2], float(sys.argv[3])
shutil.copyfile(src, out)
db = sqlite3.connect(out)
lo, hi = db.execute("SELECT MIN(start_ns), MAX(end_ns) FROM events").fetchone()
span = (hi - lo) // 1_000_000_000 * 1_000_000_000 + 1_000_000_000  # whole seconds
copies = max(1, int(minutes * 60e9 // span))
ev = [r[1] for r in db.execute("PRAGMA table_info(events)") if r[1] != "id"]
snap = [r[1] for r in db.execute("PRAGMA table_info(system_snapshots)") if r[1] != "id"]
shifted = {"timestamp", "start_ns", "end_ns"}


def select(cols, k):
    return ", ".join(f"{c} + {k * span}" if c in shifted else c for c in cols)


db.execute("CREATE TEMP TABLE e0 AS SELECT * FROM events")
db.execute("CREATE TEMP TABLE s0 AS SELECT * FROM system_snapshots")
for k in range(1, copies):
    db.execute(f"INSERT INTO events ({', '.join(ev)}) SELECT {select(ev, k)} FROM e0")
    db.execute(f"INSERT INTO system_snapshots ({', '.join(snap)}) SELECT {select(snap, k)} FROM s0")
db.commit()
n = db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
print(f"{out}: {copies} copies of {span / 1e9:.0f} s, {n} events, {copies * span / 60e9:.1f} min")
