// Runs an ONNX graph written by `calisym export` with onnxruntime-node (the
// CPU execution provider) on a rollout case and prints the result.
//
// usage: node onnx_rollout.mjs <model.onnx> <case.json>
//
// The case is {"x0": [[...]], "ports": [[[...]]], "horizon": H} (a batch of
// initial states and port sequences). A graph with the input "ports" of
// rank 3 is a rollout and runs once; a one-step graph ("next_state") is
// stepped H times from x0. Output: {"states": [[[...]]]}, batch × H × 2n,
// and the graph's input and output names and metadata.
import ort from "onnxruntime-node";
import { readFileSync } from "node:fs";

const [modelPath, casePath] = process.argv.slice(2);
if (!modelPath || !casePath) {
  console.error("usage: node onnx_rollout.mjs <model.onnx> <case.json>");
  process.exit(2);
}
const c = JSON.parse(readFileSync(casePath, "utf8"));
const batch = c.x0.length;
const nx = c.x0[0].length;
const ne = c.ports[0][0].length;
const H = c.horizon;

const session = await ort.InferenceSession.create(modelPath, { executionProviders: ["cpu"] });
const tensor = (rows, dims) => new ort.Tensor("float64", Float64Array.from(rows.flat(Infinity)), dims);

const states = Array.from({ length: batch }, () => []);
if (session.outputNames.includes("states")) {
  const out = await session.run({ state: tensor(c.x0, [batch, nx]), ports: tensor(c.ports, [batch, H, ne]) });
  const v = out.states;
  if (v.type !== "float64") throw new Error(`states is ${v.type}, want float64`);
  for (let b = 0; b < batch; b++)
    for (let k = 0; k < H; k++) states[b].push(Array.from(v.data.slice((b * H + k) * nx, (b * H + k + 1) * nx)));
} else {
  let x = c.x0;
  for (let k = 0; k < H; k++) {
    const e = c.ports.map((p) => p[k]);
    const out = await session.run({ state: tensor(x, [batch, nx]), ports: tensor(e, [batch, ne]) });
    const v = out.next_state;
    if (v.type !== "float64") throw new Error(`next_state is ${v.type}, want float64`);
    x = Array.from({ length: batch }, (_, b) => Array.from(v.data.slice(b * nx, (b + 1) * nx)));
    x.forEach((row, b) => states[b].push(row));
  }
}
console.log(JSON.stringify({ states, inputs: session.inputNames, outputs: session.outputNames }));
