#!/usr/bin/env bash
# The layer rule (docs/architecture.md, make check-layers): the tree passes,
# and a copy of it with one upward include planted (the model including the
# detector, the back edge of round one) fails, naming the file and the line;
# so do a library header in a layer that may not use it (<sqlite3.h> in the
# model) and the detector including the model's API instead of its window.
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
# a library header outside its layer
mkdir -p "$TMP/c" && cp -r src tui bpf "$TMP/c/"
sed -i '0,/#include <stdint.h>/s//#include <stdint.h>\n#include <sqlite3.h>/' "$TMP/c/src/model/window.h"
out=$(tests/tools/check_layers.py "$TMP/c" 2>&1); rc=$?
expect_eq "check-layers with <sqlite3.h> in model/: exit status" "$rc" 1
echo "$out" | grep -q 'src/model/window.h:[0-9]*: model includes <sqlite3.h>, a library of store only' \
	&& ok "the library header is named: $(echo "$out" | head -n 1)" || bad "not named: $out"
# the detector sees the model only through model/window.h and its plain
# data, model/stats.h
mkdir -p "$TMP/d" && cp -r src tui bpf "$TMP/d/"
echo '#include "model/model.h"' >>"$TMP/d/src/detect/rules.c"
out=$(tests/tools/check_layers.py "$TMP/d" 2>&1); rc=$?
expect_eq "check-layers with detect/ including model/model.h: exit status" "$rc" 1
echo "$out" | grep -q 'src/detect/rules.c:[0-9]*: detect includes "model/model.h": of model, detect may include only model/stats.h, model/window.h' \
	&& ok "the model API include is named" || bad "not named: $out"
# at link time: each layer links with those below it alone, and an upward
# call planted in the model (a call of report_text) is named
if [ -d "$B/obj/src/core" ]; then
	out=$(tests/tools/check_links.sh "$B" 2>&1); rc=$?
	expect_eq "check-links on the build: exit status" "$rc" 0
	echo "$out" | tail -n 1
	printf 'int report_text(void);\nint planted_upward(void) { return report_text(); }\n' >"$TMP/plant.c"
	cc -c -o "$TMP/plant.o" "$TMP/plant.c"
	out=$(PLANT_model=$TMP/plant.o tests/tools/check_links.sh "$B" 2>&1); rc=$?
	expect_eq "check-links with model calling report_text: exit status" "$rc" 1
	echo "$out" | grep -q '^check-links: model calls report_text, defined in report (allowed: core)' \
		&& ok "the upward call is named: $(echo "$out" | head -n 1)" || bad "not named: $out"
	# the detector reads the window, never the model's API
	printf 'struct ig_model;\nint model_procs(const struct ig_model *, void *, int);\nint planted_read(void) { return model_procs(0, 0, 0); }\n' >"$TMP/read.c"
	cc -c -o "$TMP/read.o" "$TMP/read.c"
	out=$(PLANT_detect=$TMP/read.o tests/tools/check_links.sh "$B" 2>&1); rc=$?
	expect_eq "check-links with detect calling model_procs: exit status" "$rc" 1
	echo "$out" | grep -q '^check-links: detect calls model_procs, defined in model (allowed: core)' \
		&& ok "the call into the model's API is named" || bad "not named: $out"
else
	bad "no objects in $B/obj/src: build first"
fi
finish
