#!/usr/bin/env bash
# `ingero-top check` lists a CUDA library once, with the other names it was
# found by ("also as"): two processes map the same shim libcudart, by their
# /proc/PID/root paths, and it is one file.
. "$(dirname "$0")/lib.sh"
[ -x "$IG" ] && [ -x "$WL" ] || { echo "skip: build first (make test-build)"; exit 77; }

for i in 1 2; do
	"$WL" --wait-signal --iters 1 >"$TMP/w$i.ready" 2>/dev/null &
	eval "wl$i=\$!"
done
cleanup_hooks+=('kill $wl1 $wl2 2>/dev/null')
wait_until 30 grep -q ready "$TMP/w1.ready" || bad "workload 1 never said ready"
wait_until 30 grep -q ready "$TMP/w2.ready" || bad "workload 2 never said ready"

"$IG" check >"$TMP/check.txt" 2>&1
lib=$(readlink -f "$B/shim/libcudart.so.12")
# the lines that name this file: one as the file, the rest as aliases
# (other tests running beside this one may map it too, by their own paths)
file_lines=$(grep -E "^ +(/proc/[0-9]+/root)?$lib\$" "$TMP/check.txt" | grep -vc 'also as')
expect_eq "lines listing the shim libcudart as a file" "$file_lines" 1
for w in $wl1 $wl2; do
	n=$(grep -cE "^ +(also as )?/proc/$w/root$lib\$" "$TMP/check.txt")
	expect_eq "process $w's path to it, once (as the file or an alias)" "$n" 1
done
alias_lines=$(grep -cE "^ +also as /proc/($wl1|$wl2)/root$lib\$" "$TMP/check.txt")
[ "$alias_lines" -ge 1 ] && ok "the other process's path is an alias ($alias_lines)" ||
	bad "neither process's path is an alias of the file"
grep -E "CUDA libraries +[0-9]+ found" "$TMP/check.txt" >/dev/null && ok "the count line" ||
	bad "no 'CUDA libraries N found' line: $(cat "$TMP/check.txt")"
kill -USR1 $wl1 $wl2
wait $wl1 $wl2
finish
