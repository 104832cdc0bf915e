#!/usr/bin/env bash
# The project's test command: installs the npm packages the cross-checks with
# Foxglove's own libraries need (once), then runs every Go test.
set -euo pipefail
cd "$(dirname "$0")/.."
# --onnxruntime-node-install=skip: onnxruntime-node's postinstall would fetch
# GPU binaries from a host CI cannot reach; its CPU library ships in the
# package. A node_modules that lacks a package of package.json (one from
# before it was added) is refreshed.
missing=$(node -e 'const d = require("./test/js/package.json").dependencies; const fs = require("fs"); console.log(Object.keys(d).filter((p) => !fs.existsSync("test/js/node_modules/" + p)).join(" "))' 2>/dev/null || echo node)
if [ ! -d test/js/node_modules ] || [ -n "$missing" ]; then
	npm ci --prefix test/js --no-audit --no-fund --loglevel=error --onnxruntime-node-install=skip
fi
# The numpy reference (python/calisym_ref.py) runs on apt's python3-numpy;
# TestReferenceInstalls installs it with pip into a python3-venv.
if ! dpkg -s python3-numpy >/dev/null 2>&1 || ! dpkg -s python3-venv >/dev/null 2>&1; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-numpy python3-venv >/dev/null
fi
# Training over MPI (test/mpi_test.go builds calisym with -tags mpi and runs
# it under mpirun) needs Open MPI.
if ! command -v mpirun >/dev/null 2>&1 || ! command -v pkg-config >/dev/null 2>&1 || ! dpkg -s libopenmpi-dev >/dev/null 2>&1; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openmpi-bin libopenmpi-dev pkg-config >/dev/null
fi
# TestReadmeCommands (test/) also runs the documentation's heavy commands (bench
# of all four robots at --epochs 1, a few CPU-minutes); CALISYM_README_HEAVY=0
# leaves them out.
export CALISYM_README_HEAVY="${CALISYM_README_HEAVY:-1}"
# -timeout is per test binary: the test package, the longest, took 24 of
# the 30 minutes it had at a load of 20 on two cores (issue 49); 45 leaves
# a load spike room.
go test -count=1 -timeout 45m ./...
