//go:build !mpi

package main

import (
	"fmt"
	"io"

	"github.com/calisym/calisym/internal/mpi"
	"github.com/calisym/calisym/trainer"
)

// openComm refuses a launch of several processes (mpirun, srun) in a
// build without MPI, where each would train the whole model alone and
// write the same files: the error says how to build with MPI.
func openComm(io.Writer) (trainer.Comm, func(error) error, error) {
	if n := mpi.Launched(); n > 1 {
		return nil, nil, fmt.Errorf("launched as one of %d processes, but this calisym is built without MPI: build it with `go build -tags mpi ./cmd/calisym` (needs libopenmpi-dev), or run one process", n)
	}
	return nil, func(err error) error { return err }, nil
}
