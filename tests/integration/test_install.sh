#!/usr/bin/env bash
# needs: root
# `make install` puts what --demo runs beside the binary's prefix
# (PREFIX/libexec/ingero-top: the workload, its helper programs, the shim
# libraries; PREFIX/share/ingero-top/scenarios: the recordings), and the
# installed binary, far from the build tree, runs a demo from there; without
# them it says what to do in one line.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$IG" ] && [ -x "$WL" ] || { echo "skip: build first (make test-build)"; exit 77; }
D=$TMP/dest
make -C "$ROOT" --no-print-directory -s BUILD="${BUILD:-build}" install DESTDIR="$D" PREFIX=/opt/ig \
	>"$TMP/install.log" 2>&1
expect_eq "make install exit status" "$?" 0
for f in bin/ingero-top libexec/ingero-top/workload libexec/ingero-top/tests/progs/hog \
	libexec/ingero-top/tests/progs/trainer libexec/ingero-top/tests/progs/dataloader \
	libexec/ingero-top/shim/libcudart.so.12 libexec/ingero-top/shim/libcuda.so.1 \
	share/ingero-top/scenarios/cpu-contention.db; do
	[ -e "$D/opt/ig/$f" ] || bad "not installed: $f"
done
# the workload finds its shim libraries where they were installed
ldd "$D/opt/ig/libexec/ingero-top/workload" | grep -q "$D/opt/ig/libexec/ingero-top/shim/libcudart.so.12" \
	&& ok "the installed workload loads the installed shim" \
	|| bad "workload libraries: $(ldd "$D/opt/ig/libexec/ingero-top/workload" | grep -i cud)"
# a copy out of the build tree runs a demo from libexec
cd "$TMP"
timeout 120 "$D/opt/ig/bin/ingero-top" --demo cpu-contention --batch -n 1 -d 1 >"$TMP/demo.out" 2>&1
expect_eq "installed --demo exit status" "$?" 0
grep -q "attach: .*/opt/ig/libexec/ingero-top/shim/libcudart.so.12" "$TMP/demo.out" \
	&& ok "the demo's workload ran from libexec" || bad "demo: $(head -n 5 "$TMP/demo.out")"
grep -q "^cudaLaunchKernel " "$TMP/demo.out" && ok "a frame with the demo's calls" \
	|| bad "no frame: $(tail -n 5 "$TMP/demo.out")"
# without the programs: one line that says how to get them
rm -rf "$D/opt/ig/libexec"
"$D/opt/ig/bin/ingero-top" --demo cpu-contention --batch -n 1 >"$TMP/none.out" 2>&1
rc=$?
[ "$rc" != 0 ] && ok "no demo programs: exit $rc" || bad "no demo programs: exit 0"
grep -q "demo cpu-contention needs .*workload.*make install" "$TMP/none.out" \
	&& ok "it says: $(head -n 1 "$TMP/none.out")" || bad "message: $(cat "$TMP/none.out")"
finish
