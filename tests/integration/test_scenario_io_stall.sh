#!/usr/bin/env bash
# needs: root
# Scenario io-stall (docs/scenarios.md): the training thread checkpoints every
# 50 steps: a D2H copy of the weights, then 32 files written and fsync'ed to a
# disk. The top chain must be block I/O (MEDIUM or HIGH) by trainer itself
# during the cudaMemcpy tail; nothing else above LOW.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario io-stall --class block_io --op cudaMemcpy --comm trainer --severity MEDIUM \
	--culprit self --evidence 'io_ops>=200' --summary 'block I/O requests by trainer'
finish
