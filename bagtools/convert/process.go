package convert

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/calisym/calisym/bagtools/signal"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/statemap"
)

// Per-sample codes at the working rate, in the priority order in which they
// are reported as a window's rejection reason.
const (
	codeOK = iota
	codeGap
	codeNaN
	codeQuat
	codeJump
	codeRange
	codeShort
	numCodes
)

// Rejection reasons counted in the conversion report.
const (
	// ReasonGap: a window covers a stretch where some input has no samples
	// within validate.max_gap, or lies outside some input's time span.
	ReasonGap = "gap"
	// ReasonNaN: a window covers a NaN or infinite input value.
	ReasonNaN = "nan"
	// ReasonQuaternion: a window covers a quaternion whose norm is off by
	// more than validate.max_quat_norm_error.
	ReasonQuaternion = "quaternion"
	// ReasonJump: a window covers a step of the raw configuration faster
	// than validate.max_speed, max_angular_speed or max_joint_speed.
	ReasonJump = "jump"
	// ReasonOutOfRange: a window covers a sample outside its channel's
	// physical range (validate.bounds) that was not repaired.
	ReasonOutOfRange = "out_of_range"
	// ReasonShortSegment: a window covers valid samples in a stretch too
	// short to filter (at most the filter's padding long).
	ReasonShortSegment = "short_segment"
	// ReasonMomentumJump: a window covers a momentum step beyond
	// validate.max_momentum_step or validate.momentum_jump_mad.
	ReasonMomentumJump = "momentum_jump"
	// ReasonExcluded: a window overlaps a stretch that validate.exclude
	// names.
	ReasonExcluded = "excluded"
)

func codeReason(c int) string {
	return [...]string{"", ReasonGap, ReasonNaN, ReasonQuaternion, ReasonJump, ReasonOutOfRange, ReasonShortSegment}[c]
}

// fileData is one input converted to the dataset rate, before windows are
// assigned to splits.
type fileData struct {
	rel     string
	t       []float64 // decimated times since the start of the file
	valid   []bool
	joints  []float64 // J × nj joint positions (spec order)
	pose    []mechanics.SE3
	p       []float64 // J × nv momenta
	ports   []float64 // J × ne
	energy  []float64
	windows []windowRec
	report  FileReport
}

// windowRec is one candidate window.
type windowRec struct {
	start  int // decimated index of the first sample
	reason string
	split  string
}

// streamSet is the set of aligned streams of one file and which scalar
// inputs they carry.
type streamSet struct {
	streams  []signal.Stream
	ofScalar []int // stream index of each scalar (−1 for constants and orientation members)
	constant []float64
	orient   int   // stream of the orientation quaternion, −1 if none
	flags    []int // streams of raw-sample flags (quaternion norm, jumps)
	// rangeFlags are the streams of out-of-range samples
	// (validate.bounds) not repaired
	rangeFlags []int
	quatFlag   int
	dataEnd    int // streams [0, dataEnd) carry data; the rest are flags
}

// working is one input aligned on the working clock.
type working struct {
	al   *signal.Aligned
	ss   *streamSet
	rate float64 // working rate [Hz]
	D    int     // decimation factor to the dataset rate
	code []uint8 // per working sample
	segs [][2]int
	seg  []int // segment of each working sample, −1 outside
	zp   *signal.ZeroPhase
}

// process converts one source, stage by stage: read the channels, build
// the streams and raw-sample flags, align them on the working clock, code
// every working sample, cut and filter segments, map the samples at the
// dataset rate (statemap), flag momentum jumps and cut windows. A
// cancelled ctx stops it between stages and within the mapping.
func (c *Converter) process(ctx context.Context, src Source, rel string) (*fileData, error) {
	fd := &fileData{rel: rel}
	rep := &fd.report
	rep.Path = rel
	byName, err := c.read(src, rep)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	outOfRange, err := c.checkBounds(src, byName, rep)
	if err != nil {
		return nil, err
	}
	ss, err := c.buildStreams(byName, rep)
	if err != nil {
		return nil, err
	}
	addRangeFlags(ss, byName, outOfRange)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w, err := c.align(src, ss, rep)
	if err != nil {
		return nil, err
	}
	w.codeSamples()
	if err := c.segment(w); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := c.mapSamples(ctx, fd, w); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	jumpStep := c.momentumJumps(fd, w.seg, w.D, c.model.NV())
	for _, b := range jumpStep {
		if b {
			rep.MomentumJumps++
		}
	}
	c.cutWindows(fd, w, jumpStep)
	if wr, ok := src.(Warner); ok {
		rep.Warnings = append(rep.Warnings, wr.Warnings()...)
	}
	return fd, nil
}

// read reads the spec's channels from the source and counts their NaN
// and infinite samples (made NaN), failing on a channel that is all (or
// too much) NaN.
func (c *Converter) read(src Source, rep *FileReport) (map[string]Series, error) {
	s := c.spec
	if err := c.checkChannels(src); err != nil {
		return nil, err
	}
	series, err := src.Read(c.plan.Names())
	if err != nil {
		return nil, err
	}
	byName := make(map[string]Series, len(series))
	for _, se := range series {
		byName[se.Name] = se
	}
	rep.NaN = map[string]int{}
	if len(series) > 0 {
		rep.Rows = len(series[0].Time)
	}
	for _, se := range series {
		// An infinite value is a missing one, as a NaN is: it is counted
		// with them and turned into a NaN, so that every window that
		// covers it is rejected (ReasonNaN) instead of reaching the
		// filters, the momenta and the statistics.
		n := 0
		for i, v := range se.Values {
			if math.IsInf(v, 0) {
				se.Values[i] = math.NaN()
			}
			if math.IsNaN(se.Values[i]) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		rep.NaN[se.Name] = n
		if n == len(se.Values) {
			return nil, fmt.Errorf("%w: channel %q is NaN or infinite in all %d samples", ErrNaN, se.Name, n)
		}
		if f := s.Validate.MaxNaNFraction; f > 0 && float64(n) > f*float64(len(se.Values)) {
			return nil, fmt.Errorf("%w: channel %q is NaN or infinite in %d of %d samples (%.1f%%), more than validate.max_nan_fraction = %g", ErrNaN, se.Name, n, len(se.Values), 100*float64(n)/float64(len(se.Values)), f)
		}
	}
	return byName, nil
}

// align chooses the working rate and aligns the streams on its clock,
// counting the gaps. Time going backwards is a warning (the samples are
// sorted); a clock too long to build is an ErrTime naming the sample
// that stretches it.
func (c *Converter) align(src Source, ss *streamSet, rep *FileReport) (*working, error) {
	s := c.spec
	rep.InputRate = medianRate(ss.streams[0].Time)
	workRate := s.Resample.WorkRate
	if workRate == 0 {
		d := math.Max(1, math.Round(rep.InputRate/s.Resample.Rate))
		workRate = d * s.Resample.Rate
	}
	rep.WorkRate = workRate
	c.warnBackwards(src, ss, rep)
	al, err := signal.Align(ss.streams, signal.AlignOptions{Rate: workRate, MaxGap: s.Validate.MaxGap})
	if errors.Is(err, signal.ErrClockLength) {
		return nil, c.corruptTime(src, ss, workRate)
	}
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	K := len(al.Time)
	rep.Duration = al.Time[K-1] - al.Time[0]
	// Channels of one message or row share their gaps: count each
	// interval once.
	seenGap := map[[2]float64]bool{}
	for _, g := range al.Gaps {
		if key := [2]float64{g.From, g.To}; !seenGap[key] {
			seenGap[key] = true
			rep.Gaps++
			rep.GapSeconds += g.To - g.From
		}
	}
	return &working{al: al, ss: ss, rate: workRate, D: int(math.Round(workRate / s.Resample.Rate))}, nil
}

// locate describes where sample k of a channel lies in the source's file
// (Locator), or gives its index.
func locate(src Source, channel string, k int) string {
	if l, ok := src.(Locator); ok {
		return l.Locate(channel, k)
	}
	return fmt.Sprintf("sample %d of channel %q", k+1, channel)
}

// dataClocks returns, for every distinct time slice of the data streams
// (channels of one table or topic share theirs), the index of its first
// stream.
func dataClocks(ss *streamSet) []int {
	var out []int
	seen := map[*float64]bool{}
	for i := range ss.dataEnd {
		t := ss.streams[i].Time
		if len(t) == 0 || seen[&t[0]] {
			continue
		}
		seen[&t[0]] = true
		out = append(out, i)
	}
	return out
}

// streamChannel returns the channel a data stream was read from (the
// first component's for the orientation).
func (c *Converter) streamChannel(ss *streamSet, i int) string {
	if i == ss.orient {
		return c.plan.Scalars[c.plan.Orient[0]].Channel.Name
	}
	return ss.streams[i].Name
}

// warnBackwards adds a warning for every clock of the data streams on
// which time goes backwards: at how many samples, and where first.
// Alignment sorts the samples by time, as it always has.
func (c *Converter) warnBackwards(src Source, ss *streamSet, rep *FileReport) {
	for _, i := range dataClocks(ss) {
		t := ss.streams[i].Time
		n, first := 0, 0
		for k := 1; k < len(t); k++ {
			if t[k] < t[k-1] {
				if n == 0 {
					first = k
				}
				n++
			}
		}
		if n > 0 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("time goes backwards at %d of %d samples, first at %s: %.9g s after %.9g s; the samples were sorted by time",
				n, len(t), locate(src, c.streamChannel(ss, i), first), t[first], t[first-1]))
		}
	}
}

// corruptTime returns the ErrTime of a file whose streams span too long
// for a clock at the working rate (signal.ErrClockLength): it names the
// sample farthest from its clock's median time, the corrupt value.
func (c *Converter) corruptTime(src Source, ss *streamSet, rate float64) error {
	bi, bk, dev, med := -1, 0, -1.0, 0.0
	for _, i := range dataClocks(ss) {
		t := ss.streams[i].Time
		m := median(slices.Clone(t))
		for k, x := range t {
			if d := math.Abs(x - m); d > dev {
				bi, bk, dev, med = i, k, d, m
			}
		}
	}
	hint := fmt.Sprintf("check clock.unit (now %q)", c.spec.Clock.Unit)
	if _, ok := src.(*MessageSource); ok {
		hint = fmt.Sprintf("try the other clock.stamp (now %q)", c.spec.Clock.Stamp)
	}
	if bi < 0 {
		return fmt.Errorf("%w: the samples span too long for a clock at %g Hz (%w); %s", ErrTime, rate, signal.ErrClockLength, hint)
	}
	t := ss.streams[bi].Time[bk]
	return fmt.Errorf("%w: %s has t = %.6g s, %.3g s away from the file's median time %.6g s (at %g Hz that span takes more than %d samples: %w); fix or drop that value, or %s",
		ErrTime, locate(src, c.streamChannel(ss, bi), bk), t, dev, med, rate, signal.MaxClockLen, signal.ErrClockLength, hint)
}

// codeSamples codes every working sample: valid, or why not.
func (w *working) codeSamples() {
	al, ss := w.al, w.ss
	w.code = make([]uint8, len(al.Time))
	for k := range w.code {
		switch {
		case !al.Valid[k]:
			w.code[k] = codeGap
		case hasNaN(al, ss.dataEnd, k, ss.streams):
			w.code[k] = codeNaN
		case ss.quatFlag >= 0 && al.Values[ss.quatFlag][k] > 0:
			w.code[k] = codeQuat
		case anyFlag(al, ss.flags, k):
			w.code[k] = codeJump
		case anyFlag(al, ss.rangeFlags, k):
			w.code[k] = codeRange
		}
	}
}

// segment cuts the valid samples into segments, drops those too short to
// filter and low-passes the filtered channel groups over each.
func (c *Converter) segment(w *working) error {
	s := c.spec
	pad := 0
	if s.Filter.Kind == "butterworth" {
		sos, err := signal.Butter(s.Filter.Order, s.Filter.Cutoff, w.rate)
		if err != nil {
			return fmt.Errorf("convert: filter at the working rate %g Hz: %w", w.rate, err)
		}
		w.zp = signal.NewZeroPhase(sos)
		pad = w.zp.PadLen()
	}
	w.seg = make([]int, len(w.code))
	w.segs = segments(w.code)
	for i, sg := range w.segs {
		if sg[1]-sg[0] <= max(pad, 2) {
			for k := sg[0]; k < sg[1]; k++ {
				w.code[k] = codeShort
			}
			w.segs[i] = [2]int{}
		}
	}
	for k := range w.seg {
		w.seg[k] = -1
	}
	for i, sg := range w.segs {
		for k := sg[0]; k < sg[1]; k++ {
			w.seg[k] = i
		}
		if w.zp != nil && sg[1] > sg[0] {
			if err := c.filterSegment(w.zp, w.al, w.ss, sg); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapSamples maps every valid sample at the dataset rate (statemap):
// joint positions, base pose, momenta (filtered at the working rate when
// the filter acts on momenta), ports and energy; a cancelled ctx stops it
// within a few thousand samples.
func (c *Converter) mapSamples(ctx context.Context, fd *fileData, w *working) error {
	s := c.spec
	al, ss, D := w.al, w.ss, w.D
	K := len(al.Time)
	J := (K + D - 1) / D
	nj := len(s.State.Joints)
	nv := c.model.NV()
	_, ne := c.portDims()
	fd.t = make([]float64, J)
	fd.valid = make([]bool, J)
	fd.joints = make([]float64, J*nj)
	fd.pose = make([]mechanics.SE3, J)
	fd.p = make([]float64, J*nv)
	fd.ports = make([]float64, J*ne)
	// The mapping writes the measured ports; the port history
	// (convert.history) adds their recent past after the loop.
	hist, err := s.NewPortHistory()
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	measured, nm := fd.ports, ne
	if hist != nil {
		nm = hist.Measured()
		measured = make([]float64, J*nm)
	}
	fd.energy = make([]float64, J)
	fd.report.Samples = J
	sc := c.newSampleScratch()
	// The paper's quadruped preparation filters p itself: p = M(q)v at
	// every working sample of a segment, low-passed, then decimated.
	var pFilt [][]float64
	if w.zp != nil && s.Filter.Filters(FilterMomentum) {
		var err error
		if pFilt, err = c.filteredMomenta(w.zp, al, ss, w.segs, w.rate, sc); err != nil {
			return err
		}
	}
	for j := range J {
		if j%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		k := j * D
		fd.t[j] = al.Time[k] - al.Time[0]
		if w.code[k] != codeOK {
			fill(fd.p[j*nv:(j+1)*nv], math.NaN())
			continue
		}
		fd.valid[j] = true
		sg := w.segs[w.seg[k]]
		out := &sc.out
		out.Joints = fd.joints[j*nj : (j+1)*nj]
		out.P = fd.p[j*nv : (j+1)*nv]
		out.Ports = measured[j*nm : (j+1)*nm]
		if err := c.sample(al, ss, k, sg, 1/w.rate, sc); err != nil {
			return err
		}
		if pFilt != nil {
			copy(out.P, pFilt[w.seg[k]][(k-sg[0])*nv:(k-sg[0]+1)*nv])
		}
		fd.pose[j] = sc.in.Pose
		fd.energy[j] = out.Kinetic + c.mapper.Potential(sc.in.Pose, out.Joints)
	}
	if hist != nil {
		portHistory(hist, fd, w, measured)
	}
	return nil
}

// portHistory writes the model's ports of every valid sample into
// fd.ports from the measured ones: the measured values and the means of
// hist over the samples before it in its stretch of the log (the valid
// samples of its segment, at the dataset rate), which a gap restarts.
func portHistory(hist *statemap.PortHistory, fd *fileData, w *working, measured []float64) {
	nm, ne := hist.Measured(), hist.Width()
	for j, ok := range fd.valid {
		if !ok {
			continue
		}
		if j == 0 || !fd.valid[j-1] || w.seg[(j-1)*w.D] != w.seg[j*w.D] {
			hist.Reset()
		}
		meas := measured[j*nm : (j+1)*nm]
		hist.Ports(meas, fd.ports[j*ne:(j+1)*ne])
		hist.Push(meas)
	}
}

// cutWindows lists the candidate windows and the reason each is rejected
// (the first bad sample code, a momentum jump, an exclusion), counting
// them in the report.
func (c *Converter) cutWindows(fd *fileData, w *working, jumpStep []bool) {
	s := c.spec
	rep := &fd.report
	K, J, D := len(w.code), len(fd.t), w.D
	L, S := s.Window.Length, s.Window.Stride
	prefix := make([][]int, numCodes)
	for cd := range prefix {
		prefix[cd] = make([]int, K+1)
	}
	for k := range K {
		for cd := range prefix {
			prefix[cd][k+1] = prefix[cd][k]
		}
		prefix[w.code[k]][k+1]++
	}
	jp := make([]int, J)
	for j := 1; j < J; j++ {
		jp[j] = jp[j-1]
		if jumpStep[j-1] {
			jp[j]++
		}
	}
	rep.Windows.Rejected = map[string]int{}
	for st := 0; st+L <= J; st += S {
		win := windowRec{start: st}
		a, b := st*D, (st+L-1)*D+1
		for cd := codeGap; cd < numCodes; cd++ {
			if prefix[cd][b]-prefix[cd][a] > 0 {
				win.reason = codeReason(cd)
				break
			}
		}
		if win.reason == "" && jp[st+L-1]-jp[st] > 0 {
			win.reason = ReasonMomentumJump
		}
		if win.reason == "" {
			for i := range s.Validate.Exclude {
				if s.Validate.Exclude[i].excludes(fd.rel, fd.t[st], fd.t[st+L-1]) {
					win.reason = ReasonExcluded
					break
				}
			}
		}
		rep.Windows.Total++
		if win.reason == "" {
			rep.Windows.Kept++
		} else {
			rep.Windows.Rejected[win.reason]++
		}
		fd.windows = append(fd.windows, win)
	}
}

// sampleScratch holds the input and output of the per-sample mapping.
type sampleScratch struct {
	in  statemap.Input
	out statemap.Sample
}

func (c *Converter) newSampleScratch() *sampleScratch {
	sc := &sampleScratch{in: statemap.Input{Values: make([]float64, len(c.plan.Scalars)), JointVelocity: make([]float64, len(c.spec.State.Joints))}}
	sc.out = *c.mapper.NewSample()
	return sc
}

// sample maps working sample k of segment sg (statemap.Mapper.Map) into
// sc.out: the scalar inputs at k, the base pose, and the velocities the
// spec gives no channel for, differentiated within the segment.
func (c *Converter) sample(al *signal.Aligned, ss *streamSet, k int, sg [2]int, dt float64, sc *sampleScratch) error {
	in := &sc.in
	for i := range in.Values {
		in.Values[i] = c.value(al, ss, i, k)
	}
	for i, vi := range c.plan.JointVel {
		if vi < 0 {
			pi := c.plan.JointPos[i]
			in.JointVelocity[i] = derivative(func(k int) float64 { return c.value(al, ss, pi, k) }, k, sg, dt)
		}
	}
	in.Pose = mechanics.IdentitySE3()
	if c.model.Floating() {
		in.Pose = c.pose(al, ss, k)
		if len(c.plan.LinVel) != 3 {
			in.Twist = c.differentiatedTwist(al, ss, k, sg, dt)
		}
	}
	return c.mapper.Map(in, &sc.out)
}

// filteredMomenta returns, per segment (nil for dropped ones), p = M(q)v
// at every working sample, low-passed component by component.
func (c *Converter) filteredMomenta(zp *signal.ZeroPhase, al *signal.Aligned, ss *streamSet, segs [][2]int, workRate float64, sc *sampleScratch) ([][]float64, error) {
	nv := c.model.NV()
	out := make([][]float64, len(segs))
	for i, sg := range segs {
		n := sg[1] - sg[0]
		if n <= 0 {
			continue
		}
		pw := make([]float64, n*nv)
		for k := sg[0]; k < sg[1]; k++ {
			sc.out.P = pw[(k-sg[0])*nv : (k-sg[0]+1)*nv]
			if err := c.sample(al, ss, k, sg, 1/workRate, sc); err != nil {
				return nil, err
			}
		}
		buf := make([]float64, n)
		for r := range nv {
			for k := range n {
				buf[k] = pw[k*nv+r]
			}
			if _, err := zp.Apply(buf, buf); err != nil {
				return nil, fmt.Errorf("convert: filter momentum %d: %w", r, err)
			}
			for k := range n {
				pw[k*nv+r] = buf[k]
			}
		}
		out[i] = pw
	}
	return out, nil
}

// checkChannels reports every spec field whose channel the source lacks,
// listing the channels it has.
func (c *Converter) checkChannels(src Source) error {
	have := src.Channels()
	var missing []string
	for _, sc := range c.plan.Scalars {
		if sc.Channel.Const == nil && !slices.Contains(have, sc.Channel.Name) {
			missing = append(missing, fmt.Sprintf("%q (%s)", sc.Channel.Name, sc.Field))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: no channel %s; available: %s", ErrMissingChannel, strings.Join(missing, ", "), strings.Join(have, ", "))
}

// buildStreams converts the read series into streams for alignment and the
// raw-sample flags of validation.
func (c *Converter) buildStreams(byName map[string]Series, rep *FileReport) (*streamSet, error) {
	s := c.spec
	p := c.plan
	ss := &streamSet{ofScalar: make([]int, len(p.Scalars)), constant: make([]float64, len(p.Scalars)), orient: -1, quatFlag: -1}
	conv := func(i int) Series {
		sc := p.Scalars[i]
		se := byName[sc.Channel.Name]
		f, off := sc.Channel.Factor(), sc.Channel.Offset
		vals := make([]float64, len(se.Values))
		for k, x := range se.Values {
			vals[k] = x*f + off
		}
		return Series{Name: se.Name, Time: se.Time, Values: vals}
	}
	isOrient := make([]bool, len(p.Scalars))
	for _, i := range p.Orient {
		isOrient[i] = true
	}
	for i, sc := range p.Scalars {
		ss.ofScalar[i] = -1
		if sc.Channel.Const != nil {
			ss.constant[i] = *sc.Channel.Const
			continue
		}
		if isOrient[i] {
			continue
		}
		se := conv(i)
		mode := signal.Linear
		switch sc.Group {
		case FilterControl:
			mode = p.portMode
		case FilterContact:
			mode = p.contMode
		}
		ss.ofScalar[i] = len(ss.streams)
		ss.streams = append(ss.streams, signal.Stream{Name: sc.Channel.Name, Time: se.Time, Values: se.Values, Width: 1, Interp: mode})
	}
	if len(p.Orient) > 0 {
		quat, times, err := c.orientation(conv)
		if err != nil {
			return nil, err
		}
		ss.orient = len(ss.streams)
		ss.streams = append(ss.streams, signal.Stream{Name: "orientation", Time: times, Values: quat, Width: 4, Interp: signal.Slerp})
		if len(ss.streams) == 1 {
			return nil, fmt.Errorf("convert: the spec reads no channel besides the orientation")
		}
	}
	if len(ss.streams) == 0 {
		return nil, fmt.Errorf("convert: the spec reads no channel (all constant)")
	}
	ss.dataEnd = len(ss.streams)

	// Raw-sample validation flags.
	v := &s.Validate
	if ss.orient >= 0 {
		o := &ss.streams[ss.orient]
		flag := make([]float64, len(o.Time))
		raw := c.rawQuatNorms(conv)
		for k, n := range raw {
			e := math.Abs(n - 1)
			if finite(e) {
				rep.MaxQuatNormError = math.Max(rep.MaxQuatNormError, e)
			}
			if v.MaxQuatNormError > 0 && e > v.MaxQuatNormError {
				flag[k] = 1
				rep.QuatRejected++
			}
		}
		if rep.QuatRejected > 0 {
			ss.quatFlag = len(ss.streams)
			ss.streams = append(ss.streams, signal.Stream{Name: "quaternion_norm", Time: o.Time, Values: flag, Width: 1})
		}
		if v.MaxAngularSpeed > 0 {
			flag := make([]float64, len(o.Time))
			for k := 1; k < len(o.Time); k++ {
				dt := o.Time[k] - o.Time[k-1]
				a := quatAngle(o.Values[4*(k-1):4*k], o.Values[4*k:4*k+4])
				if dt > 0 && a/dt > v.MaxAngularSpeed {
					flag[k-1], flag[k] = 1, 1
					rep.Jumps++
				}
			}
			c.addFlag(ss, "angular_jump", o.Time, flag)
		}
	}
	if len(p.BasePos) == 3 && v.MaxSpeed > 0 && !slices.Contains(p.BasePos, -1) {
		xs := make([]Series, 3)
		for a, i := range p.BasePos {
			if ss.ofScalar[i] < 0 {
				xs = nil
				break
			}
			st := ss.streams[ss.ofScalar[i]]
			xs[a] = Series{Time: st.Time, Values: st.Values}
		}
		if xs != nil && sameTimes(xs[0].Time, xs[1].Time) && sameTimes(xs[0].Time, xs[2].Time) {
			t := xs[0].Time
			flag := make([]float64, len(t))
			for k := 1; k < len(t); k++ {
				dt := t[k] - t[k-1]
				var d2 float64
				for a := range 3 {
					d := xs[a].Values[k] - xs[a].Values[k-1]
					d2 += d * d
				}
				if dt > 0 && math.Sqrt(d2)/dt > v.MaxSpeed {
					flag[k-1], flag[k] = 1, 1
					rep.Jumps++
				}
			}
			c.addFlag(ss, "position_jump", t, flag)
		}
	}
	if v.MaxJointSpeed > 0 {
		for _, i := range p.JointPos {
			si := ss.ofScalar[i]
			if si < 0 {
				continue
			}
			st := ss.streams[si]
			flag := make([]float64, len(st.Time))
			for k := 1; k < len(st.Time); k++ {
				dt := st.Time[k] - st.Time[k-1]
				if dt > 0 && math.Abs(st.Values[k]-st.Values[k-1])/dt > v.MaxJointSpeed {
					flag[k-1], flag[k] = 1, 1
					rep.Jumps++
				}
			}
			c.addFlag(ss, st.Name+"_jump", st.Time, flag)
		}
	}
	return ss, nil
}

// addRangeFlags adds a flag stream per channel with out-of-range samples
// left unrepaired (checkBounds), on the channel's raw times, in the
// order of the spec's channels.
func addRangeFlags(ss *streamSet, byName map[string]Series, flags map[string][]float64) {
	if len(flags) == 0 {
		return
	}
	names := make([]string, 0, len(flags))
	for name := range flags {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ss.rangeFlags = append(ss.rangeFlags, len(ss.streams))
		ss.streams = append(ss.streams, signal.Stream{Name: name + "_out_of_range", Time: byName[name].Time, Values: flags[name], Width: 1})
	}
}

// addFlag adds a flag stream when any raw sample is flagged.
func (c *Converter) addFlag(ss *streamSet, name string, t, flag []float64) {
	if !slices.Contains(flag, 1) {
		return
	}
	ss.flags = append(ss.flags, len(ss.streams))
	ss.streams = append(ss.streams, signal.Stream{Name: name, Time: t, Values: flag, Width: 1})
}

// orientation returns the raw orientation as (w, x, y, z) rows, normalised
// later by slerp, and their times.
func (c *Converter) orientation(conv func(int) Series) ([]float64, []float64, error) {
	p := c.plan
	comps := make([]Series, len(p.Orient))
	for a, i := range p.Orient {
		if p.Scalars[i].Channel.Const != nil {
			return nil, nil, specError(p.Scalars[i].Field, "orientation channels cannot be constant")
		}
		comps[a] = conv(i)
		if !sameTimes(comps[a].Time, comps[0].Time) {
			return nil, nil, fmt.Errorf("convert: orientation channels %q and %q have different timestamps; they must come from one message or row", comps[0].Name, comps[a].Name)
		}
	}
	t := comps[0].Time
	q := make([]float64, 4*len(t))
	for k := range t {
		if len(comps) == 4 {
			for a := range 4 {
				q[4*k+a] = comps[a].Values[k]
			}
			continue
		}
		r := comps[0].Values[k]
		pi := comps[1].Values[k]
		y := comps[2].Values[k]
		if !finite(r) || !finite(pi) || !finite(y) {
			fill(q[4*k:4*k+4], math.NaN())
			continue
		}
		qq := mechanics.QuatFromRotation(mechanics.RPY(r, pi, y))
		q[4*k], q[4*k+1], q[4*k+2], q[4*k+3] = qq.W, qq.X, qq.Y, qq.Z
	}
	return q, t, nil
}

// rawQuatNorms returns the norms of the raw quaternions (1 for roll, pitch,
// yaw orientations).
func (c *Converter) rawQuatNorms(conv func(int) Series) []float64 {
	p := c.plan
	comps := make([]Series, len(p.Orient))
	for a, i := range p.Orient {
		comps[a] = conv(i)
	}
	out := make([]float64, len(comps[0].Time))
	for k := range out {
		if len(comps) != 4 {
			out[k] = 1
			continue
		}
		var n2 float64
		for a := range 4 {
			n2 += comps[a].Values[k] * comps[a].Values[k]
		}
		out[k] = math.Sqrt(n2)
	}
	return out
}

func sameTimes(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	return slices.Equal(a, b)
}

// quatAngle returns the rotation angle between two (w, x, y, z) rows.
func quatAngle(a, b []float64) float64 {
	qa, err1 := mechanics.Quat{W: a[0], X: a[1], Y: a[2], Z: a[3]}.Normalized()
	qb, err2 := mechanics.Quat{W: b[0], X: b[1], Y: b[2], Z: b[3]}.Normalized()
	if err1 != nil || err2 != nil {
		return 0
	}
	d := math.Abs(qa.W*qb.W + qa.X*qb.X + qa.Y*qb.Y + qa.Z*qb.Z)
	return 2 * math.Acos(math.Min(1, d))
}

func hasNaN(al *signal.Aligned, end, k int, streams []signal.Stream) bool {
	for i := range end {
		w := streams[i].Width
		for _, x := range al.Values[i][k*w : (k+1)*w] {
			if math.IsNaN(x) {
				return true
			}
		}
	}
	return false
}

func anyFlag(al *signal.Aligned, flags []int, k int) bool {
	for _, f := range flags {
		if al.Values[f][k] > 0 {
			return true
		}
	}
	return false
}

// segments returns the maximal runs [a, b) of codeOK samples.
func segments(code []uint8) [][2]int {
	var out [][2]int
	start := -1
	for k, c := range code {
		if c == codeOK && start < 0 {
			start = k
		}
		if c != codeOK && start >= 0 {
			out = append(out, [2]int{start, k})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(code)})
	}
	return out
}

// filterSegment low-passes every data stream over one segment; quaternions
// are made sign-continuous, filtered component-wise and renormalised.
func (c *Converter) filterSegment(zp *signal.ZeroPhase, al *signal.Aligned, ss *streamSet, sg [2]int) error {
	n := sg[1] - sg[0]
	buf := make([]float64, n)
	for i := range ss.dataEnd {
		st := ss.streams[i]
		if !c.spec.Filter.Filters(c.streamGroup(ss, i)) {
			continue
		}
		w := st.Width
		vals := al.Values[i]
		if i == ss.orient {
			for k := sg[0] + 1; k < sg[1]; k++ {
				a, b := vals[4*(k-1):4*k], vals[4*k:4*k+4]
				if a[0]*b[0]+a[1]*b[1]+a[2]*b[2]+a[3]*b[3] < 0 {
					for x := range 4 {
						b[x] = -b[x]
					}
				}
			}
		}
		for comp := range w {
			for k := range n {
				buf[k] = vals[(sg[0]+k)*w+comp]
			}
			if _, err := zp.Apply(buf, buf); err != nil {
				return fmt.Errorf("convert: filter %s: %w", st.Name, err)
			}
			for k := range n {
				vals[(sg[0]+k)*w+comp] = buf[k]
			}
		}
		if i == ss.orient {
			for k := sg[0]; k < sg[1]; k++ {
				q := vals[4*k : 4*k+4]
				nq := math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3])
				for x := range 4 {
					q[x] /= nq
				}
			}
		}
	}
	return nil
}

// streamGroup returns the filter group of a data stream.
func (c *Converter) streamGroup(ss *streamSet, stream int) string {
	if stream == ss.orient {
		return FilterConfiguration
	}
	for i, si := range ss.ofScalar {
		if si == stream {
			return c.plan.Scalars[i].Group
		}
	}
	return ""
}

// value returns scalar i at working sample k.
func (c *Converter) value(al *signal.Aligned, ss *streamSet, i, k int) float64 {
	if si := ss.ofScalar[i]; si >= 0 {
		return al.Values[si][k]
	}
	return ss.constant[i]
}

// pose returns the base pose at working sample k.
func (c *Converter) pose(al *signal.Aligned, ss *streamSet, k int) mechanics.SE3 {
	q := al.Values[ss.orient][4*k : 4*k+4]
	var P mechanics.Vec3
	for a, i := range c.plan.BasePos {
		P[a] = c.value(al, ss, i, k)
	}
	return mechanics.SE3{R: mechanics.Quat{W: q[0], X: q[1], Y: q[2], Z: q[3]}.Rotation(), P: P}
}

// differentiatedTwist returns the base's body twist (v, ω) at working
// sample k by differentiating the poses of the segment.
func (c *Converter) differentiatedTwist(al *signal.Aligned, ss *streamSet, k int, sg [2]int, dt float64) mechanics.Twist {
	lo, hi := max(k-1, sg[0]), min(k+1, sg[1]-1)
	if hi == lo {
		return mechanics.Twist{}
	}
	xi := mechanics.LogSE3(c.pose(al, ss, lo).Inverse().Mul(c.pose(al, ss, hi)))
	s := 1 / (float64(hi-lo) * dt)
	for a := range xi {
		xi[a] *= s
	}
	return xi
}

// derivative returns the central difference of f at k within the segment
// (one-sided at its ends).
func derivative(f func(int) float64, k int, sg [2]int, dt float64) float64 {
	lo, hi := max(k-1, sg[0]), min(k+1, sg[1]-1)
	if hi == lo {
		return 0
	}
	return (f(hi) - f(lo)) / (float64(hi-lo) * dt)
}

// portDims returns n_u and n_u + n_c of the model's ports (the port
// history's included).
func (c *Converter) portDims() (nu, ne int) {
	cn, kn := c.spec.PortNames()
	return len(cn), len(cn) + len(kn)
}

// momentumJumps flags the steps j → j+1 (both valid, one segment) whose
// momentum change exceeds the absolute or robust thresholds.
func (c *Converter) momentumJumps(fd *fileData, seg []int, D, nv int) []bool {
	J := len(fd.valid)
	out := make([]bool, max(J-1, 0))
	v := &c.spec.Validate
	if len(v.MaxMomentumStep) == 0 && v.MomentumJumpMAD == 0 {
		return out
	}
	ok := func(j int) bool {
		return fd.valid[j] && fd.valid[j+1] && seg[j*D] == seg[(j+1)*D]
	}
	var med, scale []float64
	if v.MomentumJumpMAD > 0 {
		med, scale = make([]float64, nv), make([]float64, nv)
		var d []float64
		for r := range nv {
			d = d[:0]
			for j := range J - 1 {
				if ok(j) {
					d = append(d, fd.p[(j+1)*nv+r]-fd.p[j*nv+r])
				}
			}
			if len(d) == 0 {
				continue
			}
			med[r] = median(d)
			for i := range d {
				d[i] = math.Abs(d[i] - med[r])
			}
			scale[r] = 1.4826 * median(d)
		}
	}
	for j := range J - 1 {
		if !ok(j) {
			continue
		}
		for r := range nv {
			d := fd.p[(j+1)*nv+r] - fd.p[j*nv+r]
			if n := len(v.MaxMomentumStep); n > 0 {
				lim := v.MaxMomentumStep[0]
				if n > 1 {
					lim = v.MaxMomentumStep[r]
				}
				if math.Abs(d) > lim {
					out[j] = true
				}
			}
			if scale != nil && scale[r] > 0 && math.Abs(d-med[r]) > v.MomentumJumpMAD*scale[r] {
				out[j] = true
			}
		}
	}
	return out
}

// median returns the median of x, reordering x.
func median(x []float64) float64 {
	sort.Float64s(x)
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}

// medianRate returns 1 / the median positive time step of t.
func medianRate(t []float64) float64 {
	var d []float64
	for i := 1; i < len(t); i++ {
		if s := t[i] - t[i-1]; s > 0 {
			d = append(d, s)
		}
	}
	if len(d) == 0 {
		return 0
	}
	return 1 / median(d)
}

func fill(v []float64, x float64) {
	for i := range v {
		v[i] = x
	}
}
