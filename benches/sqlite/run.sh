#!/usr/bin/env bash
# Runs benches/sqlite/run.py (see there, and benches/README.md).
exec python3 "$(dirname "${BASH_SOURCE[0]}")/run.py" "$@"
