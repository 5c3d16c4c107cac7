#!/usr/bin/env bash
# `ingero-top query` cut at its byte cap holds memory in proportion to the
# cap: the peak RSS of the process (getrusage of the child) stays below
# three times the cap, in the three output forms, for rows of integers,
# of short text and of empty strings (at the default 64 MiB cap a query of
# integers took 660 MB as a table and 1 GB as JSON: 40-byte cells counted
# as 8, every cell formatted before the first line, a jansson tree of the
# whole result). A ratio, not a time.
. "$(dirname "$0")/lib.sh"
db=$ROOT/tests/scenarios/memcpy.db
ENDLESS="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"

peak_kib() { # command...: runs it (stdout to /dev/null, stderr to $TMP/q.err), prints its peak RSS in KiB
	python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as err:
    subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$TMP/q.err" "$@"
}

check() { # what, cap (MiB), options and sql...
	local what=$1 cap=$2
	shift 2
	local kib
	kib=$(peak_kib "$IG" query --max-rows 100000000 "$@")
	if ! grep -q "byte cap" "$TMP/q.err"; then
		bad "$what: not cut at the byte cap: $(head -c 200 "$TMP/q.err")"
	elif [ "$kib" -lt $((3 * cap * 1024)) ]; then
		ok "$what: peak RSS $((kib / 1024)) MiB, under 3 x the $cap MiB cap"
	else
		bad "$what: peak RSS $((kib / 1024)) MiB, over 3 x the $cap MiB cap"
	fi
}

for fmt in table csv json; do
	opt=$([ $fmt = table ] || echo "--$fmt")
	# shellcheck disable=SC2086
	check "integers, $fmt" 64 $opt "$db" "$ENDLESS SELECT x, x, x, x FROM c"
	# shellcheck disable=SC2086
	check "short and empty text, $fmt" 64 $opt "$db" "$ENDLESS SELECT x, '', 'cudaLaunchKernel' FROM c"
done
check "integers, --max-bytes 16M" 16 --max-bytes 16M "$db" "$ENDLESS SELECT x, x, x, x FROM c"
finish
