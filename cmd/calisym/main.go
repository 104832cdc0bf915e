// Command calisym learns robot dynamics as exactly symplectic maps on a
// lifted phase space and predicts motion live.
//
//	calisym demo      simulate → train CaLiSym and an MLP → evaluate → report (the main job)
//	calisym inspect   describe a model file or a preset: layout, parameters, FLOPs, ε_J
//	calisym sim       simulate the controlled dissipative double pendulum
//	calisym train     train a model on a dataset
//	calisym eval      evaluate models by autoregressive rollout
//
// Run `calisym help COMMAND` for the flags of each.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/calisym/calisym/internal/mpi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first Ctrl-C cancels ctx, and commands wind down (train finishes
	// its batch and saves its checkpoint); a second one quits at once,
	// except in a process of an MPI job: there the launcher signals every
	// process, often twice (the terminal's SIGINT, then mpirun's SIGTERM),
	// and quitting at the second would lose the checkpoint the processes
	// are agreeing to save; the launcher's SIGKILL is the hard stop.
	if mpi.Launched() == 0 {
		context.AfterFunc(ctx, stop)
	}
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		if re := (*reportedError)(nil); !errors.As(err, &re) {
			fmt.Fprintln(os.Stderr, "calisym:", err)
		}
		os.Exit(1)
	}
}
