#!/usr/bin/env bash
# needs: root
# Scenario cpu-contention (docs/scenarios.md): a launch-bound training loop
# pinned to one core with a CPU hog on the same core. The top chain must be
# HIGH CPU contention in the workload naming the hog the demo started, with at
# least 30 % of the feeding thread's time preempted; the launches' own CPU
# work (0.5 ms each) may show as launch overhead beside it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario cpu-contention --class cpu_contention --op '*' \
	--comm 'workload|wl-worker-0' --severity HIGH --culprit helper:ig-hog \
	--allow launch_bound --evidence 'impact_pct>=30' \
	--summary '^CPU contention by ig-hog\[[0-9]+\]'
finish
