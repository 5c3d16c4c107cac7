#!/usr/bin/env bash
# needs: root
# Asynchronous file I/O waited for (docs/detection.md, "Asynchronous I/O"):
# a loop that submits O_DIRECT reads and waits for them to complete, as an
# offloading trainer's I/O library does, sleeps in io_getevents (Linux AIO)
# or io_uring_enter, woken by the disk's interrupt: no task, no file
# descriptor, and it read as "off-CPU wait, why not recorded". Through the
# real probes, causegen's file-aio and file-uring (raw syscalls, no
# library), each measuring its own time in the reads: the top chain is
# file_io, its impact within 5 points of that, worded as asynchronous I/O
# with the device named; the replay of the last one's recording says the
# same; the same reads with pread (file-dread) keep the words of file
# syscalls. Where io_uring is refused, Linux AIO alone.
. "$(dirname "$0")/lib.sh"
need_root
pick_cpus 2
# O_DIRECT needs a file system on a block device (not tmpfs)
DIR=${SWEEP_IO_DIR:-/var/tmp}/ig-async-io.$$
mkdir -p "$DIR" && cleanup_hooks+=("rm -rf $DIR")
[ "$(stat -c %d "$DIR")" -ge 256 ] || { echo "skip: $DIR is not on a block device"; exit 77; }
dev=$(python3 -c "import os,sys; d=os.stat(sys.argv[1]).st_dev; print(f'{os.major(d)}:{os.minor(d)}')" "$DIR")

# io_uring may be refused (the io_uring_disabled sysctl, a container's
# seccomp filter): then Linux AIO alone
mechs=(file-aio file-uring file-dread)
python3 -c "import ctypes, os, sys
p = ctypes.create_string_buffer(120)
fd = ctypes.CDLL(None, use_errno=True).syscall(425, 4, p)  # io_uring_setup
sys.exit(fd < 0)" || { mechs=(file-aio file-dread); echo "note: io_uring refused here: not tried"; }
for mech in "${mechs[@]}"; do
	rec=()
	[ $mech = "${mechs[-2]}" ] && rec=(--record "$TMP/recorded.db") # the last async one
	timeout 120 "$IG" --json --summary --no-system-libs "${rec[@]}" -- \
		"$B/tests/progs/causegen" --seconds 3 --cpu "${CPUS[1]}" --kernels 2 --kernel-us 1000 \
		--mech $mech:1000 --dir "$DIR" --truth "$TMP/$mech.truth" \
		>"$TMP/$mech.json" 2>"$TMP/$mech.err"
	expect_eq "$mech: exit status" "$?" 0
done
"$IG" --replay "$TMP/recorded.db" --json --summary >"$TMP/replay.json" 2>"$TMP/replay.err"
expect_eq "replay: exit status" "$?" 0

python3 - "$TMP" "$dev" "${mechs[@]}" >>"$TMP/check.txt" <<'PY'
import json, sys
tmp, dev, mechs = sys.argv[1], sys.argv[2], sys.argv[3:]
for name, mech in [(m, m) for m in mechs] + [("replay", mechs[-2])]:
    s = json.loads(open(f"{tmp}/{name}.json").read().splitlines()[-1])
    t = json.load(open(f"{tmp}/{mech}.truth"))
    share = t["mechs"][0]["wall_ns"] / t["wall_ns"]
    c = [x for x in s["chains"] if x["pid"] == t["pid"]]
    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + f"{name}: {what}")
    top = c[0] if c else None
    check(top is not None and top["class"] == "file_io",
          f"the top chain is file_io: {[(x['class'], round(x['impact'] * 100, 1)) for x in c]}")
    if not top or top["class"] != "file_io":
        continue
    check(abs(top["impact"] - share) <= 0.05,
          f"impact {top['impact'] * 100:.1f}% within 5 points of the measured {share * 100:.1f}%")
    aio = mech != "file-dread"
    check(("waiting for asynchronous reads and writes" in top["summary"]) == aio and
          f"(device {dev})" in top["summary"], f"words ({'async' if aio else 'syscalls'}): "
          f"{top['summary']}")
    if aio:
        check(top["recommendations"][0].startswith("Wait later"),
              f"advice: {top['recommendations'][:1]}")
    check(not [x for x in c if x["class"] == "offcpu_wait"], "no unexplained off-CPU wait")
PY
cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
finish
