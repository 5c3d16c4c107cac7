#!/usr/bin/env bash
# needs: root
# Scenario io-stall (docs/scenarios.md): a training loop that writes a
# 16 MiB checkpoint in 4 shards, each fsync'd, every second step. The top
# chain is a block I/O wait in the process, MEDIUM or HIGH, naming the disk,
# with at least 10 % of the feeder's time asleep in D state; writing the
# checkpoint into the page cache is host work beside it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario io-stall --class block_io --op '*' --comm trainer --severity MEDIUM \
	--culprit self --allow host_work --evidence 'io_wait_pct>=10' \
	--summary '^block I/O wait in trainer.*device'
finish
