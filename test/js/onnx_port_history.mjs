// Runs the port-history graph of `calisym export --port-history` with
// onnxruntime-node (the CPU execution provider) on the cases of the numpy
// reference's port_means and prints the results.
//
// usage: node onnx_port_history.mjs <graph.onnx> <case.json> [<case.json> ...]
//
// A case is {"plan": [[...]], "history": [[...]], "m": m} (the measured
// ports of the plan's steps and of the samples before it, oldest first;
// the history may be empty), run as a batch of one. Output: a JSON list
// with, per case, {"means": [[...]], "ports": [[...]]} (H rows each).
import ort from "onnxruntime-node";
import { readFileSync } from "node:fs";

const [model, ...cases] = process.argv.slice(2);
if (!model || cases.length === 0) {
  console.error("usage: node onnx_port_history.mjs <graph.onnx> <case.json> [<case.json> ...]");
  process.exit(2);
}
const session = await ort.InferenceSession.create(model, { executionProviders: ["cpu"] });
const rows = (v, H) => {
  const w = v.data.length / H;
  return Array.from({ length: H }, (_, k) => Array.from(v.data.slice(k * w, (k + 1) * w)));
};
const out = [];
for (const path of cases) {
  const c = JSON.parse(readFileSync(path, "utf8"));
  const H = c.plan.length, nm = c.plan[0].length, hist = c.history || [];
  const res = await session.run({
    plan: new ort.Tensor("float64", Float64Array.from(c.plan.flat()), [1, H, nm]),
    history: new ort.Tensor("float64", Float64Array.from(hist.flat()), [1, hist.length, nm]),
  });
  out.push({ means: rows(res.means, H), ports: rows(res.ports, H) });
}
await session.release();
console.log(JSON.stringify(out));
