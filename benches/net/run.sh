#!/usr/bin/env bash
# Runs benches/net/run.py (see there, and benches/README.md). The idle
# benchmark holds 10,000 connections: both sides need that many descriptors.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
exec python3 "$(dirname "${BASH_SOURCE[0]}")/run.py" "$@"
