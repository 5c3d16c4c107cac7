#!/usr/bin/env bash
# needs: root
# Scenario memcpy (docs/scenarios.md): each step copies 128 MiB host to device
# synchronously and runs 2 ms of kernels. The top chain must be HIGH
# copy-dominated on cudaMemcpy in the workload; nothing else above LOW.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario memcpy --class copy_dominated --op cudaMemcpy --comm 'workload|wl-worker-0' \
	--severity HIGH --culprit none --evidence 'copy_share_pct>=75' \
	--evidence 'mean_copy_bytes>=100000000'
finish
