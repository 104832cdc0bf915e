package trainer

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// agree checks, before the first epoch of a run over several processes,
// that every process trains the same model (parameters, after a resume
// too) on the same data with the same settings, so that none of them can
// silently train another model: a process that differs is an error on
// every process, naming it.
func agree(comm Comm, l Learner, fp DataFingerprint, settings string) error {
	if comm == nil {
		return nil
	}
	var buf []byte
	for _, v := range l.Params() {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
	}
	what := []string{"training data", "model parameters", "training settings"}
	sums := [][32]byte{sha256.Sum256([]byte(fp.String() + fp.SHA256)), sha256.Sum256(buf), sha256.Sum256([]byte(settings + l.Name()))}
	// three 48-bit pieces of each hash, exact in float64
	const per = 3
	send := make([]float64, 0, per*len(sums))
	for _, s := range sums {
		for k := range per {
			send = append(send, float64(binary.LittleEndian.Uint64(append(s[6*k:6*k+6:6*k+6], 0, 0))))
		}
	}
	n := comm.Size()
	counts := make([]int, n)
	for r := range counts {
		counts[r] = len(send)
	}
	recv := make([]float64, n*len(send))
	if err := comm.Allgather(send, counts, recv); err != nil {
		return fmt.Errorf("trainer: comparing the processes' data, model and settings: %w", err)
	}
	var bad []string
	for r := 1; r < n; r++ {
		var diff []string
		for i, name := range what {
			for k := range per {
				if recv[r*len(send)+i*per+k] != recv[i*per+k] {
					diff = append(diff, name)
					break
				}
			}
		}
		if len(diff) > 0 {
			bad = append(bad, fmt.Sprintf("process %d has other %s", r, strings.Join(diff, " and ")))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("trainer: the %d processes of the run do not train the same model as process 0: %s", n, strings.Join(bad, "; "))
	}
	return nil
}

// stopped returns the cause that ends a run before its next batch: this
// process's context's error, or, over several processes, that of any of
// them as they sent it (every process stops at the same batch). err
// reports a failed exchange.
func stopped(ctx context.Context, comm Comm) (cause, err error) {
	if comm == nil {
		return ctx.Err(), nil
	}
	// the decision rests on the gathered flags alone: a signal that
	// arrives after this process sent its flag counts at the next check,
	// as on every other process
	own := ctx.Err()
	all, err := gatherFlags(comm, own != nil)
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	n := len(all)
	if own != nil {
		return own, nil
	}
	for r, f := range all {
		if f != 0 {
			return fmt.Errorf("process %d of %d was interrupted: %w", r, n, context.Canceled), nil
		}
	}
	return nil, nil
}

// agreeSaved tells every process whether the first one (the writer of
// checkpoints) saved the checkpoint of an interrupted run: ok is this
// process's own answer, and only the first's counts. Every process
// returns only once the first has finished saving.
func agreeSaved(comm Comm, ok bool) (bool, error) {
	all, err := gatherFlags(comm, ok)
	if err != nil {
		return false, fmt.Errorf("trainer: learning whether the checkpoint was saved: %w", err)
	}
	return all[0] == 1, nil
}

// gatherFlags gathers one flag from every process: all[r] is 1 where
// process r set it, else 0.
func gatherFlags(comm Comm, set bool) ([]float64, error) {
	flag := []float64{0}
	if set {
		flag[0] = 1
	}
	counts := make([]int, comm.Size())
	for r := range counts {
		counts[r] = 1
	}
	all := make([]float64, len(counts))
	if err := comm.Allgather(flag, counts, all); err != nil {
		return nil, err
	}
	return all, nil
}
