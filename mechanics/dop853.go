package mechanics

import (
	"errors"
	"fmt"
	"math"
)

// ODEFunc is the right-hand side of an ordinary differential equation
// dy/dt = f(t, y). It must write the derivative into dydt (same length as y)
// and must not retain or modify y.
type ODEFunc func(t float64, y, dydt []float64)

// Errors reported by DOP853.Integrate. They are wrapped with the time and step
// size at which the integration stopped; test with errors.Is.
var (
	// ErrStepUnderflow reports that the adaptive step size fell below the
	// resolution of the time variable.
	ErrStepUnderflow = errors.New("mechanics: DOP853 step size underflow")
	// ErrMaxSteps reports that the step budget MaxSteps was exhausted.
	ErrMaxSteps = errors.New("mechanics: DOP853 exceeded the maximum number of steps")
	// ErrNonFinite reports a NaN or infinite state or derivative.
	ErrNonFinite = errors.New("mechanics: DOP853 non-finite state")
)

// Default tolerances and step budget used by DOP853 when its fields are zero.
const (
	DefaultRTol     = 1e-10
	DefaultATol     = 1e-10
	DefaultMaxSteps = 1_000_000
)

// Step-size controller constants (Hairer's dop853 / scipy's DOP853).
const (
	dopSafety    = 0.9
	dopMinFactor = 0.2
	dopMaxFactor = 10.0
	dopErrExp    = -1.0 / 8.0 // -1/(error estimator order + 1)
	dopStages    = 12
)

// DOP853Stats counts the work done by the last call to Integrate.
type DOP853Stats struct {
	NFev      int // right-hand-side evaluations
	NAccepted int // accepted steps
	NRejected int // rejected steps
}

// DOP853 is the explicit Runge–Kutta method of order 8 by Dormand and Prince
// with the Hairer–Wanner coefficients (dop853), adaptive step-size control
// from the combined 5th/3rd order error estimator, exactly as in Hairer's
// dop853 and scipy's solve_ivp(method="DOP853"): the scaled error norm is
// |h|·‖e5‖²/sqrt(N(‖e5‖²+0.01‖e3‖²)) with scale atol+rtol·max(|y|,|y_new|),
// safety factor 0.9, step-change factor clamped to [0.2, 10] (and ≤ 1 right
// after a rejection).
//
// The zero value is usable: zero RTol/ATol/MaxSteps select DefaultRTol,
// DefaultATol and DefaultMaxSteps. Work buffers are allocated on the first
// call for a given dimension and reused afterwards, so a DOP853 must not be
// used by several goroutines at once; use one per goroutine.
type DOP853 struct {
	RTol     float64 // relative tolerance
	ATol     float64 // absolute tolerance
	MaxSteps int     // maximum number of (accepted + rejected) steps per Integrate call
	// MaxStep bounds |h| in adaptive mode; zero means unbounded.
	MaxStep float64
	// FirstStep is the initial step size in adaptive mode; zero selects it
	// automatically (Hairer's hinit heuristic, as in scipy).
	FirstStep float64
	// FixedStep > 0 switches off error control: the interval is split into
	// n = ceil(|t1−t0|/FixedStep) equal steps of size (t1−t0)/n.
	FixedStep float64

	stats DOP853Stats
	n     int
	k     [dopStages + 1][]float64 // stage derivatives; k[12] is f at the new point (FSAL)
	ytmp  []float64
	ynew  []float64
}

// Stats returns the counters of the last call to Integrate.
func (s *DOP853) Stats() DOP853Stats { return s.stats }

func (s *DOP853) ensure(n int) {
	if s.n == n && s.ytmp != nil {
		return
	}
	s.n = n
	for i := range s.k {
		s.k[i] = make([]float64, n)
	}
	s.ytmp = make([]float64, n)
	s.ynew = make([]float64, n)
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// Integrate advances y in place from t0 to t1 (t1 < t0 integrates backwards),
// landing exactly on t1. It returns an error wrapping ErrStepUnderflow,
// ErrMaxSteps or ErrNonFinite when the integration cannot be completed; y
// then holds the last accepted state.
func (s *DOP853) Integrate(f ODEFunc, t0, t1 float64, y []float64) error {
	s.stats = DOP853Stats{}
	if len(y) == 0 || t0 == t1 {
		return nil
	}
	if math.IsNaN(t0) || math.IsNaN(t1) || math.IsInf(t0, 0) || math.IsInf(t1, 0) {
		return fmt.Errorf("%w: time interval [%g, %g]", ErrNonFinite, t0, t1)
	}
	if !allFinite(y) {
		return fmt.Errorf("%w: initial state at t=%g", ErrNonFinite, t0)
	}
	rtol, atol := s.RTol, s.ATol
	if rtol <= 0 {
		rtol = DefaultRTol
	}
	if atol <= 0 {
		atol = DefaultATol
	}
	maxSteps := s.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	s.ensure(len(y))
	f(t0, y, s.k[0])
	s.stats.NFev++
	if !allFinite(s.k[0]) {
		return fmt.Errorf("%w: derivative at t=%g", ErrNonFinite, t0)
	}
	if s.FixedStep > 0 {
		return s.integrateFixed(f, t0, t1, y, maxSteps)
	}
	return s.integrateAdaptive(f, t0, t1, y, rtol, atol, maxSteps)
}

func (s *DOP853) integrateFixed(f ODEFunc, t0, t1 float64, y []float64, maxSteps int) error {
	span := math.Abs(t1 - t0)
	nf := math.Ceil(span/s.FixedStep - 1e-9)
	if nf < 1 {
		nf = 1
	}
	if nf > float64(maxSteps) {
		return fmt.Errorf("%w: %g fixed steps of %g needed, MaxSteps=%d", ErrMaxSteps, nf, s.FixedStep, maxSteps)
	}
	nsteps := int(nf)
	h := (t1 - t0) / nf
	for i := 0; i < nsteps; i++ {
		t := t0 + float64(i)*h
		tn := t0 + float64(i+1)*h
		if i == nsteps-1 {
			tn = t1
		}
		s.step(f, t, tn-t, y)
		if !allFinite(s.ynew) || !allFinite(s.k[dopStages]) {
			return fmt.Errorf("%w: at t=%g (h=%g)", ErrNonFinite, tn, h)
		}
		copy(y, s.ynew)
		s.k[0], s.k[dopStages] = s.k[dopStages], s.k[0]
		s.stats.NAccepted++
	}
	return nil
}

func (s *DOP853) integrateAdaptive(f ODEFunc, t0, t1 float64, y []float64, rtol, atol float64, maxSteps int) error {
	dir := 1.0
	if t1 < t0 {
		dir = -1
	}
	span := math.Abs(t1 - t0)
	hAbs := s.FirstStep
	if hAbs <= 0 {
		hAbs = s.initialStep(f, t0, y, dir, rtol, atol)
	}
	hAbs = math.Min(hAbs, span)
	if s.MaxStep > 0 {
		hAbs = math.Min(hAbs, s.MaxStep)
	}
	t := t0
	steps := 0
	n := float64(len(y))
	for dir*(t-t1) < 0 {
		minStep := 10 * math.Abs(math.Nextafter(t, dir*math.Inf(1))-t)
		rejected := false
		for {
			if steps >= maxSteps {
				return fmt.Errorf("%w: %d steps, stopped at t=%g of [%g, %g]", ErrMaxSteps, steps, t, t0, t1)
			}
			steps++
			if hAbs < minStep {
				return fmt.Errorf("%w: |h|=%g < %g at t=%g", ErrStepUnderflow, hAbs, minStep, t)
			}
			tNew := t + dir*hAbs
			if dir*(tNew-t1) > 0 {
				tNew = t1
			}
			h := tNew - t
			hAbs = math.Abs(h)
			s.step(f, t, h, y)

			// Combined 5th/3rd order error estimate (Hairer's dop853).
			var e5, e3 float64
			for i := range y {
				sc := atol + rtol*math.Max(math.Abs(y[i]), math.Abs(s.ynew[i]))
				var a5, a3 float64
				for j := 0; j < dopStages; j++ {
					kj := s.k[j][i]
					a5 += dopE5[j] * kj
					a3 += dopE3[j] * kj
				}
				a5 /= sc
				a3 /= sc
				e5 += a5 * a5
				e3 += a3 * a3
			}
			errNorm := 0.0
			if e5 != 0 || e3 != 0 {
				errNorm = hAbs * e5 / math.Sqrt((e5+0.01*e3)*n)
			}
			finite := !math.IsNaN(errNorm) && !math.IsInf(errNorm, 0) &&
				allFinite(s.ynew) && allFinite(s.k[dopStages])
			if finite && errNorm < 1 {
				factor := dopMaxFactor
				if errNorm > 0 {
					factor = math.Min(dopMaxFactor, dopSafety*math.Pow(errNorm, dopErrExp))
				}
				if rejected {
					factor = math.Min(1, factor)
				}
				t = tNew
				copy(y, s.ynew)
				s.k[0], s.k[dopStages] = s.k[dopStages], s.k[0]
				hAbs *= factor
				if s.MaxStep > 0 {
					hAbs = math.Min(hAbs, s.MaxStep)
				}
				s.stats.NAccepted++
				break
			}
			if finite {
				hAbs *= math.Max(dopMinFactor, dopSafety*math.Pow(errNorm, dopErrExp))
			} else {
				hAbs *= dopMinFactor
			}
			rejected = true
			s.stats.NRejected++
		}
	}
	return nil
}

// initialStep is Hairer's hinit heuristic as implemented in scipy's
// select_initial_step (error estimator order 7). s.k[0] holds f(t0, y).
func (s *DOP853) initialStep(f ODEFunc, t0 float64, y []float64, dir, rtol, atol float64) float64 {
	f0 := s.k[0]
	var d0, d1 float64
	for i := range y {
		sc := atol + math.Abs(y[i])*rtol
		d0 += (y[i] / sc) * (y[i] / sc)
		d1 += (f0[i] / sc) * (f0[i] / sc)
	}
	n := float64(len(y))
	d0 = math.Sqrt(d0 / n)
	d1 = math.Sqrt(d1 / n)
	h0 := 1e-6
	if d0 >= 1e-5 && d1 >= 1e-5 {
		h0 = 0.01 * d0 / d1
	}
	for i := range y {
		s.ytmp[i] = y[i] + dir*h0*f0[i]
	}
	f1 := s.k[1]
	f(t0+dir*h0, s.ytmp, f1)
	s.stats.NFev++
	var d2 float64
	for i := range y {
		sc := atol + math.Abs(y[i])*rtol
		d := (f1[i] - f0[i]) / sc
		d2 += d * d
	}
	d2 = math.Sqrt(d2/n) / h0
	var h1 float64
	if d1 <= 1e-15 && d2 <= 1e-15 {
		h1 = math.Max(1e-6, h0*1e-3)
	} else {
		h1 = math.Pow(0.01/math.Max(d1, d2), 1.0/8.0)
	}
	h := math.Min(100*h0, h1)
	if math.IsNaN(h) || h <= 0 {
		h = 1e-6
	}
	return h
}

// step computes one DOP853 step of size h from (t, y) with s.k[0] = f(t, y).
// It fills s.k[1..11], s.ynew and s.k[12] = f(t+h, ynew).
func (s *DOP853) step(f ODEFunc, t, h float64, y []float64) {
	for st := 1; st < dopStages; st++ {
		row := dopA[st]
		for i := range y {
			acc := 0.0
			for j := 0; j < st; j++ {
				if row[j] != 0 {
					acc += row[j] * s.k[j][i]
				}
			}
			s.ytmp[i] = y[i] + h*acc
		}
		f(t+dopC[st]*h, s.ytmp, s.k[st])
	}
	for i := range y {
		acc := 0.0
		for j := 0; j < dopStages; j++ {
			if dopB[j] != 0 {
				acc += dopB[j] * s.k[j][i]
			}
		}
		s.ynew[i] = y[i] + h*acc
	}
	f(t+h, s.ynew, s.k[dopStages])
	s.stats.NFev += dopStages
}

// Dormand–Prince 8(5,3) coefficients (Hairer & Wanner, dop853.f).
var dopC = [dopStages]float64{
	0.0,
	0.526001519587677318785587544488e-01,
	0.789002279381515978178381316732e-01,
	0.118350341907227396726757197510,
	0.281649658092772603273242802490,
	0.333333333333333333333333333333,
	0.25,
	0.307692307692307692307692307692,
	0.651282051282051282051282051282,
	0.6,
	0.857142857142857142857142857142,
	1.0,
}

var dopA = [dopStages][dopStages]float64{
	{},
	{5.26001519587677318785587544488e-2},
	{1.97250569845378994544595329183e-2, 5.91751709536136983633785987549e-2},
	{2.95875854768068491816892993775e-2, 0, 8.87627564304205475450678981324e-2},
	{2.41365134159266685502369798665e-1, 0, -8.84549479328286085344864962717e-1, 9.24834003261792003115737966543e-1},
	{3.7037037037037037037037037037e-2, 0, 0, 1.70828608729473871279604482173e-1, 1.25467687566822425016691814123e-1},
	{3.7109375e-2, 0, 0, 1.70252211019544039314978060272e-1, 6.02165389804559606850219397283e-2, -1.7578125e-2},
	{3.70920001185047927108779319836e-2, 0, 0, 1.70383925712239993810214054705e-1, 1.07262030446373284651809199168e-1,
		-1.53194377486244017527936158236e-2, 8.27378916381402288758473766002e-3},
	{6.24110958716075717114429577812e-1, 0, 0, -3.36089262944694129406857109825, -8.68219346841726006818189891453e-1,
		2.75920996994467083049415600797e1, 2.01540675504778934086186788979e1, -4.34898841810699588477366255144e1},
	{4.77662536438264365890433908527e-1, 0, 0, -2.48811461997166764192642586468, -5.90290826836842996371446475743e-1,
		2.12300514481811942347288949897e1, 1.52792336328824235832596922938e1, -3.32882109689848629194453265587e1,
		-2.03312017085086261358222928593e-2},
	{-9.3714243008598732571704021658e-1, 0, 0, 5.18637242884406370830023853209, 1.09143734899672957818500254654,
		-8.14978701074692612513997267357, -1.85200656599969598641566180701e1, 2.27394870993505042818970056734e1,
		2.49360555267965238987089396762, -3.0467644718982195003823669022},
	{2.27331014751653820792359768449, 0, 0, -1.05344954667372501984066689879e1, -2.00087205822486249909675718444,
		-1.79589318631187989172765950534e1, 2.79488845294199600508499808837e1, -2.85899827713502369474065508674,
		-8.87285693353062954433549289258, 1.23605671757943030647266201528e1, 6.43392746015763530355970484046e-1},
}

// dopB are the 8th-order weights (row 12 of Hairer's tableau).
var dopB = [dopStages]float64{
	5.42937341165687622380535766363e-2, 0, 0, 0, 0,
	4.45031289275240888144113950566,
	1.89151789931450038304281599044,
	-5.8012039600105847814672114227,
	3.1116436695781989440891606237e-1,
	-1.52160949662516078556178806805e-1,
	2.01365400804030348374776537501e-1,
	4.47106157277725905176885569043e-2,
}

// dopE5 is the 5th-order error estimator (coefficients er1..er12).
var dopE5 = [dopStages]float64{
	0.1312004499419488073250102996e-1, 0, 0, 0, 0,
	-0.1225156446376204440720569753e1,
	-0.4957589496572501915214079952,
	0.1664377182454986536961530415e1,
	-0.3503288487499736816886487290,
	0.3341791187130174790297318841,
	0.8192320648511571246570742613e-1,
	-0.2235530786388629525884427845e-1,
}

// dopE3 is the 3rd-order error estimator: b − (bhh1, 0…, bhh2, 0, 0, bhh3).
var dopE3 = [dopStages]float64{
	5.42937341165687622380535766363e-2 - 0.244094488188976377952755905512, 0, 0, 0, 0,
	4.45031289275240888144113950566,
	1.89151789931450038304281599044,
	-5.8012039600105847814672114227,
	3.1116436695781989440891606237e-1 - 0.733846688281611857341361741547,
	-1.52160949662516078556178806805e-1,
	2.01365400804030348374776537501e-1,
	4.47106157277725905176885569043e-2 - 0.220588235294117647058823529412e-1,
}
