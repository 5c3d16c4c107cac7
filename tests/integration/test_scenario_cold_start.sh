#!/usr/bin/env bash
# needs: root
# Scenario cold-start (docs/scenarios.md): the first five launches take
# 300 ms (module loading), then a steady GPU-bound loop. Beside the healthy
# GPU-bound state (INFO), the chain is a cold start, INFO; nothing above LOW
# (the slow first calls are not launch overhead).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario cold-start --class cold_start --op cudaLaunchKernel \
	--comm 'workload|wl-worker-0' --severity INFO --max-severity INFO --culprit none \
	--skip gpu_bound --evidence 'cold_calls>=5' --evidence 'ratio>=100'
finish
