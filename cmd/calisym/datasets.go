package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/dataset"
)

// readDataset reads the dataset train and eval name by path: a dataset
// directory, loaded, or opened with its arrays left on disk when lazy
// (dataset.Open: a process that trains on part of it reads its samples
// as it needs them); or split SPLIT of a sharded conversion, named
// DIR/SPLIT where DIR holds the shards of `convert --shard i/N --out DIR`,
// as `convert --merge DIR --out OUT` would write it into OUT/SPLIT (the
// same bits: the shards are assembled in memory).
func readDataset(path string, lazy bool) (*dataset.Dataset, error) {
	if _, err := os.Stat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		if err != nil {
			return nil, fmt.Errorf("dataset %s: %w", path, err)
		}
		if shards, _ := filepath.Glob(filepath.Join(path, "*"+convert.PartialExt)); len(shards) > 0 {
			return nil, fmt.Errorf("dataset %s holds the shards of a conversion (%d *%s files): name one of its splits, %s/train say, as convert --merge would write it", path, len(shards), convert.PartialExt, path)
		}
		if lazy {
			return dataset.Open(path)
		}
		return dataset.Load(path)
	}
	dir, split := filepath.Dir(path), filepath.Base(path)
	shards, _ := filepath.Glob(filepath.Join(dir, "*"+convert.PartialExt))
	if len(shards) == 0 {
		return nil, fmt.Errorf("dataset %s: %w", path, fs.ErrNotExist)
	}
	parts, err := convert.LoadPartials(dir)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	res, err := convert.AssembleShards(parts)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	ds, ok := res.Splits[split]
	if !ok {
		var names []string
		for name := range res.Splits {
			names = append(names, filepath.Join(dir, name))
		}
		slices.Sort(names)
		return nil, fmt.Errorf("dataset %s: the %d shards in %s have no split %q: name one of %s", path, len(parts), dir, split, strings.Join(names, ", "))
	}
	return ds, nil
}
