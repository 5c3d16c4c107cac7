#!/usr/bin/env bash
# Golden outputs: `--batch --summary` and `--json --summary` of every shipped
# recording (tests/scenarios/*.db, tests/fixtures/ingero/*.db).
#   tests/golden/run.sh check    compare with tests/golden/*.{txt,json}
#   tests/golden/run.sh update   rewrite them (say why in the commit message)
# Text must match byte for byte; JSON must parse and match value for value
# (key order and number spelling are free, numbers equal within 1e-9
# relative). Run from anywhere; paths in the outputs are relative to the top.
set -u
cd "$(dirname "$0")/../.."
IG=${IG:-$PWD/${BUILD:-build}/ingero-top}
mode=${1:-check}
out=$(mktemp -d /tmp/ig-golden.XXXXXX)
trap 'rm -rf "$out"' EXIT
fails=0
for f in tests/scenarios/*.db tests/fixtures/ingero/*.db; do
	b=$(basename "$f" .db)
	"$IG" --batch --summary --replay "$f" >"$out/$b.txt" 2>&1
	echo "exit $?" >>"$out/$b.txt"
	"$IG" --json --summary --replay "$f" >"$out/$b.json" 2>&1
	if [ "$mode" = update ]; then
		cp "$out/$b.txt" "$out/$b.json" tests/golden/
		continue
	fi
	if ! cmp -s "$out/$b.txt" "tests/golden/$b.txt"; then
		echo "FAIL $b.txt differs:"; diff -u "tests/golden/$b.txt" "$out/$b.txt" | head -40
		fails=$((fails + 1))
	else
		echo "ok   $b.txt"
	fi
	if python3 - "tests/golden/$b.json" "$out/$b.json" <<'PY'; then echo "ok   $b.json"; else fails=$((fails + 1)); fi
import json, math, sys
def load(p):
    with open(p) as f:
        return [json.loads(l) for l in f if l.strip()]
def same(a, b, path):
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        ok = a == b
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        ok = math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    elif isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            print(f"FAIL {path}: keys {sorted(set(a) ^ set(b))} differ"); return False
        return all(same(a[k], b[k], f"{path}.{k}") for k in a)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            print(f"FAIL {path}: {len(a)} items, now {len(b)}"); return False
        return all(same(x, y, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b)))
    else:
        ok = a == b
    if not ok:
        print(f"FAIL {path}: {a!r} became {b!r}")
    return ok
try:
    want, got = load(sys.argv[1]), load(sys.argv[2])
except Exception as e:
    print(f"FAIL {sys.argv[2]}: {e}"); sys.exit(1)
sys.exit(0 if same(want, got, sys.argv[1].split('/')[-1]) else 1)
PY
done
[ "$mode" = update ] && { echo "golden outputs rewritten"; exit 0; }
[ $fails = 0 ] && { echo "all golden outputs match"; exit 0; }
echo "$fails golden output(s) differ"; exit 1
