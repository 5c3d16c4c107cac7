#!/usr/bin/env bash
# needs: root
# The real-GPU check (tests/gpu/real_gpu_check.sh) on the shim, so CI keeps
# the script that runs on a lent H100 working: the portable ingero-top (the
# file an operator copies to a GPU host) traces the CUDA workload built with
# g++ against the shim, and every comparison of the script must hold:
# exact counts live and replayed, sync durations against the workload's host
# clock and CUDA events, NVML against nvml-read at the same moments, the hog
# named, --pid attach ending with its process. Also: the portable binary
# needs nothing but the C library.
. "$(dirname "$0")/lib.sh"
need_root
P=$B/portable/ingero-top
GW=$B/tests/gpu/gpu_workload_shim
[ -x "$P" ] && [ -x "$GW" ] || { echo "FAIL build $P and $GW first (make test-build)"; exit 1; }

extra=$(ldd "$P" | awk '{print $1}' | grep -Ev '^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|/lib64/ld-linux-x86-64\.so\.2)$')
expect_eq "libraries the portable ingero-top needs beyond the C library" "$extra" ""
"$P" --version >/dev/null 2>&1 && ok "the portable binary runs" || bad "the portable binary does not run"

"$ROOT/tests/gpu/real_gpu_check.sh" --ig "$P" --wl "$GW" --shim "$B/shim" --out "$TMP/out" -- \
	--iters 60 --kernel-us 1000 --copies 4 --bytes 1048576 --async 10 --graph 8 --launches 1000 \
	--contend 1.5 >"$TMP/log" 2>&1
rc=$?
grep -E '^(PASS|FAIL|INFO) ' "$TMP/out/verdict.txt" | grep -v '^PASS real_gpu' | sed 's/^/  /'
expect_eq "real_gpu_check.sh on the shim: exit status" "$rc" 0
grep -q '^PASS real_gpu_check (shim): every comparison holds' "$TMP/out/verdict.txt" &&
	ok "verdict: every comparison holds" || { bad "verdict: $(head -1 "$TMP/out/verdict.txt")"; tail -20 "$TMP/log"; }

# Where tracing is refused (here: not root), the verdict says what was
# refused and the script exits 3: a finding about where it can run.
# (a copy in $TMP: the checkout may be in a directory nobody cannot enter)
nb=$TMP/nb
mkdir -p "$nb/gpu" "$nb/tests/gpu" "$nb/shim" "$TMP/nobody" && chmod 777 "$TMP/nobody"
cp "$ROOT/tests/gpu/real_gpu_check.sh" "$ROOT/tests/gpu/gpu_check.py" "$nb/gpu/"
cp "$GW" "$nb/tests/gpu/" && cp -a "$B/shim/." "$nb/shim/" && cp "$P" "$nb/"
chmod -R a+rX "$nb"
setpriv --reuid=65534 --regid=65534 --clear-groups "$nb/gpu/real_gpu_check.sh" --ig "$nb/ingero-top" \
	--wl "$nb/tests/gpu/$(basename "$GW")" --shim "$nb/shim" --out "$TMP/nobody" -- --iters 5 \
	--launches 10 --bytes 1048576 --contend 0 >"$TMP/nobody.log" 2>&1
expect_eq "real_gpu_check.sh without privileges: exit status" "$?" 3
grep -q '^FAIL the machine refused what ingero-top needs: FAIL privileges' "$TMP/nobody/verdict.txt" &&
	ok "the verdict names the refusal (privileges)" || bad "verdict: $(sed -n 2p "$TMP/nobody/verdict.txt")"
finish
