#!/usr/bin/env bash
# needs: root
# Scenario gpu-bound (docs/scenarios.md): the training loop alone on its core,
# long kernels, every 10th batch 6x longer. The top chain must be MEDIUM
# GPU-bound wait on cudaStreamSynchronize in trainer: the syncs are blocked,
# not preempted. No CPU-contention chain at all, nothing else above LOW.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario gpu-bound --class gpu_bound --op cudaStreamSynchronize --comm trainer \
	--severity MEDIUM --max-severity MEDIUM --culprit none \
	--evidence 'sync_blocked_pct>=60' --evidence 'sync_preempt_pct<=10' \
	--evidence 'tail_ratio>=3' --forbid cpu_contention
finish
