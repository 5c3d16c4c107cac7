#!/usr/bin/env bash
# Line coverage of src/store reached by a corpus: the harness rebuilt with
# clang's source coverage (no sanitizers), every input run once, then
# llvm-cov's report.   tests/fuzz/coverage.sh CORPUS_DIR [OUT_DIR]
set -eu
cd "$(dirname "$0")/../.."
corpus=$1
out=${2:-$(mktemp -d /tmp/ig-fuzzcov.XXXXXX)}
mkdir -p "$out"
CF="-O1 -g -fprofile-instr-generate -fcoverage-mapping -std=gnu11 -D_GNU_SOURCE -DIG_VERSION=\"cov\" -Isrc -Ibpf -w"
clang $CF -fsanitize=fuzzer -o "$out/fuzz_cov" tests/fuzz/fuzz_replay.c \
	src/core/*.c src/store/*.c src/model/*.c src/detect/*.c -lsqlite3 -ljansson -lbpf -lm -lpthread
LLVM_PROFILE_FILE="$out/cov-%p.profraw" "$out/fuzz_cov" -runs=0 "$corpus" >"$out/run.log" 2>&1
llvm-profdata merge -sparse "$out"/cov-*.profraw -o "$out/cov.profdata"
llvm-cov report "$out/fuzz_cov" -instr-profile="$out/cov.profdata" src/store/*.c | tail -n 25
echo "(profile and binary in $out)"
