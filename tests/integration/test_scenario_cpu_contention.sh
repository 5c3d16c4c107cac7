#!/usr/bin/env bash
# needs: root
# Scenario cpu-contention (docs/scenarios.md): a launch-bound training loop
# pinned to one core with two CPU hogs on the same core. The top chain must be
# HIGH CPU contention on cudaLaunchKernel in the workload, naming a hog the
# demo started as the preemptor; nothing else above LOW.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario cpu-contention --class cpu_contention --op cudaLaunchKernel \
	--comm 'workload|wl-worker-0' --severity HIGH --culprit helper:ig-hog \
	--evidence 'tail_preempt_pct>=60' --evidence 'tail_ratio>=5' \
	--summary 'preempted by ig-hog\[[0-9]+\]'
finish
