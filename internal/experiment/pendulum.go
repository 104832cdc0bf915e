// Package experiment runs calisym's benchmark experiments end to end:
// simulated or converted data, training of the lifted symplectic model and
// the MLP baseline by the same loop, autoregressive evaluation in and out of
// distribution, and the report (JSON, Markdown, plots). The plots colour
// each model by its kind (plot.KindRole), the same in every figure; the
// OOD rollout plot shows the window of median CaLiSym error among the
// evaluated OOD windows, with the state held constant beside the models,
// and its caption says so and gives every model's error there.
package experiment

import (
	"context"
	"fmt"
	"strconv"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/statemap"
)

// PendulumData describes the simulated double-pendulum benchmark data: the
// training, in-distribution test and out-of-distribution test sets differ in
// their initial-energy ranges and random streams.
type PendulumData struct {
	// Sim holds everything but the energy range and the seed.
	Sim mechanics.SimConfig `json:"sim"`
	// TrainEnergy is the initial-energy range [J] of the training and ID sets.
	TrainEnergy [2]float64 `json:"train_energy"`
	// OODFactor scales both ends of TrainEnergy for the OOD set (paper: about 1.36).
	OODFactor float64 `json:"ood_factor"`
	// Trajectories per split.
	TrainTraj int `json:"train_trajectories"`
	IDTraj    int `json:"id_trajectories"`
	OODTraj   int `json:"ood_trajectories"`
	// WindowLen and Stride segment the training set (paper: 100 and 10).
	WindowLen int `json:"window_len"`
	Stride    int `json:"stride"`
	// Seed makes the three splits reproducible; they use seeds Seed, Seed+1, Seed+2.
	Seed int64 `json:"seed"`
}

// Validate reports an unusable data description.
func (p PendulumData) Validate() error {
	switch {
	case !(p.TrainEnergy[0] >= 0 && p.TrainEnergy[1] >= p.TrainEnergy[0]):
		return fmt.Errorf("experiment: training energy range %v", p.TrainEnergy)
	case !(p.OODFactor > 0):
		return fmt.Errorf("experiment: OOD energy factor %v must be positive", p.OODFactor)
	case p.TrainTraj < 1 || p.IDTraj < 1 || p.OODTraj < 1:
		return fmt.Errorf("experiment: trajectory counts %d/%d/%d must be positive", p.TrainTraj, p.IDTraj, p.OODTraj)
	case p.WindowLen < 2 || p.Stride < 1:
		return fmt.Errorf("experiment: window length %d and stride %d", p.WindowLen, p.Stride)
	case p.WindowLen > p.Sim.Steps+1:
		return fmt.Errorf("experiment: window length %d exceeds the %d samples of a trajectory", p.WindowLen, p.Sim.Steps+1)
	}
	return nil
}

// Split is one simulated split.
type Split struct {
	Name   string
	Energy [2]float64
	Seed   int64
	Count  int
}

// Splits returns the three splits: train, id and ood.
func (p PendulumData) Splits() []Split {
	ood := [2]float64{p.TrainEnergy[0] * p.OODFactor, p.TrainEnergy[1] * p.OODFactor}
	return []Split{
		{"train", p.TrainEnergy, p.Seed, p.TrainTraj},
		{"id", p.TrainEnergy, p.Seed + 1, p.IDTraj},
		{"ood", ood, p.Seed + 2, p.OODTraj},
	}
}

// SimulateSplit integrates one split's trajectories.
func (p PendulumData) SimulateSplit(ctx context.Context, s Split) ([]mechanics.Trajectory, error) {
	cfg := p.Sim
	cfg.EnergyMin, cfg.EnergyMax = s.Energy[0], s.Energy[1]
	cfg.Seed = s.Seed
	trs, err := mechanics.Simulate(ctx, cfg, s.Count)
	if err != nil {
		return nil, fmt.Errorf("experiment: simulating the %s split: %w", s.Name, err)
	}
	return trs, nil
}

// PendulumDataset turns simulated trajectories into a dataset: state
// (q1, q2, p1, p2), control port (u1, u2) held over each interval, no
// contact port. Every episode is tagged with its initial and mean energy.
func PendulumDataset(trs []mechanics.Trajectory, dt float64, windowLen, stride int, split string, source map[string]string) (*dataset.Dataset, error) {
	ds := &dataset.Dataset{Meta: dataset.Meta{FormatVersion: 1, N: 2, NU: 2, Dt: dt,
		Coordinates: []string{"q1", "q2"}, Ports: []string{"u1", "u2"},
		WindowLen: windowLen, Stride: stride, Split: split, Source: source}}
	off := 0
	for _, tr := range trs {
		n := tr.Len()
		x := make([]float64, 4*n)
		e := make([]float64, 2*n)
		var emean float64
		for k := range n {
			x[4*k], x[4*k+1] = tr.Q[2*k], tr.Q[2*k+1]
			x[4*k+2], x[4*k+3] = tr.P[2*k], tr.P[2*k+1]
			e[2*k], e[2*k+1] = tr.U[2*k], tr.U[2*k+1]
			emean += tr.E[k]
		}
		ds.Episodes = append(ds.Episodes, dataset.Episode{
			Name: split + "-" + strconv.Itoa(tr.Index), Len: n, Offset: off, X: x, E: e,
			Tags: map[string]float64{"initial_energy": tr.E0, "mean_energy": emean / float64(n)},
		})
		off += n
	}
	if err := ds.Validate(); err != nil {
		return nil, fmt.Errorf("experiment: %s split: %w", split, err)
	}
	return ds, nil
}

// SimulatePendulum simulates the three splits and returns their datasets in
// the order train, id, ood.
func SimulatePendulum(ctx context.Context, p PendulumData) ([]*dataset.Dataset, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var out []*dataset.Dataset
	for _, s := range p.Splits() {
		ds, _, err := p.SimulateDataset(ctx, s)
		if err != nil {
			return nil, err
		}
		out = append(out, ds)
	}
	return out, nil
}

// SimulateDataset simulates one split and returns its dataset
// (PendulumDataset, with the simulation's provenance) and the trajectories
// behind it, for instance to record them with WritePendulumMCAP.
func (p PendulumData) SimulateDataset(ctx context.Context, s Split) (*dataset.Dataset, []mechanics.Trajectory, error) {
	trs, err := p.SimulateSplit(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	src := map[string]string{
		"simulator":   "calisym double pendulum, DOP853, zero-order-hold torques",
		"energy_min":  strconv.FormatFloat(s.Energy[0], 'g', -1, 64),
		"energy_max":  strconv.FormatFloat(s.Energy[1], 'g', -1, 64),
		"seed":        strconv.FormatInt(s.Seed, 10),
		"torque_amp":  strconv.FormatFloat(p.Sim.TorqueAmp, 'g', -1, 64),
		"sinusoids":   strconv.Itoa(p.Sim.NumSinusoids),
		"steps":       strconv.Itoa(p.Sim.Steps),
		"sample_rate": strconv.FormatFloat(1/p.Sim.Dt, 'g', -1, 64),
		// the ports as params/pendulum_sim.yaml computes them from the
		// simulator's logs (WritePendulumMCAP)
		statemap.PortMapKey: PendulumPortMap(),
	}
	ds, err := PendulumDataset(trs, p.Sim.Dt, p.WindowLen, p.Stride, s.Name, src)
	if err != nil {
		return nil, nil, err
	}
	return ds, trs, nil
}
