package convert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/atomicfile"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/statemap"
)

// ErrNoWindows reports a conversion in which every window was rejected.
var ErrNoWindows = errors.New("convert: no window passed validation")

// ErrAllSkipped reports a conversion with Options.SkipBad in which no
// input file converted.
var ErrAllSkipped = errors.New("convert: no input file converted")

// ErrOutput reports an output directory that holds datasets the
// conversion would leave mixed with its own (Result.Save).
var ErrOutput = errors.New("convert: output directory")

// Options configures a conversion.
type Options struct {
	// DataRoot resolves relative input patterns, parameter files and URDFs.
	DataRoot string
	// Open opens each input as a Source; nil means OpenSource: MCAP files
	// and ROS 1 bags as a MessageSource, CSV and parquet files as a
	// TableSource.
	Open Opener
	// Params names the params file, recorded in the datasets' provenance.
	Params string
	// Progress, when set and Open is nil, is called while a message log is
	// streamed with its path, the bytes read so far and its size (see
	// MessageLogOptions.Progress).
	Progress func(path string, done, total int64)
	// SkipBad leaves out an input file that fails to convert (unreadable,
	// corrupt, lacking a channel) instead of stopping, and lists it with
	// the reason in Report.Skipped. The conversion still fails, with
	// ErrAllSkipped, when no file converts.
	SkipBad bool
	// Workers is the number of files converted at once (0: GOMAXPROCS);
	// the result does not depend on it. Open and Progress are then called
	// from several goroutines.
	Workers int
}

// Result is a finished conversion: one dataset per split and the report.
type Result struct {
	// Splits maps split names ("id", "ood", …) to their datasets.
	Splits map[string]*dataset.Dataset
	// Report is the conversion report (also in every dataset's Meta.Report).
	Report *Report
}

// Save writes every split into dir/<split> and the report into
// dir/report.json, so that dir holds this conversion's splits only: the
// split folders an earlier conversion wrote into dir (a dataset whose
// meta.json carries a conversion report) that this one does not write are
// removed first, and returned. A dataset folder in dir that no
// conversion wrote (a simulated split, say), whether or not its name is
// one of this conversion's splits, is not touched: Save then refuses,
// before writing anything, with an error wrapping ErrOutput. The report goes last, through a temporary
// file, and a previous one is removed first: a Save that fails midway
// leaves no report.json beside the splits it rewrote (and each split's
// dataset is complete or refused by dataset.Load, see
// dataset.Dataset.Save). A cancelled ctx stops it before the next split
// and before the report.
func (r *Result) Save(ctx context.Context, dir string) (removed []string, err error) {
	stale, foreign, err := r.staleSplits(dir)
	if err != nil {
		return nil, err
	}
	if len(foreign) > 0 {
		return nil, fmt.Errorf("%w %s holds the dataset folder %s, which no conversion wrote (this one writes %s); move it away or choose another output directory",
			ErrOutput, dir, strings.Join(foreign, ", "), strings.Join(r.splitNames(), ", "))
	}
	report := filepath.Join(dir, "report.json")
	if err := atomicfile.Remove(report); err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	for _, name := range stale {
		path := filepath.Join(dir, name)
		for _, f := range []string{"x.npy", "e.npy", "meta.json"} { // dataset.Dataset.Save's files
			if err := os.Remove(filepath.Join(path, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return removed, fmt.Errorf("convert: remove the stale split %s: %w", path, err)
			}
		}
		// The folder goes too unless something else was put in it.
		_ = os.Remove(path)
		removed = append(removed, path)
	}
	for _, name := range r.splitNames() {
		if err := ctx.Err(); err != nil {
			return removed, fmt.Errorf("convert: interrupted before split %s was written (%s has no report.json): %w", name, dir, err)
		}
		if err := r.Splits[name].Save(filepath.Join(dir, name)); err != nil {
			return removed, fmt.Errorf("convert: split %s: %w", name, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return removed, fmt.Errorf("convert: interrupted before the report was written (%s has no report.json): %w", dir, err)
	}
	raw, err := json.MarshalIndent(r.Report, "", "  ")
	if err != nil {
		return removed, fmt.Errorf("convert: report: %w", err)
	}
	if err := atomicfile.WriteFile(report, append(raw, '\n')); err != nil {
		return removed, fmt.Errorf("convert: %w", err)
	}
	return removed, nil
}

// splitNames returns the names of the result's splits, sorted.
func (r *Result) splitNames() []string {
	names := make([]string, 0, len(r.Splits))
	for k := range r.Splits {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// staleSplits lists the dataset folders in dir (those with a meta.json)
// that no conversion wrote (foreign), whatever their name, and those an
// earlier conversion wrote that r does not write (stale).
func (r *Result) staleSplits(dir string) (stale, foreign []string, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("convert: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name(), "meta.json"))
		if errors.Is(err, os.ErrNotExist) {
			continue // not a dataset
		}
		var meta struct {
			Report json.RawMessage `json:"report"`
		}
		if err != nil || json.Unmarshal(raw, &meta) != nil || len(meta.Report) == 0 || string(meta.Report) == "null" {
			foreign = append(foreign, e.Name())
			continue
		}
		if r.Splits[e.Name()] == nil {
			stale = append(stale, e.Name())
		}
	}
	return stale, foreign, nil
}

// Converter converts logs according to a spec. It is not safe for
// concurrent use.
type Converter struct {
	spec *Spec
	opts Options
	// mapper is the per-sample mapping the live node shares.
	mapper *statemap.Mapper
	model  statemap.Model
	plan   *plan
	// nv is the model's velocity dimension (the datasets' n), which is all
	// assembling converted files needs of the model (AssembleShards).
	nv int
}

// NewConverter fills in the spec's defaults (Spec.Defaults), checks it and
// builds its mechanics model.
func NewConverter(spec *Spec, opts Options) (*Converter, error) {
	spec.Defaults()
	if err := spec.Check(); err != nil {
		return nil, err
	}
	mp, err := statemap.NewMapper(&spec.Spec, opts.DataRoot)
	if err != nil {
		return nil, err
	}
	c := &Converter{spec: spec, opts: opts, mapper: mp, model: mp.Model(), plan: newPlan(spec, mp.Plan()), nv: mp.Model().NV()}
	if err := c.checkBoundChannels(); err != nil {
		return nil, err
	}
	if c.opts.Open == nil {
		progress := c.opts.Progress
		c.opts.Open = func(path string, spec *Spec) (Source, error) {
			var p func(done, total int64)
			if progress != nil {
				p = func(done, total int64) { progress(path, done, total) }
			}
			return openSource(path, spec, p)
		}
	}
	return c, nil
}

// Model returns the converter's mechanics model.
func (c *Converter) Model() statemap.Model { return c.model }

// Convert converts the spec's inputs: NewConverter, then Run.
func Convert(ctx context.Context, spec *Spec, opts Options) (*Result, error) {
	c, err := NewConverter(spec, opts)
	if err != nil {
		return nil, err
	}
	return c.Run(ctx)
}

// Inputs expands the spec's input patterns (relative to the data root) to
// the sorted list of files. No pattern, or one that matches nothing, is an
// error wrapping ErrSpec.
func (c *Converter) Inputs() ([]string, error) {
	if len(c.spec.Inputs) == 0 {
		return nil, specError("inputs", "no input files: give the logs on the command line (calisym convert … LOG…) or list glob patterns under convert.inputs")
	}
	var out []string
	for i, pat := range c.spec.Inputs {
		m, err := filepath.Glob(statemap.Resolve(c.opts.DataRoot, pat))
		if err != nil {
			return nil, specError(fmt.Sprintf("inputs[%d]", i), "bad pattern %q: %v", pat, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%w: %s.inputs[%d]: %q matches no file under %q", ErrSpec, SpecKey, i, pat, c.opts.DataRoot)
		}
		out = append(out, m...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Run converts every input file, assigns the kept windows to splits and
// assembles one dataset per split. A file that fails stops the
// conversion, unless Options.SkipBad leaves it out.
func (c *Converter) Run(ctx context.Context) (*Result, error) {
	files, err := c.Inputs()
	if err != nil {
		return nil, err
	}
	data, skipped, err := c.convertAll(ctx, files)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		var b strings.Builder
		writeSkipped(&b, skipped)
		return nil, fmt.Errorf("%w: all %d inputs failed:\n%s", ErrAllSkipped, len(skipped), strings.TrimRight(b.String(), "\n"))
	}
	return c.assemble(ctx, data, skipped)
}

// rel returns path relative to the data root when it lies under it.
func (c *Converter) rel(path string) string {
	if c.opts.DataRoot != "" {
		if r, err := filepath.Rel(c.opts.DataRoot, path); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return path
}

// convertFile converts one input file with the configured opener; rel
// names it in the report.
func (c *Converter) convertFile(ctx context.Context, path, rel string) (*fileData, error) {
	src, err := c.opts.Open(path, c.spec)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return c.process(ctx, src, rel)
}

// ConvertSource converts one already opened source into a Result of its
// own (splits by file use name as the file's path).
func (c *Converter) ConvertSource(src Source, name string) (*Result, error) {
	ctx := context.Background()
	fd, err := c.process(ctx, src, name)
	if err != nil {
		return nil, fmt.Errorf("convert: %s: %w", name, err)
	}
	return c.assemble(ctx, []*fileData{fd}, nil)
}

// assemble assigns splits and builds the datasets and the report; a
// cancelled ctx stops it between splits.
func (c *Converter) assemble(ctx context.Context, data []*fileData, skipped []SkippedFile) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := c.spec
	rep := &Report{Robot: s.Robot, Rate: s.Resample.Rate, WindowLen: s.Window.Length, Stride: s.Window.Stride, Splits: map[string]SplitReport{}, Skipped: skipped}
	for _, fd := range data {
		rep.Files = append(rep.Files, fd.report)
		rep.Windows.add(fd.report.Windows)
	}
	if rep.Windows.Kept == 0 {
		var b strings.Builder
		writeReasons(&b, rep.Windows.Rejected)
		if len(skipped) > 0 {
			fmt.Fprintf(&b, "; %d more files skipped:\n", len(skipped))
			writeSkipped(&b, skipped)
		}
		return nil, fmt.Errorf("%w: %d candidate windows in %d files%s", ErrNoWindows, rep.Windows.Total, len(data), strings.TrimRight(b.String(), "\n"))
	}
	if err := c.assignSplits(data); err != nil {
		return nil, err
	}
	splitNames := map[string]bool{}
	for _, fd := range data {
		for _, w := range fd.windows {
			if w.reason == "" {
				splitNames[w.split] = true
			}
		}
	}
	res := &Result{Splits: map[string]*dataset.Dataset{}, Report: rep}
	for name := range splitNames {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, sr := c.buildSplit(name, data)
		res.Splits[name] = d
		rep.Splits[name] = sr
	}
	m, err := rep.asMap()
	if err != nil {
		return nil, err
	}
	for _, d := range res.Splits {
		d.Report = m
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("convert: split %s: %w", d.Split, err)
		}
	}
	return res, nil
}

// assignSplits sets the split of every kept window.
func (c *Converter) assignSplits(data []*fileData) error {
	sp := &c.spec.Split
	L := c.spec.Window.Length
	var energies []float64
	if sp.By == SplitByEnergy {
		for _, fd := range data {
			for _, w := range fd.windows {
				if w.reason == "" {
					energies = append(energies, fd.energy[w.start])
				}
			}
		}
		slices.Sort(energies)
	}
	for _, fd := range data {
		for i := range fd.windows {
			w := &fd.windows[i]
			if w.reason != "" {
				continue
			}
			w.split = sp.Default
			for _, r := range sp.Rules {
				if c.ruleMatches(r, fd, w.start, L, energies) {
					w.split = r.Split
					break
				}
			}
		}
	}
	return nil
}

func (c *Converter) ruleMatches(r SplitRule, fd *fileData, start, L int, energies []float64) bool {
	switch c.spec.Split.By {
	case SplitByFile:
		return matchFiles(r.Files, fd.rel)
	case SplitByTime:
		t := fd.t[start]
		return t >= r.Time[0] && t < r.Time[1]
	case SplitByEnergy:
		e := fd.energy[start]
		if len(r.Energy) > 0 {
			return e >= r.Energy[0] && (len(r.Energy) == 1 || e < r.Energy[1])
		}
		f := float64(sort.SearchFloat64s(energies, e)) / float64(len(energies))
		return f >= r.Quantile[0] && (f < r.Quantile[1] || r.Quantile[1] == 1)
	}
	return false
}

// buildSplit assembles the dataset of one split: consecutive kept windows
// of a file become one episode when q is absolute (joints), every window
// its own episode when q is relative to the window's first pose.
func (c *Converter) buildSplit(name string, data []*fileData) (*dataset.Dataset, SplitReport) {
	s := c.spec
	L, S := s.Window.Length, s.Window.Stride
	nv := c.nv
	nj := len(s.State.Joints)
	nu, ne := c.portDims()
	coords := s.Coordinates()
	ctrl, cont := s.PortNames()
	d := &dataset.Dataset{Meta: dataset.Meta{
		N: nv, NU: nu, NC: ne - nu, Dt: 1 / s.Resample.Rate,
		Coordinates: coords, Ports: append(slices.Clone(ctrl), cont...),
		WindowLen: L, Stride: S, Split: name,
		Source: map[string]string{
			"robot": s.Robot, "params": c.opts.Params, "model": s.Model.Kind, "state": s.State.Kind,
			"control": s.Control.Kind, "filter": filterDescription(s),
			statemap.PortMapKey: s.Spec.PortMap(),
		},
	}}
	cols := append(append(slices.Clone(coords), s.Momenta()...), d.Ports...)
	st := make([]*stats, len(cols))
	for i, n := range cols {
		st[i] = newStats(n)
	}
	sr := SplitReport{EnergyRange: [2]float64{math.Inf(1), math.Inf(-1)}}
	relative := s.State.Kind != statemap.StateJoints
	perWindow := relative && s.Window.Storage == StorageWindow
	d.Source["q_origin"] = "window_start"
	if relative && !perWindow {
		d.Source["q_origin"] = "episode_start"
	}
	var inputs []string
	for fi, fd := range data {
		var runs [][2]int // [first start, last start] of merged windows
		for _, w := range fd.windows {
			if w.reason != "" || w.split != name {
				continue
			}
			sr.Windows++
			e := fd.energy[w.start]
			sr.EnergyRange[0] = math.Min(sr.EnergyRange[0], e)
			sr.EnergyRange[1] = math.Max(sr.EnergyRange[1], e)
			if n := len(runs); n > 0 && !perWindow && runs[n-1][1]+S == w.start {
				runs[n-1][1] = w.start
				continue
			}
			runs = append(runs, [2]int{w.start, w.start})
		}
		if len(runs) > 0 {
			inputs = append(inputs, fd.rel)
		}
		for _, r := range runs {
			a, b := r[0], r[1]+L
			ep := dataset.Episode{
				Name: fmt.Sprintf("%s@%d", fd.rel, a),
				Len:  b - a,
				Tags: map[string]float64{"file": float64(fi), "t0": fd.t[a], "energy0": fd.energy[a], "windows": float64((r[1]-r[0])/S + 1)},
				X:    make([]float64, 0, (b-a)*2*nv),
				E:    make([]float64, 0, (b-a)*ne),
			}
			T0 := fd.pose[a]
			for j := a; j < b; j++ {
				start := len(ep.X)
				if relative {
					q := s.BaseCoordinates(T0, fd.pose[j])
					ep.X = append(ep.X, q[:]...)
				}
				ep.X = append(ep.X, fd.joints[j*nj:(j+1)*nj]...)
				ep.X = append(ep.X, fd.p[j*nv:(j+1)*nv]...)
				ep.E = append(ep.E, fd.ports[j*ne:(j+1)*ne]...)
				for i, x := range ep.X[start:] {
					st[i].add(x)
				}
				for i, x := range fd.ports[j*ne : (j+1)*ne] {
					st[2*nv+i].add(x)
				}
			}
			d.Episodes = append(d.Episodes, ep)
			sr.Episodes++
			sr.Samples += ep.Len
		}
	}
	d.Source["inputs"] = strings.Join(inputs, ",")
	for _, x := range st {
		sr.Channels = append(sr.Channels, x.result())
	}
	return d, sr
}

func filterDescription(s *Spec) string {
	if s.Filter.Kind != "butterworth" {
		return "none"
	}
	return fmt.Sprintf("zero-phase Butterworth order %d, %g Hz", s.Filter.Order, s.Filter.Cutoff)
}

// RebaseSE3 re-expresses q, the SE(3) logarithm (ρ, φ) of a pose relative
// to some origin, relative to the pose q0 (given the same way) instead:
// log(exp(q0)⁻¹·exp(q)). It turns StorageEpisode configurations into the
// window-relative ones of StorageWindow exactly.
func RebaseSE3(q0, q [6]float64) [6]float64 {
	return mechanics.LogSE3(mechanics.ExpSE3(q0).Inverse().Mul(mechanics.ExpSE3(q)))
}

// RebaseGravity re-expresses gravity-aware coordinates (x, y, z, roll,
// pitch, yaw) given relative to some origin relative to the pose q0 (given
// the same way) instead, as statemap.GravityCoordinates would have computed them
// with q0's pose as the window's first pose.
func RebaseGravity(q0, q [6]float64) [6]float64 {
	pose := func(c [6]float64) mechanics.SE3 {
		return mechanics.SE3{R: mechanics.RPY(c[3], c[4], c[5]), P: mechanics.Vec3{c[0], c[1], c[2]}}
	}
	return statemap.GravityCoordinates(pose(q0), pose(q))
}
