#!/usr/bin/env python3
"""SQL-level mutants of the shipped recordings, the seed corpus of the
replay fuzzer (tests/fuzz/README.md).

    tests/fuzz/mutate_sql.py OUT_DIR [COUNT] [SEED]

Each mutant is a shrunk copy of a shipped recording (tests/scenarios/*.db,
tests/fixtures/ingero/*.db: a few dozen rows per table, 512-byte pages, so
the fuzzer runs fast) with 1 to 4 random changes: extreme values in every
column that is read (negative, zero, 2^63-1, year 2100 + 1 ns, NULL, text,
blobs, huge text, deep JSON), deleted rows, dropped tables, indexes and
columns, renamed tables and columns, views (recursive ones among them)
named like a project table, an index built descending but declared
ascending, schema_info versions and writers, ops rows that lie, triggers,
a virtual table. Some mutants are left in WAL mode with their WAL appended
to the file (the harness splits them again). The first files are the
shrunk seeds themselves, unmutated."""
import glob
import os
import random
import shutil
import sqlite3
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SEEDS = sorted(glob.glob(os.path.join(ROOT, "tests/scenarios/*.db")) +
               glob.glob(os.path.join(ROOT, "tests/fixtures/ingero/*.db")))
TABLES = ["events", "ops", "sources", "schema_info", "process_names", "sessions",
          "system_snapshots", "causal_chains", "stack_traces", "event_aggregates",
          "ingero_top_nodes", "ingero_top_pruned"]
EXTREME = ["-1", "0", "1", "2147483648", "9223372036854775807", "-9223372036854775808",
           "4102444800000000001", "NULL", "'text'", "x'00ff'", "1e308", "-1e308", "0.5",
           "'%s'" % ("A" * 5000), "4194305", "65536", "1795313950000000000",
           "1795313950000000000 + 9936000000000000"]
JSONS = ["'not json'", "'[]'", "'[1,2,3]'", "'" + "[" * 3000 + "]" * 3000 + "'",
         "'[{\"ts_ns\": -5, \"text\": 7}]'", "'[{\"t\": 9223372036854775807}]'",
         "'[\"\\u0000\\u001b[2J\"]'", "'{\"a\": 1}'", "'[{\"layer\":1,\"op\":null}]'"]


def columns(db, table):
    try:
        return [r[1] for r in db.execute("PRAGMA table_info(%s)" % table)]
    except sqlite3.Error:
        return []


def shrink(src, dst, rnd):
    shutil.copy(src, dst)
    db = sqlite3.connect(dst)
    for t in TABLES:
        try:
            keep = rnd.choice([3, 10, 40])
            db.execute("DELETE FROM %s WHERE rowid NOT IN (SELECT rowid FROM %s ORDER BY "
                       "rowid LIMIT %d)" % (t, t, keep))
        except sqlite3.Error:
            pass
    db.commit()
    db.execute("PRAGMA page_size=512")
    db.execute("VACUUM")
    db.close()


def mutate(db, rnd):
    t = rnd.choice(TABLES)
    cols = columns(db, t)
    kind = rnd.randrange(14)
    if kind <= 4 and cols:  # extreme values
        c = rnd.choice(cols)
        v = rnd.choice(JSONS if c in ("timeline", "recommendations", "frames", "ips")
                       else EXTREME)
        return "UPDATE %s SET %s = %s WHERE rowid IN (SELECT rowid FROM %s ORDER BY random() " \
               "LIMIT %d)" % (t, c, v, t, rnd.choice([1, 1, 3, 1000]))
    if kind == 5:
        return "DELETE FROM %s WHERE random() %% 3 = 0" % t
    if kind == 6:
        return rnd.choice(["DROP TABLE %s" % t, "DROP INDEX idx_events_end",
                           "DROP INDEX idx_events_timestamp"])
    if kind == 7 and cols:
        c = rnd.choice(cols)
        return rnd.choice(["ALTER TABLE %s DROP COLUMN %s" % (t, c),
                           "ALTER TABLE %s RENAME COLUMN %s TO x_%s" % (t, c, c),
                           "ALTER TABLE %s RENAME TO %s_old" % (t, t)])
    if kind == 8:  # a view named like a project table, recursive or not
        body = rnd.choice([
            "SELECT * FROM %s_real" % t,
            "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
            "SELECT * FROM %s_real, r" % t])
        return "ALTER TABLE %s RENAME TO %s_real; CREATE VIEW %s AS %s" % (t, t, t, body)
    if kind == 9:  # an index that does not match its table
        return rnd.choice([
            "DROP INDEX IF EXISTS idx_events_end; CREATE INDEX idx_events_end ON "
            "events(end_ns DESC); PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = "
            "'CREATE INDEX idx_events_end ON events(end_ns)' WHERE name = 'idx_events_end'",
            "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = 'CREATE INDEX "
            "idx_events_timestamp ON events(end_ns)' WHERE name = 'idx_events_timestamp'",
            "PRAGMA writable_schema=ON; UPDATE sqlite_master SET rootpage = rootpage + 1 "
            "WHERE name = 'idx_events_end'"])
    if kind == 10:
        return rnd.choice([
            "UPDATE schema_info SET value = %s WHERE key = 'version'" % rnd.choice(
                ["'0.7'", "'0.11'", "'1.0'", "''", "'x.y'", "NULL"]),
            "UPDATE schema_info SET value = %s WHERE key = 'ingero_top_schema'" % rnd.choice(
                ["'2'", "'0'", "'-1'", "'999999999999'"]),
            "UPDATE schema_info SET value = 'someone' WHERE key = 'writer'",
            "DELETE FROM schema_info WHERE key = 'writer'"])
    if kind == 11:
        return rnd.choice([
            "UPDATE ops SET name = 'cudaMalloc' WHERE rowid IN (SELECT rowid FROM ops ORDER "
            "BY random() LIMIT 3)",
            "UPDATE ops SET op_id = op_id + 1",
            "INSERT INTO ops (source_id, op_id, name) VALUES (1, 5, 'sched_switch')",
            "UPDATE ops SET source_id = 99"])
    if kind == 12:
        return rnd.choice([
            "CREATE TRIGGER tr AFTER INSERT ON events BEGIN DELETE FROM events; END",
            "DROP TABLE stack_traces; CREATE VIRTUAL TABLE stack_traces USING fts5(hash, ips, "
            "frames)",
            "CREATE TABLE zz AS SELECT * FROM events; INSERT INTO events SELECT * FROM zz"])
    return ("INSERT INTO events SELECT * FROM events WHERE rowid IN (SELECT rowid FROM events "
            "ORDER BY random() LIMIT 5)")


def make(i, out, rnd, tmp):
    seed = SEEDS[i % len(SEEDS)]
    path = os.path.join(tmp, "m.db")
    for p in (path, path + "-wal", path + "-shm"):
        if os.path.exists(p):
            os.unlink(p)
    shrink(seed, path, rnd)
    if i < len(SEEDS):  # the shrunk seeds themselves
        shutil.copy(path, os.path.join(out, "seed-%02d.db" % i))
        return
    wal = rnd.random() < 0.15
    db = sqlite3.connect(path, isolation_level=None)
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA wal_autocheckpoint=0")
    for _ in range(rnd.randint(1, 4)):
        try:
            db.executescript(mutate(db, rnd))
        except sqlite3.Error:
            pass
    name = os.path.join(out, "mutant-%05d.db" % i)
    if wal and os.path.exists(path + "-wal"):
        with open(name, "wb") as o:  # the file, padded to 512 bytes, then its WAL
            data = open(path, "rb").read()
            o.write(data + b"\0" * (-len(data) % 512))
            o.write(open(path + "-wal", "rb").read())
        db.close()
    else:
        db.close()
        shutil.copy(path, name)


def main():
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    os.makedirs(out, exist_ok=True)
    tmp = os.path.join(out, ".work")
    os.makedirs(tmp, exist_ok=True)
    for i in range(count):
        make(i, out, rnd, tmp)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
