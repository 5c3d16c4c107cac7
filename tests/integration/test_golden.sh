#!/usr/bin/env bash
# The batch and JSON summaries of every shipped recording are what
# tests/golden/ says (tests/golden/run.sh).
exec "$(dirname "$0")/../golden/run.sh" check
