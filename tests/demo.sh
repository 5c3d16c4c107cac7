#!/usr/bin/env bash
# make demo: `ingero-top --demo cpu-contention` (DEMO=NAME for another
# scenario, docs/scenarios.md). As root the scenario's processes run and are
# traced live; without root ingero-top replays the scenario's recording
# shipped in tests/scenarios/. In a terminal it opens the full-screen viewer
# (quit with q); without one, or with DEMO_BATCH=1 or CI set, it prints a
# batch frame every 2 s and ends with the scenario.
set -u
cd "$(dirname "$0")/.."
B=${BUILD:-build}
IG=$B/ingero-top
name=${DEMO:-cpu-contention}
[ "$(id -u)" = 0 ] || echo "demo: not root, so a recording of $name (live: sudo make demo)"
if [ -t 0 ] && [ -t 1 ] && [ -z "${DEMO_BATCH:-}" ] && [ -z "${CI:-}" ]; then
	exec "$IG" --demo "$name"
fi
echo "demo: $name: a frame every 2 s until the scenario ends"
exec "$IG" --demo "$name" --batch -d 2
