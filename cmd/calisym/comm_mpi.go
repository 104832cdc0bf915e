//go:build mpi

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/calisym/calisym/internal/mpi"
	"github.com/calisym/calisym/trainer"
)

// openComm joins the MPI job this process was launched in (mpirun, srun)
// and returns its communicator (nil when not launched by one), and finish,
// which ends the process's part of the job: MPI_Finalize after success; a
// message on stderr naming the process and MPI_Abort of the whole job
// after an error, so no process waits for one that failed; MPI_Finalize
// after an interruption, at which every process stopped together.
func openComm(stderr io.Writer) (trainer.Comm, func(error) error, error) {
	if mpi.Launched() == 0 {
		return nil, func(err error) error { return err }, nil
	}
	c, err := mpi.Init()
	if err != nil {
		return nil, nil, err
	}
	finish := func(err error) error {
		// an interrupted run stops every process at the same batch, and
		// they finish together (the first has saved the checkpoint)
		var ie *trainer.Interrupted
		if err != nil && !errors.As(err, &ie) {
			fmt.Fprintf(stderr, "calisym: process %d of %d: %v; aborting the MPI job\n", c.Rank(), c.Size(), err)
			c.Abort(1)
		}
		if ferr := c.Finalize(); ferr != nil {
			return errors.Join(err, ferr)
		}
		return err
	}
	return c, finish, nil
}
