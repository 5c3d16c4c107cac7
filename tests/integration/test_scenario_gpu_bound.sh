#!/usr/bin/env bash
# needs: root
# Scenario gpu-bound (docs/scenarios.md): a loop that waits for a busy GPU,
# with a GPU-side tail (every tenth step six times longer). That is the healthy
# case: GPU-bound, INFO, at least 60 % of the feeder's time waiting for the GPU;
# no CPU contention.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario gpu-bound --class gpu_bound --op '*' --comm trainer \
	--severity INFO --max-severity INFO --culprit none \
	--evidence 'gpu_wait_pct>=60' --forbid cpu_contention
finish
