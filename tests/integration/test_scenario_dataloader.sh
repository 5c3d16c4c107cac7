#!/usr/bin/env bash
# needs: root
# Scenario dataloader (docs/scenarios.md): the main process takes batches from
# three forked workers that share one core and does CUDA steps on another. The
# top chain must be HIGH host starvation of dataloader, naming a worker it waits
# on as culprit; the workers preempt each other; nothing else above LOW.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario dataloader --class host_starvation --op cudaStreamSynchronize --comm dataloader \
	--severity HIGH --culprit 'child:dl-worker-[0-9]+' --evidence 'off_between_pct>=50' \
	--summary 'waiting on dl-worker-[0-9]+' \
	--children-preempt-each-other 'dl-worker-[0-9]+'
finish
