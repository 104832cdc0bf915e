package mechanics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// PendulumDOF is the number of joints of the double pendulum: the row stride
// of the flat Q, P, V and U arrays of a Trajectory.
const PendulumDOF = 2

// Sinusoid is one term A·sin(2π·Freq·t + Phase) of a torque profile.
type Sinusoid struct {
	Amp   float64 // amplitude [N·m]
	Freq  float64 // frequency [Hz]
	Phase float64 // phase [rad]
}

// TorqueProfile holds, per joint, the sinusoids whose sum is the commanded
// torque.
type TorqueProfile [PendulumDOF][]Sinusoid

// At returns the torque of the profile at time t (before zero-order hold).
func (tp TorqueProfile) At(t float64) [PendulumDOF]float64 {
	var tau [PendulumDOF]float64
	for j := range tp {
		for _, s := range tp[j] {
			tau[j] += s.Amp * math.Sin(2*math.Pi*s.Freq*t+s.Phase)
		}
	}
	return tau
}

// SimConfig configures Simulate.
type SimConfig struct {
	// Params are the pendulum's parameters (PaperPendulum for the paper's data).
	Params PendulumParams
	// Dt is the sample interval [s] (0.01 s = 100 Hz in the paper); torques
	// are held constant over each interval.
	Dt float64
	// Steps is the number of intervals per trajectory; a trajectory has
	// Steps+1 samples.
	Steps int
	// EnergyMin and EnergyMax bound the initial total mechanical energy [J]
	// (zero at the hanging rest position, see PendulumParams). The target
	// energy of each trajectory is drawn uniformly from this range.
	EnergyMin, EnergyMax float64
	// TorqueAmp is the largest amplitude of one sinusoid [N·m]; amplitudes
	// are drawn uniformly from [0, TorqueAmp].
	TorqueAmp float64
	// NumSinusoids is the number of sinusoids per joint (0: unforced).
	NumSinusoids int
	// FreqMin and FreqMax bound the sinusoid frequencies [Hz] (uniform).
	FreqMin, FreqMax float64
	// QRange bounds the initial joint angles, drawn uniformly from
	// [−QRange, QRange]; zero means π.
	QRange float64
	// RTol and ATol are DOP853's tolerances; zero means 1e-10.
	RTol, ATol float64
	// Workers is the number of trajectories integrated concurrently; zero
	// means runtime.GOMAXPROCS(0). Results do not depend on it.
	Workers int
	// Seed makes the data reproducible: trajectory i uses its own random
	// stream seeded by (Seed, i), whatever the scheduling.
	Seed int64
}

// DefaultSimConfig returns the configuration of the paper's simulated data:
// the pendulum of Table II, 100 Hz sampling, trajectories of 10 s, three
// sinusoids per joint with amplitudes up to 5 N·m and frequencies in
// [0.1, 1.5] Hz, DOP853 at rtol = atol = 1e-10, initial energies in
// [5, 15] J (an OOD set would use a range about 36% higher).
func DefaultSimConfig() SimConfig {
	return SimConfig{
		Params:       PaperPendulum(),
		Dt:           0.01,
		Steps:        1000,
		EnergyMin:    5,
		EnergyMax:    15,
		TorqueAmp:    5,
		NumSinusoids: 3,
		FreqMin:      0.1,
		FreqMax:      1.5,
		RTol:         1e-10,
		ATol:         1e-10,
	}
}

// Validate reports an unusable configuration.
func (c *SimConfig) Validate() error {
	if err := c.Params.Validate(); err != nil {
		return fmt.Errorf("mechanics: simulation: %w", err)
	}
	finite := func(v ...float64) bool {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
		return true
	}
	switch {
	case !finite(c.Dt, c.EnergyMin, c.EnergyMax, c.TorqueAmp, c.FreqMin, c.FreqMax, c.QRange, c.RTol, c.ATol):
		return errors.New("mechanics: simulation: non-finite configuration value")
	case c.Dt <= 0:
		return fmt.Errorf("mechanics: simulation: Dt = %g must be positive", c.Dt)
	case c.Steps < 1:
		return fmt.Errorf("mechanics: simulation: Steps = %d must be at least 1", c.Steps)
	case c.EnergyMin < 0 || c.EnergyMax < c.EnergyMin:
		return fmt.Errorf("mechanics: simulation: energy range [%g, %g] must satisfy 0 ≤ EnergyMin ≤ EnergyMax", c.EnergyMin, c.EnergyMax)
	case c.TorqueAmp < 0 || c.NumSinusoids < 0:
		return fmt.Errorf("mechanics: simulation: TorqueAmp = %g and NumSinusoids = %d must be non-negative", c.TorqueAmp, c.NumSinusoids)
	case c.FreqMin < 0 || c.FreqMax < c.FreqMin:
		return fmt.Errorf("mechanics: simulation: frequency range [%g, %g] must satisfy 0 ≤ FreqMin ≤ FreqMax", c.FreqMin, c.FreqMax)
	case c.QRange < 0 || c.RTol < 0 || c.ATol < 0 || c.Workers < 0:
		return errors.New("mechanics: simulation: QRange, RTol, ATol and Workers must be non-negative")
	}
	return nil
}

// Trajectory is one simulated trajectory of N = Steps+1 samples. Per-joint
// arrays are flat and row-major with stride PendulumDOF: sample k, joint j is
// at index k*PendulumDOF + j.
type Trajectory struct {
	Index int       // position in the batch; with the seed it determines the trajectory
	T     []float64 // sample times, T[k] = k·Dt, length N
	Q     []float64 // joint angles (q1 absolute, q2 relative) [rad], N×2
	P     []float64 // generalised momenta p = M(q) q̇, N×2
	V     []float64 // joint velocities q̇ [rad/s], N×2
	// U holds the torques [N·m], N×2: U at sample k is the profile at T[k]
	// (clipped to the torque limits when set), held constant on [T[k], T[k+1]).
	// The last row is the value the profile would hold next.
	U      []float64
	E      []float64     // total mechanical energy H(q, p) at each sample [J], length N
	E0     float64       // initial energy, E[0]
	Torque TorqueProfile // the sinusoids behind U
}

// Len returns the number of samples.
func (tr *Trajectory) Len() int { return len(tr.T) }

// Simulate integrates nTraj trajectories of the controlled, damped double
// pendulum, in parallel over trajectories. Each trajectory draws its target
// initial energy, its initial state and its torque profile from a random
// stream seeded by (cfg.Seed, index), so the result is reproducible and
// independent of cfg.Workers. Torques are zero-order held over each sample
// interval and the dynamics (Hamiltonian form) are integrated with DOP853.
// Simulate stops early with ctx's error when ctx is cancelled.
func Simulate(ctx context.Context, cfg SimConfig, nTraj int) ([]Trajectory, error) {
	if nTraj < 0 {
		return nil, fmt.Errorf("mechanics: simulation: nTraj = %d must be non-negative", nTraj)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	workers := cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, nTraj)
	inner, cancel := context.WithCancel(ctx)
	defer cancel()

	out := make([]Trajectory, nTraj)
	errs := make([]error, nTraj)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			solver := &DOP853{}
			for i := range jobs {
				tr, err := simulateOne(inner, &cfg, i, solver)
				if err != nil {
					errs[i] = err
					cancel()
					continue
				}
				out[i] = tr
			}
		}()
	}
feed:
	for i := range nTraj {
		select {
		case jobs <- i:
		case <-inner.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	// Report the first real failure (by index) rather than the cancellations
	// it caused in the other workers.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mechanics: simulation: %w", err)
	}
	return out, nil
}

// SimulateTrajectory computes trajectory number index of the batch that
// Simulate(ctx, cfg, n) would return for any n > index.
func SimulateTrajectory(ctx context.Context, cfg SimConfig, index int) (Trajectory, error) {
	if index < 0 {
		return Trajectory{}, fmt.Errorf("mechanics: simulation: index %d must be non-negative", index)
	}
	if err := cfg.Validate(); err != nil {
		return Trajectory{}, err
	}
	return simulateOne(ctx, &cfg, index, &DOP853{})
}

// ZOHStep advances the canonical state y = (q1, q2, p1, p2) by one sample
// interval [t, t+dt] under the constant torque tau, with the tolerances of
// cfg: the exact step Simulate takes between consecutive samples.
func ZOHStep(cfg *SimConfig, solver *DOP853, t float64, y []float64, tau [PendulumDOF]float64) error {
	if len(y) != 2*PendulumDOF {
		return fmt.Errorf("mechanics: ZOHStep: state has %d entries, want %d", len(y), 2*PendulumDOF)
	}
	solver.RTol, solver.ATol = cfg.RTol, cfg.ATol
	if solver.RTol == 0 {
		solver.RTol = 1e-10
	}
	if solver.ATol == 0 {
		solver.ATol = 1e-10
	}
	solver.FixedStep = 0
	f := cfg.Params.HamiltonianODE(&tau)
	if err := solver.Integrate(f, t, t+cfg.Dt, y); err != nil {
		return fmt.Errorf("mechanics: ZOH step at t=%g: %w", t, err)
	}
	return nil
}

// maxICTries bounds the rejection sampling of initial angles.
const maxICTries = 10000

// initialState draws the target energy, the angles (rejection-sampled so that
// V(q) ≤ target) and a velocity direction, then scales the velocity so that
// the total energy equals the target.
func initialState(cfg *SimConfig, rng *rand.Rand) (q, p [PendulumDOF]float64, err error) {
	pp := &cfg.Params
	target := cfg.EnergyMin + (cfg.EnergyMax-cfg.EnergyMin)*rng.Float64()
	qr := cfg.QRange
	if qr == 0 {
		qr = math.Pi
	}
	found := false
	for range maxICTries {
		q = [2]float64{qr * (2*rng.Float64() - 1), qr * (2*rng.Float64() - 1)}
		if pp.PotentialEnergy(q) <= target {
			found = true
			break
		}
	}
	if !found {
		return q, p, fmt.Errorf("mechanics: simulation: potential energy exceeds the target energy %g J at %d sampled configurations in [−%g, %g]²", target, maxICTries, qr, qr)
	}
	kin := target - pp.PotentialEnergy(q)
	var d [2]float64
	for d == [2]float64{} {
		d = [2]float64{rng.NormFloat64(), rng.NormFloat64()}
	}
	scale := 0.0
	if k1 := pp.KineticEnergy(q, d); k1 > 0 {
		scale = math.Sqrt(kin / k1)
	}
	v := [2]float64{scale * d[0], scale * d[1]}
	return q, pp.Momentum(q, v), nil
}

func drawProfile(cfg *SimConfig, rng *rand.Rand) TorqueProfile {
	var tp TorqueProfile
	for j := range tp {
		tp[j] = make([]Sinusoid, cfg.NumSinusoids)
		for i := range tp[j] {
			tp[j][i] = Sinusoid{
				Amp:   cfg.TorqueAmp * rng.Float64(),
				Freq:  cfg.FreqMin + (cfg.FreqMax-cfg.FreqMin)*rng.Float64(),
				Phase: 2 * math.Pi * rng.Float64(),
			}
		}
	}
	return tp
}

func simulateOne(ctx context.Context, cfg *SimConfig, index int, solver *DOP853) (Trajectory, error) {
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(index)))
	q, p, err := initialState(cfg, rng)
	if err != nil {
		return Trajectory{}, fmt.Errorf("trajectory %d: %w", index, err)
	}
	tp := drawProfile(cfg, rng)
	pp := &cfg.Params
	n := cfg.Steps + 1
	const d = PendulumDOF
	tr := Trajectory{
		Index:  index,
		T:      make([]float64, n),
		Q:      make([]float64, n*d),
		P:      make([]float64, n*d),
		V:      make([]float64, n*d),
		U:      make([]float64, n*d),
		E:      make([]float64, n),
		Torque: tp,
	}
	y := []float64{q[0], q[1], p[0], p[1]}
	for k := 0; k < n; k++ {
		if k%100 == 0 {
			if err := ctx.Err(); err != nil {
				return Trajectory{}, fmt.Errorf("mechanics: simulation: trajectory %d: %w", index, err)
			}
		}
		t := float64(k) * cfg.Dt
		qk := [2]float64{y[0], y[1]}
		pk := [2]float64{y[2], y[3]}
		vk := pp.Velocity(qk, pk)
		tau := tp.At(t)
		for j := range tau {
			if lim := pp.TorqueLimit[j]; lim > 0 {
				tau[j] = math.Max(-lim, math.Min(lim, tau[j]))
			}
		}
		tr.T[k] = t
		copy(tr.Q[k*d:], qk[:])
		copy(tr.P[k*d:], pk[:])
		copy(tr.V[k*d:], vk[:])
		copy(tr.U[k*d:], tau[:])
		tr.E[k] = pp.Hamiltonian(qk, pk)
		if k == n-1 {
			break
		}
		if err := ZOHStep(cfg, solver, t, y, tau); err != nil {
			return Trajectory{}, fmt.Errorf("mechanics: simulation: trajectory %d, sample %d: %w", index, k, err)
		}
	}
	tr.E0 = tr.E[0]
	return tr, nil
}
