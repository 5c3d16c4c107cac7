#!/usr/bin/env bash
# The replay fuzzer's short run (tests/fuzz/README.md): builds the libFuzzer
# harness (make fuzz), makes SQL-level mutants of the shipped recordings
# (fixed seed), runs every one of them and then ~40 s of libFuzzer's own
# mutations: 0 crashes, 0 inputs over 5 s, 0 sanitizer reports, 0 leaks.
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
ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=16:max_malloc_fill_size=0 \
UBSAN_OPTIONS=print_stacktrace=1 \
	"$BUILD/fuzz/fuzz_replay" -max_total_time=40 -timeout=5 -rss_limit_mb=2048 \
	-artifact_prefix="$tmp/" -print_final_stats=1 "$tmp/work" "$tmp/corpus" >"$tmp/log" 2>&1
rc=$?
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$tmp/log"
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|slowest_unit_time_sec|peak_rss_mb)' "$tmp/log"
if [ $rc != 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY' "$tmp/log"; then
	grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$tmp/log" | head -20
	tail -40 "$tmp/log"
	echo "FAIL: the fuzzer found a problem (exit $rc); the input is kept in ${tmp}-crash"
	mkdir -p "${tmp}-crash"; cp "$tmp"/crash-* "$tmp"/timeout-* "$tmp"/leak-* "${tmp}-crash/" 2>/dev/null
	exit 1
fi
echo "ok: no crash, no input over 5 s, no sanitizer report"
