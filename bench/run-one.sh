#!/usr/bin/env bash
# bench/run-one.sh: `abctl run FILE` and `abctl apply -f FILE` of one agent
# file in an organization of AGENTS agents (default 10,000), each beside a
# ceiling measured in the same run: the same requests made from the Go SDK
# by a small process that reads no file (bench/apply, which also starts the
# daemon, seeds it and prints the table). About 4 minutes on a loaded
# 2-core machine, most of it seeding; BEFORE adds about 5 more.
#
# ROUNDS (default 21) sets the timed runs of each command. BEFORE=BIN also
# measures another abctl binary (an earlier build) in the same rounds,
# against the same daemon.
set -euo pipefail
cd "$(dirname "$0")/.."
bench_name=run-one.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh

AGENTS=${AGENTS:-10000}
ROUNDS=${ROUNDS:-21}

log "building abctl and bench/apply"
go build -o "$work/bin/abctl" ./cmd/abctl
go build -o "$work/bin/apply" ./bench/apply
before=()
if [ -n "${BEFORE:-}" ]; then before=(-before "$BEFORE"); fi

log "seeding $AGENTS agents, then $ROUNDS rounds"
"$work/bin/apply" -abctl "$work/bin/abctl" -agents "$AGENTS" -rounds "$ROUNDS" "${before[@]}" >"$work/table.md"

echo
echo "Run of $(date -u +%F), $(nproc) cores."
cat "$work/table.md"
