package optim

import (
	"fmt"
	"math"
)

// Schedule maps an epoch (or step) index t ≥ 0 to a learning-rate
// multiplier, passed to Optimizer.Step as lrScale.
type Schedule interface {
	At(t int) float64
}

// Constant is the schedule whose multiplier is always 1.
type Constant struct{}

// At implements Schedule.
func (Constant) At(int) float64 { return 1 }

// WarmupCosine is a linear warmup followed by a cosine decay. For
// t < Warmup the multiplier is (t+1)/(Warmup+1); afterwards it follows
// MinFactor + (1−MinFactor)·(1+cos(π·s))/2 with s = (t−Warmup)/(Total−Warmup)
// clamped to [0, 1], so it starts at 1 and reaches MinFactor at t = Total.
type WarmupCosine struct {
	Warmup    int     `json:"warmup"`
	Total     int     `json:"total"`
	MinFactor float64 `json:"min_factor"`
}

// At implements Schedule.
func (s WarmupCosine) At(t int) float64 {
	if t < s.Warmup {
		return float64(t+1) / float64(s.Warmup+1)
	}
	span := max(s.Total-s.Warmup, 1)
	u := math.Min(math.Max(float64(t-s.Warmup)/float64(span), 0), 1)
	return s.MinFactor + (1-s.MinFactor)*0.5*(1+math.Cos(math.Pi*u))
}

// StepDecay multiplies the rate by Gamma every Every epochs:
// Gamma^⌊t/Every⌋ (Every ≤ 0 means never).
type StepDecay struct {
	Every int     `json:"every"`
	Gamma float64 `json:"gamma"`
}

// At implements Schedule.
func (s StepDecay) At(t int) float64 {
	if s.Every <= 0 {
		return 1
	}
	return math.Pow(s.Gamma, float64(t/s.Every))
}

// AlphaSchedule is the teacher-forcing schedule of the paper's Appendix D:
// α = 1 for the first Hold epochs, then a linear ramp over Ramp epochs down
// to Final, which is held afterwards. Ramp ≤ 0 jumps to Final at Hold.
// The quadrotor uses Hold = 50, Ramp = 50.
type AlphaSchedule struct {
	Hold  int     `json:"hold"`
	Ramp  int     `json:"ramp"`
	Final float64 `json:"final"`
}

// At returns α at epoch (0-based): 1 for epoch < Hold, then
// 1 + min((epoch−Hold)/Ramp, 1)·(Final − 1).
func (a AlphaSchedule) At(epoch int) float64 {
	if epoch < a.Hold {
		return 1
	}
	if a.Ramp <= 0 {
		return a.Final
	}
	u := math.Min(float64(epoch-a.Hold)/float64(a.Ramp), 1)
	return 1 + u*(a.Final-1)
}

// Validate checks that Final lies in [0, 1] and Hold, Ramp are ≥ 0.
func (a AlphaSchedule) Validate() error {
	if a.Hold < 0 || a.Ramp < 0 || !(a.Final >= 0 && a.Final <= 1) {
		return fmt.Errorf("optim: teacher-forcing schedule hold %d, ramp %d, final %v", a.Hold, a.Ramp, a.Final)
	}
	return nil
}
