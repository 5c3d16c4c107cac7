#!/usr/bin/env bash
# needs: root
# Scenario cold-start (docs/scenarios.md): the first five kernel launches take
# 300 ms each (module loading), then the loop runs steadily. The top chain must
# be the INFO cold start on cudaLaunchKernel; no chain of any class above LOW.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario cold-start --class cold_start --op cudaLaunchKernel \
	--comm 'workload|wl-worker-0' --severity INFO --max-severity INFO --culprit none \
	--evidence 'cold_calls>=5' --evidence 'ratio>=100'
finish
