#!/usr/bin/env bash
# The CPython structure offsets of src/pyframes.c equal offsetof() computed
# by the C compiler on each installed CPython's own headers (3.10, 3.11,
# 3.12: Debian's python3.11-dev, pyenv builds, IG_TEST_PYTHON_INCLUDES=dir:dir).
# tests/unit/test_pyframes.c checks the same tables on running interpreters.
. "$(dirname "$0")/lib.sh"
ST=$B/tests/tools/stacktrace
[ -x "$ST" ] || { echo "skip: $ST not built (make test-build)"; exit 77; }

dirs=$(ls -d /usr/include/python3.1[0-9] /usr/local/include/python3.1[0-9] \
	/root/.pyenv/versions/3.1*/include/python3.1[0-9] 2>/dev/null)
dirs="$dirs $(echo "${IG_TEST_PYTHON_INCLUDES:-}" | tr ':' ' ')"
checked=0
for inc in $dirs; do
	[ -f "$inc/internal/pycore_runtime.h" ] || continue
	ver=$(basename "$inc" | sed 's/^python//')
	want=$("$ST" --py-offsets "$ver")
	if [ "$want" = unsupported ]; then
		ok "$inc: CPython $ver is not in the tables (refused at run time)"
		continue
	fi
	if ! ${CC:-cc} -w -I"$inc" -o "$TMP/probe-$ver" "$ROOT/tests/integration/pyoffsets_probe.c" 2>"$TMP/cc-$ver.err"; then
		bad "$inc: probe does not compile: $(head -3 "$TMP/cc-$ver.err")"
		continue
	fi
	got=$("$TMP/probe-$ver")
	if diff <(echo "$want" | sort) <(echo "$got" | sort) >"$TMP/diff-$ver"; then
		ok "$inc: $(echo "$want" | wc -l) offsets of CPython $ver equal the headers'"
	else
		bad "$inc: offsets differ (ours vs headers):"; cat "$TMP/diff-$ver"
	fi
	checked=$((checked + 1))
done
[ $checked -gt 0 ] || { echo "skip: no CPython 3.10-3.12 headers installed"; exit 77; }
finish
