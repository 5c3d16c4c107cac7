#!/usr/bin/env bash
# The layer rule (docs/architecture.md, make check-layers): the tree passes,
# and a copy of it with one upward include planted (the model including the
# detector, the back edge of round one) fails, naming the file and the line.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
out=$(tests/tools/check_layers.py 2>&1); rc=$?
expect_eq "check-layers on the tree: exit status" "$rc" 0
echo "$out" | tail -n 1
cp -r src tui bpf "$TMP/"
sed -i '0,/#include "core\/event.h"/s//#include "core\/event.h"\n#include "detect\/detect.h"/' "$TMP/src/model/model.h"
grep -q '"detect/detect.h"' "$TMP/src/model/model.h" || bad "the planted include is not there"
out=$(tests/tools/check_layers.py "$TMP" 2>&1); rc=$?
expect_eq "check-layers with model.h including detect/detect.h: exit status" "$rc" 1
echo "$out" | grep -q 'src/model/model.h:[0-9]*: model includes "detect/detect.h" from detect' \
	&& ok "the planted include is named: $(echo "$out" | head -n 1)" || bad "not named: $out"
# an include that is no layer path is refused too
cp -r src tui bpf "$TMP/b/" 2>/dev/null || { mkdir -p "$TMP/b" && cp -r src tui bpf "$TMP/b/"; }
echo '#include "model.h"' >>"$TMP/b/src/detect/rules.c"
out=$(tests/tools/check_layers.py "$TMP/b" 2>&1); rc=$?
expect_eq "check-layers with an include by bare name: exit status" "$rc" 1
finish
