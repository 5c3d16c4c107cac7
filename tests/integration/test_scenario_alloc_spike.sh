#!/usr/bin/env bash
# needs: root
# Scenario alloc-spike (docs/scenarios.md): a cudaMalloc/cudaFree per step, and
# every 50th allocation takes 40 ms. The top chain must be MEDIUM allocator
# spikes on cudaMalloc in the workload with a period of about 1 s; nothing else
# above LOW.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario alloc-spike --class alloc_spikes --op cudaMalloc --comm 'workload|wl-worker-0' \
	--severity MEDIUM --max-severity MEDIUM --culprit none --evidence 'period_s>=0.6' \
	--evidence 'period_s<=1.6' --evidence 'outliers>=3' --summary 'every ~[0-9.]+ s'
finish
