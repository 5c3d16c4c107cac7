#!/usr/bin/env bash
# needs: root
# With the real CUDA toolkit (when /usr/local/cuda is present): a program
# linked against the real libcudart.so, whose calls fail fast without a
# driver, is traced with exact counts and the calls' non-zero return codes.
. "$(dirname "$0")/lib.sh"
need_root
CUDA=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$CUDA/include/cuda_runtime_api.h" ] || ! ls "$CUDA"/lib64/libcudart.so* >/dev/null 2>&1; then
	echo "skip: no CUDA toolkit at $CUDA (this test needs its libcudart.so and headers)"
	exit 77
fi
cat >"$TMP/real.c" <<'C'
#include <cuda_runtime_api.h>
#include <stdio.h>
int main(void)
{
	void *p = 0;
	for (int i = 0; i < 5; i++)
		cudaMalloc(&p, 1 << 20);
	for (int i = 0; i < 3; i++)
		cudaDeviceSynchronize();
	for (int i = 0; i < 4; i++)
		cudaMemcpy(p, p, 16, cudaMemcpyDeviceToHost);
	printf("%d\n", (int)cudaMalloc(&p, 1));
	return 0;
}
C
gcc -I"$CUDA/include" "$TMP/real.c" -L"$CUDA/lib64" -lcudart -Wl,-rpath,"$CUDA/lib64" -o "$TMP/real" \
	|| { echo "FAIL cannot build against $CUDA"; exit 1; }
rc=$("$TMP/real")
echo "untraced: cudaMalloc returns $rc"
"$IG" --events -- "$TMP/real" >"$TMP/real.ev" 2>"$TMP/real.err"
grep -q "libcudart.so" "$TMP/real.err" "$TMP/real.ev" 2>/dev/null; 
expect_eq "cudaMalloc calls" "$(grep -c ' op=cudaMalloc ' "$TMP/real.ev")" 6
expect_eq "cudaDeviceSynchronize calls" "$(grep -c ' op=cudaDeviceSynchronize ' "$TMP/real.ev")" 3
expect_eq "cudaMemcpy calls" "$(grep -c ' op=cudaMemcpy ' "$TMP/real.ev")" 4
expect_eq "cudaMalloc calls returning $rc" "$(grep ' op=cudaMalloc ' "$TMP/real.ev" | grep -c " ret=$rc ")" 6
[ "$rc" != 0 ] && ok "the real runtime fails fast without a driver (error $rc)" || bad "cudaMalloc succeeded?"
finish
