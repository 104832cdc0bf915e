// Times ONNX rollouts of `calisym export` with onnxruntime-node on the CPU
// (one intra-op and one inter-op thread), for BenchmarkRolloutSpeed
// (cmd/calisym).
//
// usage: node onnx_speed.mjs <model.onnx> <x0.bin> <ports.bin> <batch> <horizon> <iterations> [float32]
//
// x0.bin and ports.bin hold batch×2n and batch×H×(n_u+n_c) little-endian
// float64 values. The graph is a rollout (output "states") taking them
// whole. After one untimed run, it runs `iterations` times and prints
// {"load_s": …, "rollout_s": …} (the session's creation, and the mean
// wall time of one rollout).
import ort from "onnxruntime-node";
import { readFileSync } from "node:fs";

const [model, x0Path, portsPath, batchS, horizonS, itersS, dtype = "float64"] = process.argv.slice(2);
if (!itersS) {
  console.error("usage: node onnx_speed.mjs <model.onnx> <x0.bin> <ports.bin> <batch> <horizon> <iterations> [float32]");
  process.exit(2);
}
const batch = Number(batchS), H = Number(horizonS), iters = Number(itersS);
const read = (p) => {
  const b = readFileSync(p);
  const f64 = new Float64Array(b.buffer, b.byteOffset, b.byteLength / 8);
  return dtype === "float32" ? Float32Array.from(f64) : Float64Array.from(f64);
};
const x0 = read(x0Path), ports = read(portsPath);
const t0 = process.hrtime.bigint();
const session = await ort.InferenceSession.create(model, {
  executionProviders: ["cpu"], intraOpNumThreads: 1, interOpNumThreads: 1,
});
const load = Number(process.hrtime.bigint() - t0) / 1e9;
const feeds = {
  state: new ort.Tensor(dtype, x0, [batch, x0.length / batch]),
  ports: new ort.Tensor(dtype, ports, [batch, H, ports.length / batch / H]),
};
const out = await session.run(feeds);
if (!out.states || out.states.data.length !== batch * H * (x0.length / batch)) throw new Error(`${model}: no states of the expected size`);
const t1 = process.hrtime.bigint();
for (let i = 0; i < iters; i++) await session.run(feeds);
const per = Number(process.hrtime.bigint() - t1) / 1e9 / iters;
await session.release();
console.log(JSON.stringify({ load_s: load, rollout_s: per }));
