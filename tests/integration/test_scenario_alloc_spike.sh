#!/usr/bin/env bash
# needs: root
# Scenario alloc-spike (docs/scenarios.md): a cudaMalloc/cudaFree per step, and
# every 50th allocation takes 40 ms. The top chain must be MEDIUM allocator
# spikes on cudaMalloc in the workload with a period of 50 allocations (about
# 1 s here: measured in the run's own calls, not in seconds, so that a slow
# machine's longer steps do not fail it); nothing else above LOW.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario alloc-spike --class alloc_spikes --op cudaMalloc --comm 'workload|wl-worker-0' \
	--severity MEDIUM --max-severity MEDIUM --culprit none --period-calls cudaMalloc:50 \
	--evidence 'outliers>=3' --summary 'every ~[0-9.]+ s'
finish
