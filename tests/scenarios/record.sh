#!/usr/bin/env bash
# make scenarios: records tests/scenarios/NAME.db, the recordings that
# `ingero-top --demo NAME` replays for users without root. Each is a run of
# the scenario made by ingero-top itself, shortened with INGERO_DEMO_SCALE
# (src/demo.c) to last at least 20 s and stay under 12 MiB, and kept only
# when its replay's top chain has the scenario's class. Needs root; `make scenarios [SCENARIOS="a b"]`.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
IG=$B/ingero-top
MAX=12582912 # 12 MiB
if [ "$(id -u)" != 0 ]; then
	echo "scenarios: recording needs root (live eBPF); run 'sudo make scenarios'" >&2
	exit 1
fi
# ingero-top on the first CPU this shell may use, the scenarios' programs on
# the last (src/session/demo.c, INGERO_DEMO_CPUS)
mapfile -t cpus < <(taskset -pc $$ | sed 's/.*: *//' | tr ',' '\n' |
	awk -F- 'NF == 2 { for (i = $1; i <= $2; i++) print i; next } { print $1 }' | sort -n)
if [ "${#cpus[@]}" -lt 2 ]; then
	echo "scenarios: need 2 CPUs, this shell may use only: ${cpus[*]}" >&2
	exit 1
fi
want=" ${*:-} "
log=$(mktemp /tmp/ingero-scenarios.XXXXXX)
trap 'rm -f "$log"' EXIT
fails=0
# name, scale of the run (--iters/--seconds), class, seconds, where, rate (scenarios.txt)
while read -r name scale class min_s where rate; do
	[ -n "$name" ] || continue
	[ "$want" = "  " ] || [[ $want == *" $name "* ]] || continue
	out=tests/scenarios/$name.db
	new=$out.new
	rm -f "$new" "$new-wal" "$new-shm"
	t0=$SECONDS
	INGERO_DEMO_SCALE=$scale INGERO_DEMO_CPUS="${cpus[${#cpus[@]} - 1]},${cpus[0]}" \
		taskset -c "${cpus[0]}" "$IG" --demo "$name" --batch --summary -v \
		${rate:+$([ "$rate" != - ] && echo --record-rate "$rate")} \
		--record "$new" >/dev/null 2>"$log"
	rc=$?
	size=$(stat -c %s "$new" 2>/dev/null || echo 0)
	top=$("$IG" --replay "$new" --batch --summary 2>/dev/null |
		awk '/^CHAINS/ { getline; print $3; exit }')
	if [ "$where" = any ] && "$IG" --replay "$new" --batch --summary 2>/dev/null |
		grep -qE "^\[[A-Z]+\] chain-[0-9]+ $class "; then
		top=$class # a chain of the summary has the class
	fi
	[ "$where" = none ] && [ "$top" = "" ] && top=$class # no chain expected
	span=$(sqlite3 "$new" "SELECT (MAX(end_ns) - MIN(start_ns)) / 1000000000 FROM events" 2>/dev/null)
	printf '%-15s scale %-5s exit %d, %3d s, %8d bytes, %3s s of activity, top chain %s\n' "$name" \
		"$scale" "$rc" $((SECONDS - t0)) "$size" "${span:-0}" "${top:-none}"
	if [ "$rc" = 0 ] && [ "$size" -gt 0 ] && [ "$size" -lt $MAX ] && [ "${span:-0}" -ge "$min_s" ] &&
		[ "$top" = "$class" ]; then
		chmod 644 "$new"
		mv -f "$new" "$out"
	else
		echo "scenarios: $name: want exit 0, < $MAX bytes, >= $min_s s and a $class chain ($where); kept the old $out" >&2
		tail -n 5 "$log" >&2
		rm -f "$new" "$new-wal" "$new-shm"
		fails=$((fails + 1))
	fi
done < <(grep -v '^#' tests/scenarios/scenarios.txt)
[ $fails = 0 ]
