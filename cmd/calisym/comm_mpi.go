//go:build mpi

package main

import (
	"fmt"
	"io"

	"github.com/calisym/calisym/internal/mpi"
	"github.com/calisym/calisym/trainer"
)

// openComm joins the MPI job this process was launched in (mpirun, srun)
// and returns its communicator (nil when not launched by one), and finish,
// which ends the process's part of the job: MPI_Finalize after success; a
// message on stderr naming the process and MPI_Abort of the whole job
// after an error, so no process waits for one that failed.
func openComm(stderr io.Writer) (trainer.Comm, func(error) error, error) {
	if mpi.Launched() == 0 {
		return nil, func(err error) error { return err }, nil
	}
	c, err := mpi.Init()
	if err != nil {
		return nil, nil, err
	}
	finish := func(err error) error {
		if err != nil {
			fmt.Fprintf(stderr, "calisym: process %d of %d: %v; aborting the MPI job\n", c.Rank(), c.Size(), err)
			c.Abort(1)
		}
		return c.Finalize()
	}
	return c, finish, nil
}
