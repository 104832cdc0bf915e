package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer"
)

// The metric of the Nonlinear System Identification Nano-drone Benchmark
// (Busetto et al., arXiv 2512.14450, 2025; repository
// idsia-robotics/nanodrone-sysid-benchmark, utils/metrics_utils.py), whose
// flights are data/crazyflie: from every start sample i of a flight whose
// next NanoHorizon samples lie in it, the model is simulated open loop
// under the logged inputs of samples i … i+h−1, and at every horizon h the
// error of each output group is the Euclidean norm of the error vector,
// averaged over the start samples:
//
//	position    ‖p̂ − p‖ in metres (world frame)
//	velocity    ‖v̂ − v‖ in m/s (world frame, the logs' vx vy vz)
//	orientation the geodesic angle of R̂ against R on SO(3), in rad
//	            (2·atan2(‖v‖, |w|) of the quaternion q⁻¹ ⊗ q̂)
//	angular rate ‖ω̂ − ω‖ in rad/s (body rates, the logs' wx wy wz)
//
// reported at h = 1, 10, 50 and summed over h = 1 … 50 (the benchmark's
// "SimErr"). The benchmark's models predict those outputs directly; ours
// predict (q, p), which NanoFlight maps back: the base pose from q and
// the start sample's pose (Spec.BasePose), the body twist v = M⁻¹p, the
// world velocity R̂·v_lin with the predicted orientation R̂, and ω = v_ang.

// NanoHorizon is the benchmark's longest horizon (0.5 s at 100 Hz).
const NanoHorizon = 50

// NanoReportHorizons are the horizons the benchmark's table reports.
var NanoReportHorizons = []int{1, 10, 50}

// NanoGroups names the benchmark's output groups, in its table's order,
// and NanoUnits their units.
var (
	NanoGroups = []string{"position", "velocity", "orientation", "angular_rate"}
	NanoUnits  = []string{"m", "m/s", "rad", "rad/s"}
)

// NanoOutput is one sample of the benchmark's outputs.
type NanoOutput struct {
	// Pos and Vel are the position and velocity in the world frame.
	Pos, Vel mechanics.Vec3
	// Quat is the orientation (body to world); it need not be unit norm.
	Quat mechanics.Quat
	// Omega is the body angular rate.
	Omega mechanics.Vec3
}

// nanoErrors returns the four output errors of a prediction.
func nanoErrors(pred, truth *NanoOutput) [4]float64 {
	return [4]float64{
		pred.Pos.Sub(truth.Pos).Norm(),
		pred.Vel.Sub(truth.Vel).Norm(),
		GeodesicAngle(truth.Quat, pred.Quat),
		pred.Omega.Sub(truth.Omega).Norm(),
	}
}

// GeodesicAngle returns the angle in [0, π] of the rotation between the
// orientations of two quaternions (not necessarily unit, of either sign):
// 2·atan2(‖v‖, |w|) of a⁻¹ ⊗ b = (w, v).
func GeodesicAngle(a, b mechanics.Quat) float64 {
	r := a.Conj().Mul(b)
	return 2 * math.Atan2(math.Sqrt(r.X*r.X+r.Y*r.Y+r.Z*r.Z), math.Abs(r.W))
}

// NanoMetric is the benchmark's metric on one set of start samples.
type NanoMetric struct {
	// Starts is the number of start samples averaged.
	Starts int
	// MAE[g][h−1] is the mean error of output group g (NanoGroups) at
	// horizon h.
	MAE [4][]float64
}

// At returns the mean error of group g at horizon h (1-based).
func (m NanoMetric) At(g, h int) float64 { return m.MAE[g][h-1] }

// Sum returns Σ_{h=1…H} MAE[g][h−1], the benchmark's SimErr of group g.
func (m NanoMetric) Sum(g int) float64 {
	var s float64
	for _, v := range m.MAE[g] {
		s += v
	}
	return s
}

// NanoPredictor writes into out (len H) the predicted outputs of samples
// start+1 … start+H.
type NanoPredictor func(start int, out []NanoOutput) error

// NanoScore computes the metric over the start samples 0 … len(truth)−1−H
// of one flight whose outputs are truth: predict(i, out) predicts samples
// i+1 … i+H. A prediction that is not finite is an error naming the start.
func NanoScore(truth []NanoOutput, H int, predict NanoPredictor) (NanoMetric, error) {
	sums, n, err := nanoSums(truth, H, predict, 0, len(truth)-H)
	if err != nil {
		return NanoMetric{}, err
	}
	return nanoMean(sums, n), nil
}

// nanoSums sums the errors of the start samples lo … hi−1 by horizon.
func nanoSums(truth []NanoOutput, H int, predict NanoPredictor, lo, hi int) ([4][]float64, int, error) {
	var sums [4][]float64
	for g := range sums {
		sums[g] = make([]float64, H)
	}
	if H < 1 {
		return sums, 0, fmt.Errorf("experiment: nano-drone metric: horizon %d < 1", H)
	}
	out := make([]NanoOutput, H)
	n := 0
	for i := lo; i < hi; i++ {
		if err := predict(i, out); err != nil {
			return sums, n, err
		}
		for h := range H {
			e := nanoErrors(&out[h], &truth[i+1+h])
			for g, v := range e {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return sums, n, fmt.Errorf("experiment: nano-drone metric: %s error %g at start sample %d, horizon %d", NanoGroups[g], v, i, h+1)
				}
				sums[g][h] += v
			}
		}
		n++
	}
	return sums, n, nil
}

func nanoMean(sums [4][]float64, n int) NanoMetric {
	m := NanoMetric{Starts: n}
	for g := range sums {
		m.MAE[g] = make([]float64, len(sums[g]))
		for h, s := range sums[g] {
			m.MAE[g][h] = s / float64(max(n, 1))
		}
	}
	return m
}

// PoolNano returns the metric over the start samples of all ms together
// (each flight weighed by its start samples), as the benchmark's script
// scores its test flights concatenated.
func PoolNano(ms []NanoMetric) NanoMetric {
	if len(ms) == 0 {
		return NanoMetric{}
	}
	var sums [4][]float64
	n := 0
	for g := range sums {
		sums[g] = make([]float64, len(ms[0].MAE[g]))
	}
	for _, m := range ms {
		for g := range sums {
			for h, v := range m.MAE[g] {
				sums[g][h] += v * float64(m.Starts)
			}
		}
		n += m.Starts
	}
	return nanoMean(sums, n)
}

// NanoFlight is one flight read for the metric: per sample its outputs,
// the model's state (expressed, as a live node expresses it, relative to
// its own pose: the first sample of a window), the model's ports and its
// base pose.
//
// With a port history (convert.history.port_mean m, PortMean) the ports
// of each sample are (u, the mean of the measured ports over the m
// samples before it, f_c), built as conversion builds them
// (statemap.PortHistory) over the flight as one stretch of log: over
// fewer samples at its start, over none (the sample's own ports) at its
// first. The prediction from a start sample is fed the logged ports of
// its steps, so step k's means are over the measured ports before sample
// start+k: those of the flight's own samples, which E holds.
type NanoFlight struct {
	// Name is the file's path.
	Name string
	// Truth holds the outputs of every sample.
	Truth []NanoOutput
	// X (2n per sample), E (the model's n_u+n_c per sample) and Pose are
	// the model's state, ports and base pose.
	X, E     []float64
	Pose     []mechanics.SE3
	nx, ne   int
	meas     []float64 // the measured ports (u, f_c), nm per sample
	nm       int
	portMean int      // the port history's m of E (0: none)
	ports    []string // the names of E's values
	coords   []string // the configuration coordinates
	spec     *statemap.Spec
	minv     []float64 // M⁻¹ (6×6) of the rigid body
}

// Len returns the number of samples.
func (f *NanoFlight) Len() int { return len(f.Truth) }

// PortMean returns the port history's m of the flight's ports (0: the
// measured ports only).
func (f *NanoFlight) PortMean() int { return f.portMean }

// Ports returns the names of the flight's ports per sample (E).
func (f *NanoFlight) Ports() []string { return f.ports }

// WithPortMean returns the flight with the ports of a port history of m
// samples (convert.history.port_mean; 0: the measured ports only), built
// from its measured ports by statemap.PortHistory. The returned flight
// shares everything else with f.
func (f *NanoFlight) WithPortMean(m int) (*NanoFlight, error) {
	if m == f.portMean {
		return f, nil
	}
	g := *f
	spec := *f.spec
	spec.History.PortMean = m
	control, contact := spec.PortNames()
	g.ports, g.portMean = slices.Concat(control, contact), m
	if m == 0 {
		g.E, g.ne = f.meas, f.nm
		return &g, nil
	}
	hist, err := spec.NewPortHistory()
	if err != nil {
		return nil, fmt.Errorf("experiment: %s: port_mean %d: %w", f.Name, m, err)
	}
	if hist.Measured() != f.nm {
		return nil, fmt.Errorf("experiment: %s: port history over %d measured ports, the flight has %d", f.Name, hist.Measured(), f.nm)
	}
	// one stretch of log: every sample is scored, none restarts it
	g.ne = hist.Width()
	g.E = make([]float64, f.Len()*g.ne)
	for j := range f.Len() {
		meas := f.meas[j*f.nm : (j+1)*f.nm]
		hist.Ports(meas, g.E[j*g.ne:(j+1)*g.ne])
		hist.Push(meas)
	}
	return &g, nil
}

// nanoColumns are the benchmark's output columns in the flights.
var nanoColumns = []string{"x", "y", "z", "vx", "vy", "vz", "qx", "qy", "qz", "qw", "wx", "wy", "wz"}

// NanoReader reads flights for the metric with a system's params.
type NanoReader struct {
	spec    *statemap.Spec
	sampler *statemap.Sampler
	minv    []float64
}

// NewNanoReader builds the reader of a floating-base rigid body's params
// (params/crazyflie.yaml, params/crazyflie_gravity.yaml). Quaternions are
// not checked against validate.max_quat_norm_error and no sample is
// rejected: the benchmark scores every sample. The flights' ports carry
// the params' port history (convert.history.port_mean), and
// NanoFlight.WithPortMean gives them another.
func NewNanoReader(params, dataRoot string) (*NanoReader, error) {
	cs, err := convert.LoadSpec(params)
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	spec := &cs.Spec
	s, err := statemap.NewSampler(spec, statemap.SamplerOptions{DataRoot: dataRoot})
	if err != nil {
		return nil, fmt.Errorf("experiment: %s: %w", params, err)
	}
	if n, _, _ := s.Layout(); !s.Floating() || n != 6 {
		return nil, fmt.Errorf("experiment: %s: the nano-drone metric needs a floating rigid body (n = 6), got n = %d", params, n)
	}
	model, err := statemap.NewModel(spec, dataRoot)
	if err != nil {
		return nil, fmt.Errorf("experiment: %s: %w", params, err)
	}
	M := make([]float64, 36)
	if err := model.MassMatrix(M, nil); err != nil {
		return nil, fmt.Errorf("experiment: %s: %w", params, err)
	}
	minv, err := invert(M, 6)
	if err != nil {
		return nil, fmt.Errorf("experiment: %s: mass matrix: %w", params, err)
	}
	return &NanoReader{spec: spec, sampler: s, minv: minv}, nil
}

// Coordinates returns the configuration coordinates of the params.
func (r *NanoReader) Coordinates() []string { return r.sampler.Coordinates() }

// Read reads a flight (parquet) at path.
func (r *NanoReader) Read(path string) (*NanoFlight, error) {
	src := r.sampler.Channels()
	cols := slices.Clone(nanoColumns)
	for _, c := range src {
		if !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	t, err := logio.OpenParquet(path, &logio.ParquetOptions{Columns: cols})
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	defer t.Close()
	idx := map[string]int{}
	for i, c := range t.Columns() {
		idx[c] = i
	}
	at := func(names []string) ([]int, error) {
		out := make([]int, len(names))
		for i, n := range names {
			j, ok := idx[n]
			if !ok {
				return nil, fmt.Errorf("experiment: %s: no column %q", path, n)
			}
			out[i] = j
		}
		return out, nil
	}
	yi, err := at(nanoColumns)
	if err != nil {
		return nil, err
	}
	si, err := at(src)
	if err != nil {
		return nil, err
	}
	n, _, _ := r.sampler.Layout()
	c, k := r.spec.MeasuredPortNames()
	f := &NanoFlight{Name: path, nx: 2 * n, nm: r.sampler.Measured(), ports: slices.Concat(c, k),
		coords: r.Coordinates(), spec: r.spec, minv: r.minv}
	row := make([]float64, len(t.Columns()))
	vals := make([]float64, len(src))
	x, e := make([]float64, f.nx), make([]float64, f.nm)
	for k := 0; ; k++ {
		if err := t.Next(row); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("experiment: %w", err)
		}
		for i, j := range si {
			vals[i] = row[j]
		}
		pose, err := r.sampler.Sample(vals, x, e)
		if err != nil {
			return nil, fmt.Errorf("experiment: %s: row %d: %w", path, k, err)
		}
		y := row
		f.Truth = append(f.Truth, NanoOutput{
			Pos:   mechanics.Vec3{y[yi[0]], y[yi[1]], y[yi[2]]},
			Vel:   mechanics.Vec3{y[yi[3]], y[yi[4]], y[yi[5]]},
			Quat:  mechanics.Quat{W: y[yi[9]], X: y[yi[6]], Y: y[yi[7]], Z: y[yi[8]]},
			Omega: mechanics.Vec3{y[yi[10]], y[yi[11]], y[yi[12]]},
		})
		f.X = append(f.X, x...)
		f.meas = append(f.meas, e...)
		f.Pose = append(f.Pose, pose)
	}
	if len(f.Truth) <= NanoHorizon {
		return nil, fmt.Errorf("experiment: %s: %d samples, the nano-drone metric needs more than %d", path, len(f.Truth), NanoHorizon)
	}
	f.E, f.ne = f.meas, f.nm
	return f.WithPortMean(r.spec.History.PortMean)
}

// Outputs maps predicted states xhat (len(out) states of 2n values) of a
// prediction that started at sample start to the benchmark's outputs.
func (f *NanoFlight) Outputs(start int, xhat []float64, out []NanoOutput) {
	origin := f.Pose[start]
	for h := range out {
		x := xhat[h*f.nx : (h+1)*f.nx]
		pose := f.spec.BasePose(origin, x[:6])
		var v [6]float64
		for r := range 6 {
			for c := range 6 {
				v[r] += f.minv[r*6+c] * x[6+c]
			}
		}
		out[h] = NanoOutput{
			Pos:   pose.P,
			Vel:   pose.R.MulVec(mechanics.Vec3{v[0], v[1], v[2]}),
			Quat:  mechanics.QuatFromRotation(pose.R),
			Omega: mechanics.Vec3{v[3], v[4], v[5]},
		}
	}
}

// NanoHold is the benchmark's naïve model: every output held at the start
// sample's value.
func NanoHold(truth []NanoOutput) NanoPredictor {
	return func(start int, out []NanoOutput) error {
		for h := range out {
			out[h] = truth[start]
		}
		return nil
	}
}

// ScoreNano scores a model's rollers on the flights: the metric of each
// flight, then the pooled one (PoolNano). Workers (at least 1) share each
// flight's start samples; the sums do not depend on their number.
func ScoreNano(ctx context.Context, rollers trainer.RollerFactory, flights []*NanoFlight, workers int) (pooled NanoMetric, per []NanoMetric, err error) {
	workers = max(workers, 1)
	rs := make([]trainer.Roller, workers)
	for w := range rs {
		if rs[w], err = rollers(); err != nil {
			return pooled, nil, err
		}
	}
	for _, f := range flights {
		m, err := f.score(ctx, rs)
		if err != nil {
			return pooled, nil, err
		}
		per = append(per, m)
	}
	return PoolNano(per), per, nil
}

// nanoChunk is the number of start samples a worker sums before the
// partial sums are added in order.
const nanoChunk = 256

func (f *NanoFlight) score(ctx context.Context, rs []trainer.Roller) (NanoMetric, error) {
	H := NanoHorizon
	starts := f.Len() - H
	nChunks := (starts + nanoChunk - 1) / nanoChunk
	parts := make([][4][]float64, nChunks)
	errs := make([]error, nChunks)
	var wg sync.WaitGroup
	for w, r := range rs {
		wg.Go(func() {
			xhat := make([]float64, H*f.nx)
			pred := func(start int, out []NanoOutput) error {
				if err := r.Rollout(f.X[start*f.nx:(start+1)*f.nx], f.E[start*f.ne:(start+H)*f.ne], H, xhat); err != nil {
					return fmt.Errorf("experiment: %s: start sample %d: %w", f.Name, start, err)
				}
				f.Outputs(start, xhat, out)
				return nil
			}
			for c := w; c < nChunks; c += len(rs) {
				if errs[c] = ctx.Err(); errs[c] != nil {
					return
				}
				lo := c * nanoChunk
				parts[c], _, errs[c] = nanoSums(f.Truth, H, pred, lo, min(lo+nanoChunk, starts))
				if errs[c] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	var sums [4][]float64
	for g := range sums {
		sums[g] = make([]float64, H)
	}
	for c := range parts {
		if errs[c] != nil {
			return NanoMetric{}, fmt.Errorf("%s: %w", f.Name, errs[c])
		}
		for g := range sums {
			for h, v := range parts[c][g] {
				sums[g][h] += v
			}
		}
	}
	return nanoMean(sums, starts), nil
}

// invert returns the inverse of the n×n row-major matrix a by Gauss–Jordan
// elimination with partial pivoting.
func invert(a []float64, n int) ([]float64, error) {
	m := slices.Clone(a)
	inv := make([]float64, n*n)
	for i := range n {
		inv[i*n+i] = 1
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r*n+c]) > math.Abs(m[p*n+c]) {
				p = r
			}
		}
		if m[p*n+c] == 0 {
			return nil, errors.New("singular")
		}
		for k := range n {
			m[c*n+k], m[p*n+k] = m[p*n+k], m[c*n+k]
			inv[c*n+k], inv[p*n+k] = inv[p*n+k], inv[c*n+k]
		}
		d := m[c*n+c]
		for k := range n {
			m[c*n+k] /= d
			inv[c*n+k] /= d
		}
		for r := range n {
			if r == c || m[r*n+c] == 0 {
				continue
			}
			s := m[r*n+c]
			for k := range n {
				m[r*n+k] -= s * m[c*n+k]
				inv[r*n+k] -= s * inv[c*n+k]
			}
		}
	}
	return inv, nil
}

// NanoParams returns the params file of a Crazyflie system of the
// benchmark (RealCrazyflie, RealCrazyflieGravity) in paramsDir.
func NanoParams(system, paramsDir string) (string, error) {
	if system != RealCrazyflie && system != RealCrazyflieGravity {
		return "", fmt.Errorf("experiment: the nano-drone metric is for %s and %s, not %q", RealCrazyflieGravity, RealCrazyflie, system)
	}
	return filepath.Join(paramsDir, realSystems()[system].params), nil
}

// NanoModelFits reports a saved model that does not fit a flight: another
// port history (port_mean) than the flight's ports carry, another state or
// port size, other port names, other coordinates (a model of the other
// pose representation), or, where the model records it, ports computed
// otherwise than the params the flight was read with compute them
// (statemap.PortMapKey: a model trained with the linear thrust map scored
// on flights read with the voltage-scaled one). A model that records no
// port map is not refused (NanoEvaluate logs it).
func NanoModelFits(sv *trainer.SavedModel, f *NanoFlight) error {
	if sv.PortMean != f.portMean {
		return fmt.Errorf("experiment: %s: port history port_mean %d, the flight's ports are built with port_mean %d (%d ports: %s)",
			sv.Path, sv.PortMean, f.portMean, f.ne, strings.Join(f.ports, ", "))
	}
	if sv.StateDim != f.nx || sv.PortDim != f.ne {
		return fmt.Errorf("experiment: %s: state %d and ports %d, the flights give %d and %d", sv.Path, sv.StateDim, sv.PortDim, f.nx, f.ne)
	}
	if p := sv.Ports; len(p) > 0 && !slices.Equal(p, f.ports) {
		return fmt.Errorf("experiment: %s: trained on ports %s, the flights give %s", sv.Path, strings.Join(p, ", "), strings.Join(f.ports, ", "))
	}
	if c := sv.Coordinates; len(c) > 0 && !slices.Equal(c, f.coords) {
		return fmt.Errorf("experiment: %s: trained on coordinates %s, the params give %s (another --system?)", sv.Path, strings.Join(c, ", "), strings.Join(f.coords, ", "))
	}
	if sv.PortMap != "" {
		if err := statemap.CheckPortMap(sv.PortMap, f.PortMap()); err != nil {
			return fmt.Errorf("experiment: %s: scored on %s as the params read it: %w", sv.Path, f.Name, err)
		}
	}
	return nil
}

// PortMap returns how the flight's ports are computed from its channels
// (statemap.Spec.PortMap of the params it was read with, with its port
// history).
func (f *NanoFlight) PortMap() string {
	spec := *f.spec
	spec.History.PortMean = f.portMean
	return spec.PortMap()
}

// NanoOptions configure NanoEvaluate.
type NanoOptions struct {
	// Systems are RealCrazyflieGravity and/or RealCrazyflie.
	Systems []string
	// Runs are glob patterns of run directories (one per training seed,
	// each holding a calisym-*.safetensors and an mlp.json, as a bench
	// run or a study's run writes them); "{system}" in a pattern is
	// replaced by the system's name.
	Runs []string
	// Flights are glob patterns of the flights (parquet), relative to
	// DataRoot unless absolute.
	Flights []string
	// DataRoot is the shared data directory; ParamsDir holds the params.
	DataRoot, ParamsDir string
	// Workers share each flight's start samples (0: 1).
	Workers int
	// Log, when set, receives a line per model scored.
	Log io.Writer
}

// nanoFlightPaths expands the flights' glob patterns, each relative to
// root unless absolute (an absolute pattern is used as given), into the
// sorted paths of the files they match; a pattern that matches none is
// an error.
func nanoFlightPaths(root string, patterns []string) ([]string, error) {
	var paths []string
	for _, p := range patterns {
		abs := filepath.IsAbs(p)
		full := p
		if !abs {
			full = filepath.Join(root, p)
		}
		m, err := filepath.Glob(full)
		if err != nil {
			return nil, fmt.Errorf("experiment: flights %q: %w", p, err)
		}
		switch {
		case len(m) == 0 && abs:
			return nil, fmt.Errorf("experiment: flights %q match no file", p)
		case len(m) == 0:
			return nil, fmt.Errorf("experiment: flights %q match no file under %s (a relative pattern is relative to the data directory, --data)", p, root)
		}
		paths = append(paths, m...)
	}
	slices.Sort(paths)
	return slices.Compact(paths), nil
}

// NanoHoldSystem is the System of the state held constant's result,
// which uses no pose representation.
const NanoHoldSystem = "data"

// NanoEvaluate scores the state held constant and, for every system, the
// CaLiSym model and the MLP of every run on the flights. It returns the
// results (the held state first, then per system CaLiSym and the MLP)
// and the flights' paths.
func NanoEvaluate(ctx context.Context, opt NanoOptions) ([]NanoResult, []string, error) {
	paths, err := nanoFlightPaths(opt.DataRoot, opt.Flights)
	if err != nil {
		return nil, nil, err
	}
	if len(opt.Systems) == 0 {
		return nil, nil, errors.New("experiment: nano-drone metric: no system")
	}
	var out []NanoResult
	for si, system := range opt.Systems {
		params, err := NanoParams(system, opt.ParamsDir)
		if err != nil {
			return nil, nil, err
		}
		rd, err := NewNanoReader(params, opt.DataRoot)
		if err != nil {
			return nil, nil, err
		}
		flights := make([]*NanoFlight, len(paths))
		for i, p := range paths {
			if flights[i], err = rd.Read(p); err != nil {
				return nil, nil, err
			}
		}
		if si == 0 {
			hold := NanoResult{System: NanoHoldSystem, Model: "hold"}
			var per []NanoMetric
			for _, f := range flights {
				m, err := NanoScore(f.Truth, NanoHorizon, NanoHold(f.Truth))
				if err != nil {
					return nil, nil, err
				}
				per = append(per, m)
			}
			hold.Pooled, hold.PerFlight = []NanoMetric{PoolNano(per)}, [][]NanoMetric{per}
			out = append(out, hold)
		}
		var pats []string
		for _, p := range opt.Runs {
			pats = append(pats, strings.ReplaceAll(p, "{system}", system))
		}
		runs, err := sortedRuns(pats)
		if err != nil {
			return nil, nil, err
		}
		res := []NanoResult{{System: system, Model: "calisym", Runs: runs}, {System: system, Model: "mlp", Runs: runs}}
		// the flights with each model's port history, built once per m
		withMean := map[int][]*NanoFlight{}
		flightsFor := func(m int) ([]*NanoFlight, error) {
			if fl, ok := withMean[m]; ok {
				return fl, nil
			}
			fl := make([]*NanoFlight, len(flights))
			for i, f := range flights {
				var err error
				if fl[i], err = f.WithPortMean(m); err != nil {
					return nil, err
				}
			}
			withMean[m] = fl
			return fl, nil
		}
		for _, dir := range runs {
			sym, err := filepath.Glob(filepath.Join(dir, "calisym-*.safetensors"))
			if err != nil || len(sym) != 1 {
				return nil, nil, fmt.Errorf("experiment: %s: want one calisym-*.safetensors, found %d", dir, len(sym))
			}
			for k, file := range []string{sym[0], filepath.Join(dir, "mlp.json")} {
				sv, err := trainer.OpenModel(file)
				if err != nil {
					return nil, nil, fmt.Errorf("experiment: %w", err)
				}
				fl, err := flightsFor(sv.PortMean)
				if err != nil {
					return nil, nil, fmt.Errorf("experiment: %s: %w", file, err)
				}
				if err := NanoModelFits(sv, fl[0]); err != nil {
					return nil, nil, err
				}
				if sv.PortMap == "" && opt.Log != nil {
					fmt.Fprintf(opt.Log, "warning: %s records no port map (trained before calisym recorded it): it cannot be checked that %s computes its ports as its training data did\n", file, params)
				}
				pooled, per, err := ScoreNano(ctx, sv.Rollers, fl, opt.Workers)
				if err != nil {
					return nil, nil, err
				}
				res[k].Pooled = append(res[k].Pooled, pooled)
				res[k].PerFlight = append(res[k].PerFlight, per)
				if opt.Log != nil {
					fmt.Fprintf(opt.Log, "%s %s: position Σ %.4g m, orientation Σ %.4g rad over %d start samples\n",
						system, file, pooled.Sum(0), pooled.Sum(2), pooled.Starts)
				}
			}
		}
		out = append(out, res...)
	}
	return out, paths, nil
}
