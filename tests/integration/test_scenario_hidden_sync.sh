#!/usr/bin/env bash
# needs: root
# Scenario hidden-sync (docs/scenarios.md): every step launches one 5 us
# kernel and reads 4 bytes back (a hidden .item()): tens of thousands of
# synchronisations a second, each finding almost no GPU work. The top chain
# is a sync storm (the API round trips the GPU waits for), at least MEDIUM;
# the time the loop spends between calls may show as host work beside it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario hidden-sync --class sync_storm --op cudaMemcpy --comm 'workload|wl-worker-0' \
	--severity MEDIUM --culprit self --allow host_work --evidence 'syncs_per_s>=1000' \
	--evidence 'impact_pct>=15' --summary '^sync storm in workload'
finish
