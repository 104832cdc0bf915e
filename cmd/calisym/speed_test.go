package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer"
	"github.com/calisym/calisym/trainer/mlp"
)

// speedHorizon is the rollout length BenchmarkRolloutSpeed times.
const speedHorizon = 100

// speedModels are the models BenchmarkRolloutSpeed compares, one per
// kind, of the double pendulum's size: the pendulum preset (GRB), a GR of
// its layout, layers and width, and the MLP baseline at calisym train's
// default widths.
func speedModels(b *testing.B, dir string) []refModel {
	b.Helper()
	pend := predictor.Presets()["pendulum"]
	gr := pend.Arch
	gr.Kind, gr.RidgeDim, gr.Spline = predictor.KindGR, 0, predictor.Spline{}
	var ms []refModel
	for i, a := range []predictor.Arch{gr, pend.Arch} {
		rng := rand.New(rand.NewPCG(uint64(11+i), 3))
		m, err := predictor.New(pend.Layout, a, rng)
		if err != nil {
			b.Fatal(err)
		}
		predictor.NewTrainable(m).Init(rng, 0.5)
		path := filepath.Join(dir, string(a.Kind)+".safetensors")
		if err := m.Save(path); err != nil {
			b.Fatal(err)
		}
		ms = append(ms, refModel{name: string(a.Kind), path: path, stateDim: 4, portDim: 2})
	}
	net := mlp.New(mlp.Config{StateDim: 4, PortDim: 2, Hidden: []int{96, 96}}, rand.New(rand.NewPCG(13, 3)))
	path := filepath.Join(dir, "mlp.json")
	if err := trainer.SaveMLP(path, net); err != nil {
		b.Fatal(err)
	}
	return append(ms, refModel{name: "mlp", path: path, stateDim: 4, portDim: 2})
}

// batchRoller is what BenchmarkRolloutSpeed needs of a Go batch roller
// (predictor.BatchRoller, mlp.BatchRoller).
type batchRoller interface {
	Rollout(x0, ports []float64, rows, horizon int, out []float64) error
	Close()
}

// BenchmarkRolloutSpeed compares the Go batch rollers with onnxruntime
// (CPU, onnxruntime-node) on the exported Loop graph of the same model,
// both on one thread: 100-step rollouts of batches of 1, 256 and 4096
// trajectories for a GR, a GRB and an MLP model of the double pendulum's
// size. The metric to read is ms/rollout (wall time of one batch
// rollout); load-s is onnxruntime's session creation. The onnxruntime
// rows' ns/op also counts starting node and loading the graph. With
// -benchtime Nx each row runs N timed rollouts (after one untimed one,
// for onnxruntime). The last row loads the 100-step GRB graph unrolled.
//
//	go test ./cmd/calisym -run '^$' -bench RolloutSpeed -benchtime 3x
func BenchmarkRolloutSpeed(b *testing.B) {
	nodetest.Require(b)
	dir := b.TempDir()
	for _, m := range speedModels(b, dir) {
		sv, err := trainer.OpenModel(m.path)
		if err != nil {
			b.Fatal(err)
		}
		loop := m.path + ".loop.onnx"
		if _, _, err := runCLIContext(context.Background(), "export", m.path, "--onnx", loop, "--horizon", strconv.Itoa(speedHorizon), "--batch", "dynamic"); err != nil {
			b.Fatal(err)
		}
		for _, batch := range []int{1, 256, 4096} {
			x0, ports := speedInputs(b, sv, batch)
			x0File, portsFile := writeFloats(b, dir, "x0", x0), writeFloats(b, dir, "ports", ports)
			b.Run(fmt.Sprintf("%s/batch=%d/go", m.name, batch), func(b *testing.B) {
				var r batchRoller
				if sv.Model != nil {
					plan, err := sv.Model.Compile()
					if err != nil {
						b.Fatal(err)
					}
					r = plan.NewBatchRoller(batch, 1)
				} else {
					r = sv.Net.NewBatchRoller(batch, 1)
				}
				defer r.Close()
				out := make([]float64, batch*speedHorizon*m.stateDim)
				b.ReportAllocs()
				for b.Loop() {
					if err := r.Rollout(x0, ports, batch, speedHorizon, out); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/rollout")
			})
			b.Run(fmt.Sprintf("%s/batch=%d/onnxruntime", m.name, batch), func(b *testing.B) {
				ortSpeed(b, loop, x0File, portsFile, batch)
			})
		}
		if m.name == "grb" {
			unrolled := m.path + ".unrolled.onnx"
			if _, _, err := runCLIContext(context.Background(), "export", m.path, "--onnx", unrolled, "--horizon", strconv.Itoa(speedHorizon), "--unroll", "--batch", "dynamic"); err != nil {
				b.Fatal(err)
			}
			x0, ports := speedInputs(b, sv, 1)
			x0File, portsFile := writeFloats(b, dir, "x0", x0), writeFloats(b, dir, "ports", ports)
			b.Run("grb/unrolled/batch=1/onnxruntime", func(b *testing.B) { ortSpeed(b, unrolled, x0File, portsFile, 1) })
		}
	}
}

// ortSpeed runs test/js/onnx_speed.mjs for b.N timed rollouts and reports
// its figures.
func ortSpeed(b *testing.B, model, x0File, portsFile string, batch int) {
	var res struct {
		Load    float64 `json:"load_s"`
		Rollout float64 `json:"rollout_s"`
	}
	out := nodetest.Run(b, 10*time.Minute, "onnx_speed.mjs", model, x0File, portsFile, strconv.Itoa(batch), strconv.Itoa(speedHorizon), strconv.Itoa(b.N))
	if err := json.Unmarshal(out, &res); err != nil {
		b.Fatalf("onnx_speed.mjs: %v: %s", err, out)
	}
	b.ReportMetric(res.Rollout*1e3, "ms/rollout")
	b.ReportMetric(res.Load, "load-s")
}

// speedInputs draws a batch of initial states and port sequences at the
// model's normalisation (its mean plus half a scale of noise).
func speedInputs(b *testing.B, sv *trainer.SavedModel, batch int) (x0, ports []float64) {
	b.Helper()
	nx, ne := sv.StateDim, sv.PortDim
	muX, sX, muE, sE := make([]float64, nx), make([]float64, nx), make([]float64, ne), make([]float64, ne)
	if sv.Model != nil {
		nz := sv.Model.Norm
		copy(muX, nz.Mu[:nx])
		copy(sX, nz.Scale[:nx])
		copy(muE, nz.Mu[nx:nx+ne])
		copy(sE, nz.Scale[nx:nx+ne])
	} else {
		nz := sv.Net.Norm()
		muX, sX, muE, sE = nz.MuX, nz.SX, nz.MuE, nz.SE
	}
	rng := rand.New(rand.NewPCG(uint64(batch), 9))
	for range batch {
		for i := range nx {
			x0 = append(x0, muX[i]+0.5*sX[i]*rng.NormFloat64())
		}
		for range speedHorizon {
			for i := range ne {
				ports = append(ports, muE[i]+0.5*sE[i]*rng.NormFloat64())
			}
		}
	}
	return x0, ports
}

// writeFloats writes values as little-endian float64 to a new file under
// dir and returns its path.
func writeFloats(b *testing.B, dir, prefix string, v []float64) string {
	b.Helper()
	f, err := os.CreateTemp(dir, prefix+"*.bin")
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 8*len(v))
	for _, x := range v {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
	}
	if _, err := f.Write(buf); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return f.Name()
}
