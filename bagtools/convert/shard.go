package convert

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/calisym/calisym/internal/atomicfile"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/statemap"
)

// ErrShard wraps every problem with shards: a bad --shard, a partial
// file that does not belong to the conversion, a missing or repeated
// shard.
var ErrShard = errors.New("convert: shard")

// Shard names part Index of Count of a conversion's inputs (0 ≤ Index <
// Count): of the sorted input files, those from Index·n/Count to
// (Index+1)·n/Count. A Slurm array of Count tasks converts a corpus, one
// shard each (Converter.RunShard), and Converter.Merge assembles the
// shards into the datasets an unsharded conversion writes, byte for byte.
type Shard struct{ Index, Count int }

// String writes the shard as ParseShard reads it: "i/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard reads "i/N" (0 ≤ i < N).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%w: %q: want INDEX/COUNT with 0 ≤ INDEX < COUNT, e.g. 3/8 (a Slurm array's $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)", ErrShard, s)
	}
	return Shard{i, n}, nil
}

// files returns the shard's part of the sorted inputs.
func (s Shard) files(all []string) []string {
	n := len(all)
	return all[s.Index*n/s.Count : (s.Index+1)*n/s.Count]
}

// FileName is the name of the shard's partial file in a directory.
func (s Shard) FileName() string {
	return fmt.Sprintf("shard-%d-of-%d%s", s.Index, s.Count, PartialExt)
}

// PartialExt ends the name of a shard's partial file.
const PartialExt = ".calisym-shard"

// workers returns the number of files converted at once.
func (c *Converter) workers(files int) int {
	w := c.opts.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return max(1, min(w, files))
}

// convertAll converts files on Options.Workers goroutines, each with a
// mapper of its own (a mapper has scratch), and returns them in input
// order, with the files left out under SkipBad; the error is the first
// file's, in input order, that failed without SkipBad.
func (c *Converter) convertAll(ctx context.Context, files []string) ([]*fileData, []SkippedFile, error) {
	nw := c.workers(len(files))
	convs := []*Converter{c}
	for range nw - 1 {
		mp, err := statemap.NewMapper(&c.spec.Spec, c.opts.DataRoot)
		if err != nil {
			return nil, nil, err
		}
		w := *c
		w.mapper, w.model, w.plan = mp, mp.Model(), newPlan(c.spec, mp.Plan())
		convs = append(convs, &w)
	}
	out := make([]*fileData, len(files))
	errs := make([]error, len(files))
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for _, w := range convs {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(files) {
					return
				}
				if errs[i] = ctx.Err(); errs[i] != nil {
					continue
				}
				out[i], errs[i] = w.convertFile(ctx, files[i], c.rel(files[i]))
			}
		})
	}
	wg.Wait()
	var data []*fileData
	var skipped []SkippedFile
	for i, err := range errs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		rel := c.rel(files[i])
		if err != nil {
			if !c.opts.SkipBad {
				return nil, nil, fmt.Errorf("convert: %s: %w", rel, err)
			}
			skipped = append(skipped, SkippedFile{Path: rel, Error: strings.TrimPrefix(err.Error(), "convert: ")})
			continue
		}
		data = append(data, out[i])
	}
	return data, skipped, nil
}

// Partial is one shard of a conversion: its files converted, before the
// split and the datasets, which need every file (Converter.Merge).
type Partial struct {
	Shard Shard
	// Spec is the conversion's spec (JSON, defaults filled in, inputs
	// left out) and Inputs every input of the conversion, sorted: the
	// shards of one conversion agree on both.
	Spec   string
	Inputs []string
	// Params is the params file (Options.Params).
	Params string
	// NV is the model's velocity dimension, so that the shards assemble
	// without the model's files (AssembleShards).
	NV      int
	Files   []PartialFile
	Skipped []SkippedFile
}

// PartialFile is one converted input file (the fields of fileData).
type PartialFile struct {
	Rel              string
	T                []float64
	Valid            []bool
	Joints           []float64
	Pose             []mechanics.SE3
	P, Ports, Energy []float64
	WindowStarts     []int
	WindowReasons    []string
	Report           FileReport
}

// specJSON is the conversion's spec without its inputs (the partials
// record those), as the shards and the merge compare it.
func (c *Converter) specJSON() (string, error) {
	s := *c.spec
	s.Inputs = nil
	b, err := json.Marshal(&s)
	if err != nil {
		return "", fmt.Errorf("convert: %w", err)
	}
	return string(b), nil
}

// RunShard converts the shard's files of the inputs (on Options.Workers
// goroutines) and returns them as a Partial, to Save and Merge. A shard
// may hold no file (more shards than inputs); a file that fails stops it,
// unless Options.SkipBad.
func (c *Converter) RunShard(ctx context.Context, sh Shard) (*Partial, error) {
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return nil, fmt.Errorf("%w: %s", ErrShard, sh)
	}
	all, err := c.Inputs()
	if err != nil {
		return nil, err
	}
	spec, err := c.specJSON()
	if err != nil {
		return nil, err
	}
	data, skipped, err := c.convertAll(ctx, sh.files(all))
	if err != nil {
		return nil, err
	}
	p := &Partial{Shard: sh, Spec: spec, Inputs: all, Params: c.opts.Params, NV: c.nv, Skipped: skipped}
	for _, fd := range data {
		pf := PartialFile{Rel: fd.rel, T: fd.t, Valid: fd.valid, Joints: fd.joints, Pose: fd.pose, P: fd.p, Ports: fd.ports,
			Energy: fd.energy, Report: fd.report}
		for _, w := range fd.windows {
			pf.WindowStarts = append(pf.WindowStarts, w.start)
			pf.WindowReasons = append(pf.WindowReasons, w.reason)
		}
		p.Files = append(p.Files, pf)
	}
	return p, nil
}

// Save writes the partial as dir/Shard.FileName() (gob; written under a
// temporary name and renamed).
func (p *Partial) Save(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("convert: %w", err)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(p); err != nil {
		return "", fmt.Errorf("convert: shard %s: %w", p.Shard, err)
	}
	path := filepath.Join(dir, p.Shard.FileName())
	if err := atomicfile.WriteFile(path, buf.Bytes()); err != nil {
		return "", fmt.Errorf("convert: %w", err)
	}
	return path, nil
}

// LoadPartials reads every partial file (*PartialExt) in dir, in shard
// order.
func LoadPartials(dir string) ([]*Partial, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*"+PartialExt))
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no shard files (*%s) in %s: convert with --shard INDEX/COUNT --out %s first", ErrShard, PartialExt, dir, dir)
	}
	var ps []*Partial
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("convert: %w", err)
		}
		p := new(Partial)
		if err := gob.NewDecoder(bytes.NewReader(b)).Decode(p); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrShard, path, err)
		}
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *Partial) int { return a.Shard.Index - b.Shard.Index })
	return ps, nil
}

// Merge assembles the shards of one conversion, every shard of it once,
// into the Result the unsharded conversion (Run) returns, and whose Save
// writes the same bytes. The shards must come from this converter's spec
// and inputs. A cancelled ctx stops it.
func (c *Converter) Merge(ctx context.Context, parts []*Partial) (*Result, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no shards to merge", ErrShard)
	}
	spec, err := c.specJSON()
	if err != nil {
		return nil, err
	}
	return c.merge(ctx, parts, spec)
}

// AssembleShards assembles every shard of one conversion into the Result
// that Converter.Merge returns (and convert --merge writes), from what the
// shards record: their spec, params file name and model dimension, so
// that neither the params file nor the model's files (URDF) are needed.
// Training reads a sharded conversion's splits so.
func AssembleShards(parts []*Partial) (*Result, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no shards to assemble", ErrShard)
	}
	p := parts[0]
	if p.NV <= 0 {
		return nil, fmt.Errorf("%w: shard %s does not record the model's dimension (written by an older calisym): assemble the shards with convert --merge", ErrShard, p.Shard)
	}
	spec := new(Spec)
	if err := json.Unmarshal([]byte(p.Spec), spec); err != nil {
		return nil, fmt.Errorf("%w: shard %s: its spec: %w", ErrShard, p.Shard, err)
	}
	c := &Converter{spec: spec, opts: Options{Params: p.Params}, nv: p.NV}
	for _, q := range parts {
		if q.NV != p.NV {
			return nil, fmt.Errorf("%w: shard %s has a model of %d velocities, shard %s of %d", ErrShard, q.Shard, q.NV, p.Shard, p.NV)
		}
	}
	return c.merge(context.Background(), parts, p.Spec)
}

// merge assembles shards converted with the spec (JSON, specJSON).
func (c *Converter) merge(ctx context.Context, parts []*Partial, spec string) (*Result, error) {
	n := parts[0].Shard.Count
	seen := make([]bool, n)
	var data []*fileData
	var skipped []SkippedFile
	slices.SortFunc(parts, func(a, b *Partial) int { return a.Shard.Index - b.Shard.Index })
	for _, p := range parts {
		switch {
		case p.Shard.Count != n:
			return nil, fmt.Errorf("%w: shard %s among shards of %d: the shards of two conversions", ErrShard, p.Shard, n)
		case p.Shard.Index < 0 || p.Shard.Index >= n || seen[p.Shard.Index]:
			return nil, fmt.Errorf("%w: shard %s given twice or out of range", ErrShard, p.Shard)
		case p.Spec != spec:
			return nil, fmt.Errorf("%w: shard %s was converted with other convert settings than --params %s gives (params %s)", ErrShard, p.Shard, c.opts.Params, p.Params)
		case !slices.Equal(p.Inputs, parts[0].Inputs):
			return nil, fmt.Errorf("%w: shard %s was cut from other inputs (%d files) than shard %s (%d)", ErrShard, p.Shard, len(p.Inputs), parts[0].Shard, len(parts[0].Inputs))
		}
		seen[p.Shard.Index] = true
		skipped = append(skipped, p.Skipped...)
		for _, pf := range p.Files {
			fd := &fileData{rel: pf.Rel, t: pf.T, valid: pf.Valid, joints: pf.Joints, pose: pf.Pose, p: pf.P, ports: pf.Ports,
				energy: pf.Energy, report: pf.Report}
			for i, s := range pf.WindowStarts {
				fd.windows = append(fd.windows, windowRec{start: s, reason: pf.WindowReasons[i]})
			}
			data = append(data, fd)
		}
	}
	var missing []string
	for i, ok := range seen {
		if !ok {
			missing = append(missing, Shard{i, n}.String())
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %d of %d shards missing (%s): convert them with --shard before merging", ErrShard, len(missing), n, strings.Join(missing, ", "))
	}
	if len(data) == 0 {
		var b strings.Builder
		writeSkipped(&b, skipped)
		return nil, fmt.Errorf("%w: all %d inputs failed:\n%s", ErrAllSkipped, len(skipped), strings.TrimRight(b.String(), "\n"))
	}
	return c.assemble(ctx, data, skipped)
}
