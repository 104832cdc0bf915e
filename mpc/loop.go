package mpc

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Plant is the system a controller drives: one sample interval from x
// under the controls u.
type Plant interface {
	Step(x, u, next []float64) error
}

// Trace is a closed-loop run: the plant's states x_0 … x_N (N+1 rows),
// the controls u_0 … u_{N−1} applied, and per control step the solver's
// wall time, its CPU time and its iterations.
type Trace struct {
	X, U      [][]float64
	SolveTime []time.Duration
	// SolveCPU is the CPU time of the thread that solved (the solve runs
	// on one goroutine, locked to its thread for the run): unlike the wall
	// time, it leaves out the time other work on the machine took.
	SolveCPU   []time.Duration
	Iterations []int
}

// threadCPU returns the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// Run drives the plant from x0 for steps control steps: at each step the
// controller re-plans from the measured state (at most iters iterations,
// warm-started from the shifted previous plan) and the plan's first
// control is applied for one sample interval.
func Run(ctx context.Context, c *ILQR, plant Plant, x0 []float64, steps, iters int) (*Trace, error) {
	nx, ne := c.nx, c.ne
	if len(x0) != nx || steps < 1 || iters < 1 {
		return nil, fmt.Errorf("%w: closed loop from %d states for %d steps of %d iterations", ErrConfig, len(x0), steps, iters)
	}
	tr := &Trace{X: [][]float64{append([]float64(nil), x0...)}}
	runtime.LockOSThread() // so that the thread's CPU time is the solve's
	defer runtime.UnlockOSThread()
	x := append([]float64(nil), x0...)
	for k := range steps {
		if err := ctx.Err(); err != nil {
			return tr, err
		}
		u := make([]float64, ne)
		start, cpu := time.Now(), threadCPU()
		st, err := c.Solve(x, u, iters)
		tr.SolveTime = append(tr.SolveTime, time.Since(start))
		tr.SolveCPU = append(tr.SolveCPU, threadCPU()-cpu)
		if err != nil {
			return tr, err
		}
		next := make([]float64, nx)
		if err := plant.Step(x, u, next); err != nil {
			return tr, fmt.Errorf("mpc: plant step %d: %w", k, err)
		}
		c.Shift()
		tr.U = append(tr.U, u)
		tr.X = append(tr.X, next)
		tr.Iterations = append(tr.Iterations, st.Iterations)
		x = next
	}
	return tr, nil
}
