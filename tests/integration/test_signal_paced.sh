#!/usr/bin/env bash
# needs: root
# A loop paced by a timer's signal (docs/detection.md, the sleep part):
# causegen's paced-sigwait (sigwaitinfo for a one-shot POSIX timer's
# signal) and paced-sigsuspend (the same signal with a handler, waited for
# in sigsuspend). The interrupt that ends each wait runs posix_timer_fn:
# the waits are timer sleeps, not an off-CPU wait of unknown reason. The
# timer_sleep chain says a timer's signal, its impact is within 7 points
# of the share causegen measured off CPU in the mechanism, it has a call
# site (stacks on: the signal waits are pacing syscalls), and no
# offcpu_wait chain is left.
. "$(dirname "$0")/lib.sh"
need_root
pick_cpus 2
for m in paced-sigwait paced-sigsuspend; do
	mech_run "$m:3000"
	PYTHONPATH=$ROOT/tests/integration python3 - "$TMP/$m.json" "$TMP/$m.truth" "$m" \
		>>"$TMP/check.txt" <<'PY'
from mech_case import s, t, m, share, check
mine = {x["class"]: x for x in s["chains"] if x["pid"] == t["pid"]}
c = mine.get("timer_sleep")
check(c is not None and "(waits for a timer's signal)" in c["summary"],
      f"a timer_sleep chain says a timer's signal: {c and c['summary']}")
check(c is not None and abs(c["impact"] - share) <= 0.07,
      f"impact {c and round(c['impact'] * 100, 1)}% within 7 points of the measured {share * 100:.1f}%")
check(c is not None and c.get("stack_id") and c.get("call_site"),
      f"with a call site: {c and c.get('call_site')}")
check("offcpu_wait" not in mine, f"no off-CPU wait of unknown reason: {sorted(mine)}")
PY
done
cat "$TMP/check.txt"
FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.txt")))
finish
