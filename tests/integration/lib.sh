# Shared helpers for the integration scripts (sourced, not run).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$ROOT/${BUILD:-build}
IG=$B/ingero-top
WL=$B/workload
HOG=$B/tests/progs/hog
TMP=$(mktemp -d /tmp/ig-it.XXXXXX); chmod 755 "$TMP"
FAILS=0
cleanup_hooks=()
trap 'for h in "${cleanup_hooks[@]}"; do eval "$h"; done; rm -rf "$TMP"' EXIT

need_root() { [ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }; }
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
expect_eq() { # what, got, want
	if [ "$2" = "$3" ]; then ok "$1 = $3"; else bad "$1: got '$2', want '$3'"; fi
}
# within what got want pct: |got - want| <= pct% of want
within() {
	if awk -v g="$2" -v w="$3" -v p="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * p / 100) }'; then
		ok "$1 = $2 (want $3 ± $4%)"
	else
		bad "$1 = $2, want $3 ± $4%"
	fi
}
finish() { [ "$FAILS" = 0 ] && { echo "all checks passed"; exit 0; }; echo "$FAILS check(s) failed"; exit 1; }

# Per-op call counts from an --events log: "op count" lines, sorted.
event_counts() { awk '$2 == "call" { for (i = 3; i <= NF; i++) if ($i ~ /^op=/) c[substr($i, 4)]++ } END { for (o in c) print o, c[o] }' "$1" | sort; }
# The same for the pids listed in an expect file only (default mode traces
# every CUDA process on the machine, not just ours).
event_counts_of() { # events, expect
	awk 'NR == FNR { if ($1 == "pid") want["pid=" $2] = 1; next }
	     $2 == "call" && ($3 in want) { for (i = 4; i <= NF; i++) if ($i ~ /^op=/) c[substr($i, 4)]++ }
	     END { for (o in c) print o, c[o] }' "$2" "$1" | sort
}
# The workload's own expectation file, without pid lines, NCCL byte lines and
# zero counts, sorted.
expect_counts() { awk '$1 != "pid" && $1 != "bytes" && $2 > 0' "$1" | sort; }
# The NCCL byte lines of an expectation file ("OP BYTES"), sorted.
expect_bytes() { awk '$1 == "bytes" { print $2, $3 }' "$1" | sort; }
# Value of field NAME= on a line.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

# --- waiting for conditions (never for a fixed time) ----------------------------
# wait_until SECS COMMAND...: runs COMMAND every 0.1 s until it succeeds (0)
# or SECS pass (1). Deadlines are generous: a loaded machine is slow.
wait_until() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}
# lines_at_least FILE PATTERN N: FILE has >= N lines matching (grep -E).
lines_at_least() { [ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -ge "$3" ]; }
# counts_reached EVENTS EXPECT: the calls of the expect file's pids in an
# --events file equal (or exceed) its per-op counts.
# (The two are files: with NR == FNR an empty first file would make the
# expected counts the ones seen, and an empty --events file reach them.)
counts_reached() {
	event_counts_of "$1" "$2" >"$1.now"
	expect_counts "$2" >"$1.want"
	awk 'FILENAME == ARGV[1] { got[$1] = $2; next } (got[$1] + 0) < $2 { short = 1 }
		END { exit short }' "$1.now" "$1.want"
}
# calls_reached EVENTS OP N: at least N "call" lines of OP.
calls_reached() { [ "$(awk '$2 == "call"' "$1" | grep -c " op=$2 ")" -ge "$3" ]; }

# --- CPUs: from the set this shell may use, never a CPU by number ----------------
# allowed_cpus: the CPUs of `taskset -p $$`, one per line, ascending.
allowed_cpus() {
	taskset -pc $$ | sed 's/.*: *//' | tr ',' '\n' |
		awk -F- 'NF == 2 { for (i = $1; i <= $2; i++) print i; next } NF == 1 { print $1 }' | sort -n
}
# mech_run MECH:US: causegen for 4 s (a 100 us kernel, 500 us of host work
# and the mechanism a step; on the second of the CPUs pick_cpus 2 chose,
# its helpers on the first) under ingero-top --json --summary: the summary
# in $TMP/MECH.json, causegen's truth in $TMP/MECH.truth, checked to exit 0.
mech_run() {
	local m=${1%%:*}
	timeout 120 "$IG" --json --summary --no-system-libs -- "$B/tests/progs/causegen" \
		--seconds 4 --cpu "${CPUS[1]}" --helper-cpu "${CPUS[0]}" --kernels 1 \
		--kernel-us 100 --host-us 500 --mech "$1" --truth "$TMP/$m.truth" \
		>"$TMP/$m.json" 2>"$TMP/$m.err"
	expect_eq "$m: exit status" "$?" 0
}
# pick_cpus N: CPUS=(the first N allowed CPUs), or exit 77 saying why.
# live_cmd PID CLASS MARKER PATTERN: traces PID live (--batch --json)
# until a frame holds PATTERN (40 s at most), then sets LIVE_CMD to the
# command a chain of CLASS recommends after ": MARKER", as a user would
# copy it (rec_cmd.py); the frames are in $TMP/live.json
live_cmd() {
	local ig
	"$IG" --pid "$1" --batch --json -n 40 >"$TMP/live.json" 2>"$TMP/live.err" &
	ig=$!
	cleanup_hooks+=("kill $ig 2>/dev/null")
	wait_until 40 grep -q "$4" "$TMP/live.json" || bad "no live $2 chain in 40 s"
	kill "$ig"
	wait "$ig" 2>/dev/null
	LIVE_CMD=$(python3 "$ROOT/tests/integration/rec_cmd.py" "$TMP/live.json" "$2" "$3")
}

pick_cpus() {
	mapfile -t CPUS < <(allowed_cpus)
	if [ "${#CPUS[@]}" -lt "$1" ]; then
		echo "skip: needs $1 CPUs, this shell may use only: $(taskset -pc $$ | sed 's/.*: *//')"
		exit 77
	fi
}

# ingero-top BPF programs and links that no live process holds: what would
# be "left attached" after an exit. Other ingero-top instances running on the
# machine hold theirs through file descriptors and are not counted.
orphan_bpf() { # an exiting instance frees its programs a moment later: poll (20 s)
	local n i
	for i in $(seq 50); do
		n=$(orphan_bpf_once)
		[ "$n" = 0 ] && break
		sleep 0.4
	done
	echo "$n"
}
orphan_bpf_once() {
	python3 - <<'PY'
import glob, json, re, subprocess
names = ("call_enter", "call_exit", "btf_sched_", "raw_sched_", "btf_page_", "raw_page_",
         "btf_rq_", "raw_rq_")
progs = json.loads(subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True,
                                  text=True).stdout or "[]")
ours = {p["id"] for p in progs if p.get("name", "").startswith(names)}
links = json.loads(subprocess.run(["bpftool", "link", "show", "-j"], capture_output=True,
                                  text=True).stdout or "[]")
our_links = {l["id"] for l in links if l.get("prog_id") in ours}
held_progs, held_links = set(), set()
for fi in glob.glob("/proc/[0-9]*/fdinfo/*"):
    try:
        t = open(fi).read()
    except OSError:
        continue
    m = re.search(r"^prog_id:\s*(\d+)", t, re.M)
    if m:
        held_progs.add(int(m.group(1)))
    m = re.search(r"^link_id:\s*(\d+)", t, re.M)
    if m:
        held_links.add(int(m.group(1)))
# A link holds its program; a held link counts as held.
held_progs |= {l["prog_id"] for l in links if l["id"] in held_links}
print(len(ours - held_progs) + len(our_links - held_links))
PY
}
