// Package mpi is the small binding to MPI (Open MPI, through cgo) that
// data-parallel training over several processes needs: initialise, rank
// and size of MPI_COMM_WORLD, Allgatherv of float64 values, abort and
// finalise. It is built only with the build tag mpi (go build -tags mpi,
// which needs libopenmpi-dev and pkg-config), so the default build needs
// no MPI; without the tag the package holds only Launched.
//
// A Comm implements trainer.Comm. MPI is initialised with
// MPI_THREAD_SERIALIZED and every call holds a mutex, so any goroutine
// may call it; errors are returned (MPI_ERRORS_RETURN), not fatal.
package mpi

import (
	"os"
	"strconv"
)

// Launched reports how many processes the launcher started, read from the
// environment that mpirun (Open MPI: OMPI_COMM_WORLD_SIZE), a PMI launcher
// (MPICH's hydra, srun --mpi=pmi2: PMI_SIZE) or Slurm's srun
// (SLURM_STEP_NUM_TASKS, which sbatch's script itself does not have) set:
// 0 when the process was not started by one of them.
func Launched() int {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"} {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
			return v
		}
	}
	return 0
}
