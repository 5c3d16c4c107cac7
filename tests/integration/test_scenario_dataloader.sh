#!/usr/bin/env bash
# needs: root
# Scenario dataloader (docs/scenarios.md): a training loop fed by three
# data-loader worker processes that cannot keep up. The top chain is a HIGH
# data-loader wait naming a worker (a child of the process) as the waker,
# with at least half of the feeder's time waiting for it (a batch costs 30
# ms of the workers' CPU time, measured by their CPU clock, against ~4 ms of
# simulated GPU work a step: the wait is ~85 % whatever the CPU's speed),
# within 7 points of the wait the main thread measured in its reads
# (wait_pct); the workers preempt each other on their core.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario dataloader --class loader_wait --op '*' --comm dataloader \
	--severity HIGH --culprit 'child:dl-worker-[0-9]+' --evidence 'task_wait_pct>=50' \
	--measured wait_pct:7 \
	--summary '^data-loader wait on dl-worker-[0-9]+' \
	--children-preempt-each-other 'dl-worker-[0-9]+'
finish
