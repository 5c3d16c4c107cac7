#!/usr/bin/env bash
# needs: root
# Scenario hidden-sync (docs/scenarios.md): per item, a small kernel, a 4-byte
# device-to-host cudaMemcpy (the .item() pattern) and a stream sync. The top
# chain must be HIGH sync storm in the workload, mostly cudaMemcpy; nothing else
# above LOW.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario hidden-sync --class sync_storm --op cudaMemcpy --comm 'workload|wl-worker-0' \
	--severity HIGH --culprit none --evidence 'syncs_per_s>=400' \
	--evidence 'sync_wall_pct>=50' --summary '4 B avg'
finish
