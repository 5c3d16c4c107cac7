#!/usr/bin/env bash
# The replay fuzzer's short run (tests/fuzz/README.md): builds the libFuzzer
# harness (make fuzz), makes SQL-level mutants of the shipped recordings
# (fixed seed), runs every one of them and then ~40 s of libFuzzer's own
# mutations: 0 crashes, 0 hangs, 0 slow inputs, 0 sanitizer reports, 0 leaks.
# "Slow" is measured against this machine as it is now, not a fixed 5 s: the
# shipped recordings' seeds are timed first and the per-input limit is 5 s
# times how much slower than the reference VM they ran (at least 5 s); an
# input over it is run again alone to tell a hang (never ends) from a slow
# input (ends, over the limit) and from load (ends in time alone).
# Skips (77) when clang's fuzzer runtime is missing.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
tmp=$(mktemp -d /tmp/ig-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' >"$tmp/t.c"
if ! clang -fsanitize=fuzzer,address,undefined "$tmp/t.c" -o "$tmp/t" 2>"$tmp/cc.err"; then
	echo "skip: clang cannot build a libFuzzer target (apt-get install clang libclang-rt-14-dev): $(head -1 "$tmp/cc.err")"
	exit 77
fi
make -s --no-print-directory -j"$(nproc)" fuzz BUILD="$BUILD" >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log"; echo "FAIL: make fuzz"; exit 1; }
python3 tests/fuzz/mutate_sql.py "$tmp/corpus" 120 7 || { echo "FAIL: mutate_sql.py"; exit 1; }
mkdir "$tmp/work"
FZ=$BUILD/fuzz/fuzz_replay
export ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=16:max_malloc_fill_size=0
export UBSAN_OPTIONS=print_stacktrace=1

# This machine's speed, now (its load included: the script shares the CPUs
# with the other scripts of the pool): the mean time of a seed (a shrunk
# shipped recording), against REF_SEED_MS, the same on the reference VM (2
# CPUs at a load of 4: 41 to 97 ms, 50 typical). The limit scales with it.
REF_SEED_MS=50
"$FZ" -timeout=600 "$tmp"/corpus/seed-*.db >"$tmp/cal.log" 2>&1
seed_ms=$(awk '/^Executed / { s += $(NF - 1); n++ } END { print n ? int(s / n + 0.5) : 0 }' "$tmp/cal.log")
limit=$(((5 * seed_ms + REF_SEED_MS - 1) / REF_SEED_MS))
[ "$limit" -lt 5 ] && limit=5
echo "a seed takes $seed_ms ms here (${REF_SEED_MS} ms on the reference VM): $limit s an input at most"

"$FZ" -max_total_time=40 -timeout="$limit" -rss_limit_mb=2048 \
	-artifact_prefix="$tmp/" -print_final_stats=1 "$tmp/work" "$tmp/corpus" >"$tmp/log" 2>&1
rc=$?
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$tmp/log"
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|slowest_unit_time_sec|peak_rss_mb)' "$tmp/log"

keep() { # keeps the findings where the trap does not remove them
	mkdir -p "${tmp}-crash"
	cp "$tmp"/crash-* "$tmp"/timeout-* "$tmp"/leak-* "$tmp"/slow-unit-* "${tmp}-crash/" 2>/dev/null
}
# An input over the limit, and nothing else wrong: run it again alone, with
# ten times the limit, to say what it was.
timeouts=("$tmp"/timeout-*)
if [ $rc != 0 ] && [ -f "${timeouts[0]}" ] && grep -q 'ERROR: libFuzzer: timeout' "$tmp/log" &&
	! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error' "$tmp/log"; then
	t=${timeouts[0]}
	timeout -k 5 $((10 * limit + 30)) "$FZ" -timeout=$((10 * limit)) "$t" >"$tmp/again.log" 2>&1
	ms=$(awk '/^Executed / { print $(NF - 1) }' "$tmp/again.log")
	if [ -z "$ms" ]; then
		tail -20 "$tmp/again.log"
		echo "FAIL: a hang: an input did not end in $((10 * limit)) s alone (the limit is $limit s); kept in ${tmp}-crash"
		keep
		exit 1
	elif [ "$ms" -gt $((1000 * limit)) ]; then
		echo "FAIL: a slow input: $ms ms alone, over this machine's $limit s (a seed: $seed_ms ms); kept in ${tmp}-crash"
		keep
		exit 1
	fi
	echo "note: an input went over $limit s in the run but took $ms ms alone: the machine's load, not the input"
	echo "ok: no crash, no hang, no input over $limit s alone, no sanitizer report (the run stopped at that input)"
	exit 0
fi
if [ $rc != 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY' "$tmp/log"; then
	grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$tmp/log" | head -20
	tail -40 "$tmp/log"
	echo "FAIL: the fuzzer found a problem (exit $rc); the input is kept in ${tmp}-crash"
	keep
	exit 1
fi
echo "ok: no crash, no input over $limit s, no sanitizer report"
