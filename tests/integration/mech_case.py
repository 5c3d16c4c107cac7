"""The part the integration scripts that judge one causegen mechanism run
(lib.sh mech_run) share, imported by their Python with PYTHONPATH set to
this folder: argv is the run's summary, its truth and the mechanism.

  s      the last summary object of ingero-top --json --summary
  t      causegen's truth
  m      the mechanism's name
  share  the share of the wall time the mechanism measured off the CPU
  check  prints one "ok"/"FAIL" line, the mechanism's name first"""
import json
import sys

s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
t = json.load(open(sys.argv[2]))
m = sys.argv[3]
share = t["mechs"][0]["off_ns"] / t["wall_ns"]


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + f"{m}: {what}")
