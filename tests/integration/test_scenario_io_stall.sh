#!/usr/bin/env bash
# needs: root
# Scenario io-stall (docs/scenarios.md): a training loop that writes a
# 16 MiB checkpoint in 4 shards, each fsync'd, every second step. The top
# chain is file I/O in the process, naming the disk: the kernel's CPU
# writing the checkpoint into the page cache and the waits for the disk are
# one cause (issue 25: the writes' CPU was host work before).
# How long the writes take is the disk's business, so the trainer sizes its
# steps' GPU work to make them 40 % of its time, whatever the disk, and
# prints the share it measured by its own clocks (file_io_pct): the chain's
# impact must be within 7 points of it, its severity the one the thresholds
# give that impact (MEDIUM or HIGH, since the trainer keeps at least 25 %).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
scenario_needs
scenario io-stall --class file_io --op '*' --comm trainer --severity MEDIUM \
	--culprit self --allow host_work --measured-band 'file_io_pct>=25' \
	--measured file_io_pct:7 --severity-from-impact \
	--summary '^file I/O in trainer.*device'
finish
