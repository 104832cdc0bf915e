#!/usr/bin/env bash
# Draws the README's picture of the measured and the predicted ANYmal D from
# a replay, as Foxglove's 3D panel shows them with foxglove/anymal.json:
# `calisym replay` of a simulated ANYmal log with a trained model, the
# replay's /robot_description, /tf_static and /tf read back with Foxglove's
# readers (test/js/read_robot.mjs), and one /tf message drawn by a small
# three.js + urdf-loader page (scripts/robot_picture/index.html) rendered
# in headless Chromium. Not part of the tests.
#
# usage: scripts/robot_picture.sh MODEL [OUT.png]
#
#   MODEL  a model trained on anymal_sim (calisym bench --system anymal_sim
#          writes out/bench/anymal_sim/calisym-gr.safetensors)
#   OUT    default docs/anymal_ghost.png
#
# Environment: CALISYM_DATA (default ../shared/data), LOG (default
# $CALISYM_DATA/anymal_sim/id/trot_301.mcap), GHOST (the lookahead, default
# 0.3s), AT (the prediction drawn: the AT-th /tf message with ghost frames,
# default 305: 30.5 s into the log at
# replay's default of a prediction every 10th input),
# CAMERA (the camera's offset from the base, "x,y,z" in the base's heading
# frame: x forward, y left, z up; default 0.8,-2.4,0.7).
#
# Needs Debian's chromium (apt-get install -y chromium), node with
# test/js's packages (npm ci --prefix test/js) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:?usage: scripts/robot_picture.sh MODEL [OUT.png]}
out=$(realpath -m "${2:-docs/anymal_ghost.png}")
data=${CALISYM_DATA:-../shared/data}
log=${LOG:-$data/anymal_sim/id/trot_301.mcap}
ghost=${GHOST:-0.3s}
at=${AT:-305}
IFS=, read -r cx cy cz <<<"${CAMERA:-0.8,-2.4,0.7}"
command -v chromium >/dev/null || { echo "robot_picture: needs Debian's chromium (apt-get install -y chromium)" >&2; exit 1; }
[ -d test/js/node_modules/urdf-loader ] || npm ci --prefix test/js --no-audit --no-fund --loglevel=error --onnxruntime-node-install=skip

tmp=$(mktemp -d)
srv=""
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
go run ./cmd/calisym replay --params params/anymal.yaml --model "$model" --data "$data/anymal_sim" "$log" \
	--out "$tmp/replay.mcap" --compression none --ghost "$ghost"
node test/js/read_robot.mjs "$tmp/replay.mcap" /calisym/predicted_path >"$tmp/robot.json"
cp scripts/robot_picture/index.html "$tmp/"
ln -s "$PWD/test/js/node_modules" "$tmp/node_modules"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$tmp" >/dev/null 2>&1 &
srv=$!
for _ in $(seq 50); do
	python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/index.html')" 2>/dev/null && break
	sleep 0.1
done
chromium --headless --no-sandbox --disable-gpu --use-angle=swiftshader --enable-unsafe-swiftshader \
	--disable-background-networking --disable-extensions --disable-sync --no-first-run --hide-scrollbars \
	--window-size=1280,760 --virtual-time-budget=30000 --screenshot="$out" \
	"http://127.0.0.1:$port/index.html?i=$at&lookahead=$ghost&cx=$cx&cy=$cy&cz=$cz"
echo "wrote $out"
