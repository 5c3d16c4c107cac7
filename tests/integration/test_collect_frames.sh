#!/usr/bin/env bash
# needs: root
# Frames mode (--batch -d SECS) of a launched command prints the last,
# partial interval too: over all frames, the calls add up to the
# workload's own counts, exactly, in text and in JSON, with -d 1 and with
# an interval longer than the rest of the run (-d 5).
. "$(dirname "$0")/lib.sh"
need_root

# JSON: the calls of each frame are the growth of calls_life since the
# previous frame; their sum per op must equal the expect file.
json_sum() { # frames.json -> "op calls" lines
	python3 - "$1" <<'PY'
import json, sys
last, tot = {}, {}
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    for o in json.loads(line)["ops"]:
        tot[o["op"]] = tot.get(o["op"], 0) + o["calls_life"] - last.get(o["op"], 0)
        last[o["op"]] = o["calls_life"]
for op, n in sorted(tot.items()):
    print(op, n)
PY
}
# Text: with a window longer than the run, CALLS is the count so far; the
# growth from frame to frame adds up the same way.
text_sum() { # frames.txt -> "op calls" lines
	awk '/^OP / { t = 1; next } t && NF == 0 { t = 0; next }
	     t { d = $2 - last[$1]; last[$1] = $2; tot[$1] += d }
	     END { for (o in tot) print o, tot[o] }' "$1" | sort
}
frames() { grep -c "${2:-^ingero-top live}" "$1"; }

run_case() { # name, -d, workload iterations
	local name=$1 d=$2 iters=$3
	"$IG" --batch -d "$d" -w 60 --no-system-libs -- "$WL" --iters "$iters" --kernels 4 \
		--kernel-us 100 --expect "$TMP/$name.t.expect" >"$TMP/$name.txt" 2>"$TMP/$name.t.err"
	expect_eq "$name text: exit status" "$?" 0
	text_sum "$TMP/$name.txt" >"$TMP/$name.t.got"
	expect_counts "$TMP/$name.t.expect" >"$TMP/$name.t.want"
	if diff -u "$TMP/$name.t.want" "$TMP/$name.t.got"; then
		ok "$name text: $(frames "$TMP/$name.txt") frames add up to the workload's $(awk '{s += $2} END {print s}' "$TMP/$name.t.want") calls"
	else
		bad "$name text: frames do not add up"
	fi
	"$IG" --batch --json -d "$d" --no-system-libs -- "$WL" --iters "$iters" --kernels 4 \
		--kernel-us 100 --expect "$TMP/$name.j.expect" >"$TMP/$name.json" 2>"$TMP/$name.j.err"
	expect_eq "$name JSON: exit status" "$?" 0
	json_sum "$TMP/$name.json" >"$TMP/$name.j.got"
	expect_counts "$TMP/$name.j.expect" >"$TMP/$name.j.want"
	if diff -u "$TMP/$name.j.want" "$TMP/$name.j.got"; then
		ok "$name JSON: $(frames "$TMP/$name.json" '^{') frames add up to the workload's calls"
	else
		bad "$name JSON: frames do not add up"
	fi
}

# About 2.5 s of calls: frames at 1 s, 2 s and the rest.
run_case d1 1 6000
# About 6 s with frames every 5 s: one full frame, then the last second or so.
run_case d5 5 14000
n=$(frames "$TMP/d5.txt")
[ "$n" -ge 2 ] && ok "d5: $n text frames (one partial)" || bad "d5: $n text frames, want >= 2"
finish
