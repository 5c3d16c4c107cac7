#!/usr/bin/env bash
# needs: root
# Scenario io-stall (docs/scenarios.md): a training loop that writes a
# 16 MiB checkpoint in 4 shards, each fsync'd, every second step. The top
# chain is file I/O in the process, MEDIUM or HIGH, naming the disk, with at
# least 10 % of the feeder's time in the file syscalls: the kernel's CPU
# writing the checkpoint into the page cache and the waits for the disk are
# one cause (issue 25: the writes' CPU was host work before).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario io-stall --class file_io --op '*' --comm trainer --severity MEDIUM \
	--culprit self --allow host_work --evidence 'file_io_pct>=10' \
	--summary '^file I/O in trainer.*device'
finish
