//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>

static int calisym_init(int *provided) {
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}
static int calisym_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int calisym_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
static int calisym_allgatherv(const double *send, int n, double *recv, const int *counts, const int *displs) {
	return MPI_Allgatherv(send, n, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
}
static int calisym_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
static int calisym_finalize(void) { return MPI_Finalize(); }
static int calisym_thread_serialized(void) { return MPI_THREAD_SERIALIZED; }
static int calisym_error_string(int code, char *buf, int *len) { return MPI_Error_string(code, buf, len); }
static int calisym_max_error_string(void) { return MPI_MAX_ERROR_STRING; }
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// Comm is MPI_COMM_WORLD after Init.
type Comm struct {
	mu         sync.Mutex
	rank, size int
	done       bool
	counts     []C.int
	displs     []C.int
}

// Init initialises MPI and returns MPI_COMM_WORLD. Call it once per
// process, and Finalize (or Abort) before the process exits.
func Init() (*Comm, error) {
	var provided C.int
	if rc := C.calisym_init(&provided); rc != C.MPI_SUCCESS {
		return nil, mpiError("MPI_Init_thread", rc)
	}
	if provided < C.calisym_thread_serialized() {
		return nil, fmt.Errorf("mpi: the MPI library offers thread level %d, calisym needs MPI_THREAD_SERIALIZED", int(provided))
	}
	var r, s C.int
	if rc := C.calisym_rank(&r); rc != C.MPI_SUCCESS {
		return nil, mpiError("MPI_Comm_rank", rc)
	}
	if rc := C.calisym_size(&s); rc != C.MPI_SUCCESS {
		return nil, mpiError("MPI_Comm_size", rc)
	}
	return &Comm{rank: int(r), size: int(s)}, nil
}

// Rank returns this process's rank in MPI_COMM_WORLD.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of processes of MPI_COMM_WORLD.
func (c *Comm) Size() int { return c.size }

// Allgather is MPI_Allgatherv over MPI_DOUBLE: recv receives every
// process's send in rank order; counts[i] is the length process i sends.
func (c *Comm) Allgather(send []float64, counts []int, recv []float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return errors.New("mpi: Allgather after Finalize")
	}
	if len(counts) != c.size || counts[c.rank] != len(send) {
		return fmt.Errorf("mpi: Allgather of %d values with counts %v on rank %d of %d", len(send), counts, c.rank, c.size)
	}
	c.counts, c.displs = c.counts[:0], c.displs[:0]
	total := 0
	for _, n := range counts {
		if n < 0 || total+n > math.MaxInt32 {
			return fmt.Errorf("mpi: Allgather counts %v outside MPI's int range", counts)
		}
		c.counts = append(c.counts, C.int(n))
		c.displs = append(c.displs, C.int(total))
		total += n
	}
	if len(recv) < total {
		return fmt.Errorf("mpi: Allgather of %d values into %d", total, len(recv))
	}
	var sp, rp *C.double
	if len(send) > 0 {
		sp = (*C.double)(unsafe.Pointer(&send[0]))
	}
	if total > 0 {
		rp = (*C.double)(unsafe.Pointer(&recv[0]))
	}
	// counts and displs are Go memory passed for the call's duration (no
	// Go pointers inside), which cgo allows.
	if rc := C.calisym_allgatherv(sp, C.int(len(send)), rp, &c.counts[0], &c.displs[0]); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Allgatherv", rc)
	}
	return nil
}

// Abort ends every process of the job with the exit code (MPI_Abort); it
// does not return.
func (c *Comm) Abort(code int) {
	C.calisym_abort(C.int(code))
	panic("mpi: MPI_Abort returned")
}

// Finalize ends MPI on this process (MPI_Finalize, collective).
func (c *Comm) Finalize() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil
	}
	c.done = true
	if rc := C.calisym_finalize(); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Finalize", rc)
	}
	return nil
}

func mpiError(call string, rc C.int) error {
	buf := make([]byte, int(C.calisym_max_error_string()))
	var n C.int
	if C.calisym_error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), &n) == C.MPI_SUCCESS && n > 0 {
		return fmt.Errorf("mpi: %s: %s (error %d)", call, string(buf[:n]), int(rc))
	}
	return fmt.Errorf("mpi: %s: error %d", call, int(rc))
}
