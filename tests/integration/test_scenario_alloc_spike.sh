#!/usr/bin/env bash
# needs: root
# Scenario alloc-spike (docs/scenarios.md): a GPU-bound loop whose every
# 50th cudaMalloc takes 40 ms. The top actionable chain is allocator spikes on
# cudaMalloc with a period of ~50 calls; its impact (the outliers' excess
# time, ~4 % of the wall) makes it LOW; nothing else above LOW.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario alloc-spike --class alloc_spikes --op cudaMalloc --comm 'workload|wl-worker-0' \
	--severity LOW --max-severity MEDIUM --culprit none --period-calls cudaMalloc:50 \
	--evidence 'outliers>=3' --evidence 'impact_pct>=2' --summary 'every ~[0-9.]+m?s'
finish
