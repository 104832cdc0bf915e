// Runs ONNX graphs written by `calisym export` with onnxruntime-node (the
// CPU execution provider) on rollout cases and prints the results.
//
// usage: node onnx_rollout.mjs <model.onnx> <case.json> [<model.onnx> <case.json> ...]
//
// A case is {"x0": [[...]], "ports": [[[...]]], "horizon": H} (a batch of
// initial states and port sequences). A graph with the output "states" is
// a rollout and runs once; a one-step graph ("next_state") is stepped H
// times from x0; where it also outputs the step Jacobians ("jac_state",
// "jac_ports", calisym export --jacobian) they are collected per step.
// A case with "dtype": "float32" feeds and reads float32 tensors (calisym
// export --dtype float32). Output: a JSON list with, per pair,
// {"states": [[[...]]]} (batch × H × 2n), for a Jacobian graph "A" and
// "B" (batch × H × the row-major flattened 2n×2n and 2n×(n_u+n_c)
// matrices), and the graph's input and output names.
import ort from "onnxruntime-node";
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
if (args.length === 0 || args.length % 2 !== 0) {
  console.error("usage: node onnx_rollout.mjs <model.onnx> <case.json> [<model.onnx> <case.json> ...]");
  process.exit(2);
}
let dtype = "float64";
const tensor = (rows, dims) =>
  new ort.Tensor(dtype, (dtype === "float32" ? Float32Array : Float64Array).from(rows.flat(Infinity)), dims);
const checkType = (modelPath, name, v) => {
  if (v.type !== dtype) throw new Error(`${modelPath}: ${name} is ${v.type}, want ${dtype}`);
};

async function rollout(modelPath, casePath) {
  const c = JSON.parse(readFileSync(casePath, "utf8"));
  dtype = c.dtype || "float64";
  const batch = c.x0.length;
  const nx = c.x0[0].length;
  const ne = c.ports[0][0].length;
  const H = c.horizon;
  const session = await ort.InferenceSession.create(modelPath, { executionProviders: ["cpu"] });
  const states = Array.from({ length: batch }, () => []);
  if (session.outputNames.includes("states")) {
    const out = await session.run({ state: tensor(c.x0, [batch, nx]), ports: tensor(c.ports, [batch, H, ne]) });
    const v = out.states;
    checkType(modelPath, "states", v);
    for (let b = 0; b < batch; b++)
      for (let k = 0; k < H; k++) states[b].push(Array.from(v.data.slice((b * H + k) * nx, (b * H + k + 1) * nx)));
    await session.release();
    return { states, inputs: session.inputNames, outputs: session.outputNames };
  }
  const jac = session.outputNames.includes("jac_state");
  const A = Array.from({ length: batch }, () => []);
  const B = Array.from({ length: batch }, () => []);
  {
    let x = c.x0;
    for (let k = 0; k < H; k++) {
      const e = c.ports.map((p) => p[k]);
      const out = await session.run({ state: tensor(x, [batch, nx]), ports: tensor(e, [batch, ne]) });
      const v = out.next_state;
      checkType(modelPath, "next_state", v);
      x = Array.from({ length: batch }, (_, b) => Array.from(v.data.slice(b * nx, (b + 1) * nx)));
      x.forEach((row, b) => states[b].push(row));
      if (jac) {
        checkType(modelPath, "jac_state", out.jac_state);
        checkType(modelPath, "jac_ports", out.jac_ports);
        for (let b = 0; b < batch; b++) {
          A[b].push(Array.from(out.jac_state.data.slice(b * nx * nx, (b + 1) * nx * nx)));
          B[b].push(Array.from(out.jac_ports.data.slice(b * nx * ne, (b + 1) * nx * ne)));
        }
      }
    }
  }
  await session.release();
  const res = { states, inputs: session.inputNames, outputs: session.outputNames };
  if (jac) Object.assign(res, { A, B });
  return res;
}

const results = [];
for (let i = 0; i < args.length; i += 2) results.push(await rollout(args[i], args[i + 1]));
console.log(JSON.stringify(results));
