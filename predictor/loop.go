package predictor

import "fmt"

// PortSource chooses the ports of each step of a rollout from the state
// the rollout has reached: a port forecast in the loop (a controller and
// a contact model rolled out with the dynamics model) instead of a port
// sequence fixed before the rollout starts.
type PortSource interface {
	// PortsAt writes the ports of step k (n_u + n_c values, applied from
	// x_k to x_{k+1}) into row, from the state x_k the rollout reached
	// (x_0 for k = 0). It must not keep x or row.
	PortsAt(k int, x, row []float64) error
}

// LoopStepper is a Stepper that rolls out with a PortSource in the loop
// itself, because its steps are not independent of the step index (an
// offset-free estimator's decay).
type LoopStepper interface {
	Stepper
	// RolloutLoop predicts x̂_1 … x̂_H from x0, asking src for the ports of
	// each step from the state reached, and writes the ports it used into
	// ports (horizon × n_e) and the states into out (horizon × 2n). Its
	// states are those Rollout would predict under the same ports.
	RolloutLoop(x0 []float64, src PortSource, horizon int, ports, out []float64) error
}

// RolloutLoop rolls s out from x0 with the ports src chooses at each step
// from the state reached (LoopStepper's contract): through s's own
// RolloutLoop where it has one, else one step of s.Rollout at a time, so
// that a Stepper whose steps are those of its rollout (Roller, the MLP)
// predicts the states its Rollout would under the ports recorded. n is
// the number of configuration coordinates, ne the number of port values.
// It allocates nothing.
func RolloutLoop(s Stepper, src PortSource, n, ne int, x0 []float64, horizon int, ports, out []float64) error {
	if ls, ok := s.(LoopStepper); ok {
		return ls.RolloutLoop(x0, src, horizon, ports, out)
	}
	return stepLoop(plainSteps{s}, n, ne, x0, src, horizon, ports, out)
}

// loopSteps advances a rollout with ports in the loop by one step: x_k
// under row to x_{k+1} in next. begin starts a rollout.
type loopSteps interface {
	begin()
	step(x, row, next []float64) error
}

// plainSteps steps a Stepper by its own one-step rollouts.
type plainSteps struct{ s Stepper }

func (plainSteps) begin() {}
func (p plainSteps) step(x, row, next []float64) error {
	return p.s.Rollout(x, row, 1, next)
}

// stepLoop is the loop of every RolloutLoop: at step k it asks src for
// the ports from x_k, then s writes x_{k+1}.
func stepLoop[S loopSteps](s S, n, ne int, x0 []float64, src PortSource, horizon int, ports, out []float64) error {
	n2 := 2 * n
	if len(x0) != n2 || horizon < 0 || len(ports) < horizon*ne || len(out) < horizon*n2 || src == nil {
		return fmt.Errorf("%w: rollout with ports in the loop of horizon %d with %d state, %d port and %d output values (state %d, ports %d)", ErrLayout, horizon, len(x0), len(ports), len(out), n2, ne)
	}
	s.begin()
	prev := x0
	for k := range horizon {
		row, next := ports[k*ne:(k+1)*ne], out[k*n2:(k+1)*n2]
		if err := src.PortsAt(k, prev, row); err != nil {
			return err
		}
		if err := s.step(prev, row, next); err != nil {
			return err
		}
		prev = next
	}
	return nil
}

// RolloutLoop implements LoopStepper: the model's step, then Decay^k·d
// added to the momenta of step k+1, as Rollout adds it.
func (f *ForceEstimator) RolloutLoop(x0 []float64, src PortSource, horizon int, ports, out []float64) error {
	return stepLoop(f, f.n, f.ne, x0, src, horizon, ports, out)
}

func (f *ForceEstimator) begin() { f.loopScale = 1 }

func (f *ForceEstimator) step(x, row, next []float64) error {
	if err := f.s.Rollout(x, row, 1, next); err != nil {
		return err
	}
	if f.count > 0 {
		for j, d := range f.off {
			next[f.n+j] += f.loopScale * d
		}
		f.loopScale *= f.cfg.Decay
	}
	return nil
}

// RolloutLoop implements LoopStepper: the model's step, then the base
// momenta translated by Decay^k·d at step k+1, as Rollout translates them.
func (f *WrenchEstimator) RolloutLoop(x0 []float64, src PortSource, horizon int, ports, out []float64) error {
	return stepLoop(f, f.n, f.ne, x0, src, horizon, ports, out)
}

func (f *WrenchEstimator) begin() {
	f.Translation(&f.loopD)
	f.loopScale = 1
}

func (f *WrenchEstimator) step(x, row, next []float64) error {
	if err := f.s.Rollout(x, row, 1, next); err != nil {
		return err
	}
	if f.loopD != [6]float64{} {
		for j, v := range f.loopD {
			next[f.n+j] += f.loopScale * v
		}
		f.loopScale *= f.cfg.Decay
	}
	return nil
}

// RolloutLoop implements LoopStepper: Rollout's steps, with the ports of
// each step asked from the state it reached, so that it predicts Rollout's
// states bit for bit under the ports recorded. It does not allocate.
func (r *Roller) RolloutLoop(x0 []float64, src PortSource, horizon int, ports, out []float64) error {
	p, w := r.p, r.w
	n2, ne := 2*p.Layout.N, p.Layout.PortDim()
	if src == nil {
		return fmt.Errorf("%w: rollout with ports in the loop without a port source", ErrLayout)
	}
	if err := p.checkRollout(1, horizon, x0, ports, out); err != nil {
		return err
	}
	normInto(w.xn[:n2], x0, p.muX, p.sX)
	prev := x0
	for k := range horizon {
		row, next := ports[k*ne:(k+1)*ne], out[k*n2:(k+1)*n2]
		if err := src.PortsAt(k, prev, row); err != nil {
			return err
		}
		normInto(w.en[:ne], row, p.muE, p.sE)
		p.embed(w, 1)
		p.mapRows(w, 1, true, true)
		p.project(w, 1)
		denormInto(next, w.xn[:n2], p.muX, p.sX)
		prev = next
	}
	return nil
}
