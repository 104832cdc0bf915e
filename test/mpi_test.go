package test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer"
)

// mpiTools returns mpirun, or skips the test where Open MPI is absent
// (failing it when CI=true: scripts/test.sh installs Open MPI).
func mpiTools(t *testing.T) string {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err == nil {
		err = exec.Command("pkg-config", "--exists", "ompi-c").Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but Open MPI is missing (mpirun, pkg-config ompi-c: %v); scripts/test.sh installs openmpi-bin and libopenmpi-dev", err)
		}
		t.Skipf("Open MPI not installed (mpirun, pkg-config ompi-c: %v): apt-get install openmpi-bin libopenmpi-dev", err)
	}
	return mpirun
}

// mpiRun runs bin under mpirun with n processes (n = 0: bin alone).
func mpiRun(t *testing.T, mpirun string, n int, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	if n == 0 {
		cmd = exec.CommandContext(ctx, bin, args...)
	} else {
		cmd = exec.CommandContext(ctx, mpirun, append([]string{"--allow-run-as-root", "--oversubscribe", "-np", fmt.Sprint(n), bin}, args...)...)
	}
	// shared-memory transport without cross-memory attach, which
	// containers often forbid
	cmd.Env = append(os.Environ(), "OMPI_MCA_btl_vader_single_copy_mechanism=none")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// runResult is what a training run leaves: the model's parameters, the
// checkpoint's parameters and history (without wall times), and the
// report of `calisym eval --json` on the OOD set.
type runResult struct {
	model, theta []float64
	hist         []trainer.EpochStats
	report       map[string]any
}

func readRun(t *testing.T, bin, dir, name, ood string) runResult {
	t.Helper()
	var r runResult
	m, err := predictor.Load(filepath.Join(dir, name+".safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	r.model = predictor.NewTrainable(m).Params()
	ck, err := trainer.LoadCheckpoint(filepath.Join(dir, name+".ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	r.theta = ck.Theta
	for _, e := range ck.History.Epochs {
		e.Seconds = 0
		r.hist = append(r.hist, e)
	}
	out, err := run(t, bin, "eval", "--model", filepath.Join(dir, name+".safetensors"), "--data", ood, "--horizon", "20", "--horizons", "5,20", "--json")
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(out), &r.report); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, out)
	}
	delete(r.report, "model")
	return r
}

// differ names the first difference of two runs, bit for bit ("" if none).
func differ(a, b runResult) string {
	for _, c := range []struct {
		what string
		x, y []float64
	}{{"model", a.model, b.model}, {"checkpoint", a.theta, b.theta}} {
		if len(c.x) != len(c.y) {
			return fmt.Sprintf("%s has %d parameters against %d", c.what, len(c.x), len(c.y))
		}
		for i := range c.x {
			if math.Float64bits(c.x[i]) != math.Float64bits(c.y[i]) {
				return fmt.Sprintf("%s θ[%d] = %v against %v", c.what, i, c.x[i], c.y[i])
			}
		}
	}
	if !reflect.DeepEqual(a.hist, b.hist) {
		return fmt.Sprintf("history %+v against %+v", a.hist, b.hist)
	}
	if !reflect.DeepEqual(a.report, b.report) {
		return fmt.Sprintf("eval report %v against %v", a.report, b.report)
	}
	return ""
}

// mpiBuild returns mpirun, a scratch directory and calisym built there
// with -tags mpi, with the smoke pendulum's datasets in dir/data.
func mpiBuild(t *testing.T) (mpirun, dir, bin string) {
	t.Helper()
	mpirun = mpiTools(t)
	dir = t.TempDir()
	bin = filepath.Join(dir, "calisym-mpi")
	if out, err := exec.Command("go", "build", "-tags", "mpi", "-o", bin, "../cmd/calisym").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi: %v\n%s", err, out)
	}
	if out, err := run(t, bin, "sim", "--preset", "smoke", "--out", filepath.Join(dir, "data")); err != nil {
		t.Fatalf("sim: %v\n%s", err, out)
	}
	return mpirun, dir, bin
}

// TestMPITraining builds calisym with -tags mpi and trains one model with
// 1, 2, 3 and 7 goroutines and as 1, 2 and 3 MPI processes (mpirun on this
// machine): model, checkpoint, history and evaluation report must be the
// same bits. A run checkpointed by 2 processes resumes with 3 and ends
// where the uninterrupted run did; a process killed mid-run fails the job
// (non-zero exit, mpirun names the rank) and no model is written; the
// default build refuses to run as several processes.
func TestMPITraining(t *testing.T) {
	mpirun, dir, bin := mpiBuild(t)
	train, val, ood := filepath.Join(dir, "data", "train"), filepath.Join(dir, "data", "id"), filepath.Join(dir, "data", "ood")
	// batch 600: 5 shards of 120 rows, about 2,400 transitions in 4
	// batches; the constant schedule lets a run resumed with more epochs
	// match the longer run
	args := func(name string, epochs int) []string {
		return []string{"train", "--data", train, "--val", val, "--model", "gr", "--arch", "quadrotor", "--layers", "2", "--width", "4",
			"--epochs", fmt.Sprint(epochs), "--batch", "600", "--optimizer", "muon", "--schedule", "constant", "--quiet",
			"--out", filepath.Join(dir, name+".safetensors"), "--checkpoint", filepath.Join(dir, name+".ckpt"), "--checkpoint-every", "1"}
	}
	const epochs = 3
	if out, err := mpiRun(t, mpirun, 0, bin, append(args("ref", epochs), "--workers", "1")...); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	ref := readRun(t, bin, dir, "ref", ood)
	for _, c := range []struct{ procs, workers int }{{0, 2}, {0, 3}, {0, 7}, {1, 1}, {2, 1}, {2, 2}, {3, 1}, {3, 2}} {
		name := fmt.Sprintf("p%d-w%d", c.procs, c.workers)
		if out, err := mpiRun(t, mpirun, c.procs, bin, append(args(name, epochs), "--workers", fmt.Sprint(c.workers))...); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		if d := differ(ref, readRun(t, bin, dir, name, ood)); d != "" {
			t.Errorf("%d processes × %d goroutines against 1 goroutine: %s", max(c.procs, 1), c.workers, d)
		}
	}
	// K-step epochs (from the second; each process holds the samples of
	// its shards' sequences) give the same bits on 1, 2 and 3 processes
	kstep := func(name string) []string {
		return append(args(name, epochs), "--rollout-steps", "3", "--rollout-from", "1", "--rollout-batch", "300")
	}
	if out, err := mpiRun(t, mpirun, 0, bin, append(kstep("kref"), "--workers", "1")...); err != nil {
		t.Fatalf("K-step train: %v\n%s", err, out)
	}
	kref := readRun(t, bin, dir, "kref", ood)
	if differ(ref, kref) == "" {
		t.Error("K-step training gave the one-step run's bits")
	}
	for _, procs := range []int{2, 3} {
		name := fmt.Sprintf("k-p%d", procs)
		if out, err := mpiRun(t, mpirun, procs, bin, append(kstep(name), "--workers", "1")...); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		if d := differ(kref, readRun(t, bin, dir, name, ood)); d != "" {
			t.Errorf("K-step, %d processes against 1: %s", procs, d)
		}
	}
	// checkpointed by 2 processes after 2 epochs, resumed by 3
	if out, err := mpiRun(t, mpirun, 2, bin, append(args("resume", epochs-1), "--workers", "1")...); err != nil {
		t.Fatalf("resume, first part: %v\n%s", err, out)
	}
	if out, err := mpiRun(t, mpirun, 3, bin, append(args("resume", epochs), "--workers", "2", "--resume")...); err != nil {
		t.Fatalf("resume with 3 processes: %v\n%s", err, out)
	}
	if d := differ(ref, readRun(t, bin, dir, "resume", ood)); d != "" {
		t.Errorf("2 processes, resumed by 3, against one uninterrupted: %s", d)
	}

	// A process killed mid-run: the job fails and names it, no model.
	die := filepath.Join(dir, "die.safetensors")
	long := []string{"train", "--data", train, "--model", "gr", "--arch", "quadrotor", "--layers", "2", "--width", "4",
		"--epochs", "1000000", "--batch", "100", "--progress", "none", "--out", die}
	script := `if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 2; kill -9 $$) & fi; exec "$0" "$@"`
	out, err := mpiRun(t, mpirun, 3, "sh", append([]string{"-c", script, bin}, long...)...)
	if err == nil || !strings.Contains(out, "rank 1") || !strings.Contains(out, "signal 9") {
		t.Errorf("a process killed: exit %v, want a failure that names rank 1 and signal 9:\n%s", err, out)
	}
	if _, err := os.Stat(die); err == nil {
		t.Errorf("the job whose process died wrote the model %s", die)
	}

	// The default build under mpirun: every process refuses.
	plain := buildCLI(t)
	out, err = mpiRun(t, mpirun, 2, plain, args("plain", 1)...)
	if err == nil || !strings.Contains(out, "built without MPI") {
		t.Errorf("the default build as 2 processes: exit %v, want a refusal:\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "plain.safetensors")); err == nil {
		t.Error("the default build as 2 processes wrote a model")
	}
}

// TestMPIBinding runs internal/mpi's own test (Allgatherv with unequal
// counts, a wrong count refused) under mpirun with 3 processes.
func TestMPIBinding(t *testing.T) {
	mpirun := mpiTools(t)
	bin := filepath.Join(t.TempDir(), "mpi.test")
	if out, err := exec.Command("go", "test", "-c", "-tags", "mpi", "-o", bin, "../internal/mpi").CombinedOutput(); err != nil {
		t.Fatalf("go test -c -tags mpi: %v\n%s", err, out)
	}
	out, err := mpiRun(t, mpirun, 3, bin, "-test.run", "TestAllgather", "-test.v")
	if err != nil || strings.Count(out, "--- PASS: TestAllgather") != 3 {
		t.Errorf("internal/mpi's TestAllgather on 3 processes: %v\n%s", err, out)
	}
}

// TestMPIInterrupt interrupts training under `mpirun -np 2` as Ctrl-C
// does (SIGINT to mpirun, which sends SIGTERM to the processes and
// SIGKILL a second later), once plain and once with --select-horizon:
// the processes agree to stop at the same batch, the first saves the
// checkpoint there, whatever --checkpoint-every, and says how to resume;
// the resumed run ends with the bits of an uninterrupted one (model,
// checkpoint, history, evaluation). Before, the epoch under way was lost
// to mpirun's SIGKILL (with no checkpoint at all before the first of
// --checkpoint-every), and the selection failed on the cancelled context.
func TestMPIInterrupt(t *testing.T) {
	mpirun, dir, bin := mpiBuild(t)
	train, val, ood := filepath.Join(dir, "data", "train"), filepath.Join(dir, "data", "id"), filepath.Join(dir, "data", "ood")
	const every = 10 // epochs between checkpoints
	const epochs = 3000
	for _, c := range []struct {
		name  string
		extra []string
	}{
		{"plain", nil},
		{"select", []string{"--select-horizon", "20", "--select-from", "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// batch 100: 24 batches an epoch of a few ms; 3000 epochs (about
			// 5 s on an idle machine: 600 could end before mpirun forwarded
			// the interrupt), so that the run is under way when interrupted
			args := func(name string) []string {
				return append([]string{"train", "--data", train, "--val", val, "--model", "gr", "--arch", "quadrotor", "--layers", "2", "--width", "4",
					"--epochs", fmt.Sprint(epochs), "--batch", "100", "--optimizer", "muon", "--schedule", "constant", "--quiet", "--workers", "1",
					"--out", filepath.Join(dir, name+".safetensors"), "--checkpoint", filepath.Join(dir, name+".ckpt"), "--checkpoint-every", fmt.Sprint(every)}, c.extra...)
			}
			ref, cut := c.name+"-ref", c.name+"-cut"
			if out, err := mpiRun(t, mpirun, 0, bin, args(ref)...); err != nil {
				t.Fatalf("uninterrupted: %v\n%s", err, out)
			}
			// the interrupted run: SIGINT to mpirun a little after the
			// first checkpoint, mid-run
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, mpirun, append([]string{"--allow-run-as-root", "--oversubscribe", "-np", "2", bin}, args(cut)...)...)
			cmd.Env = append(os.Environ(), "OMPI_MCA_btl_vader_single_copy_mechanism=none")
			var log strings.Builder
			cmd.Stdout, cmd.Stderr = &log, &log
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ckpt := filepath.Join(dir, cut+".ckpt")
			for {
				if _, err := os.Stat(ckpt); err == nil {
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("no first checkpoint: %s", log.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(150 * time.Millisecond)
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			out := log.String()
			if err == nil || !strings.Contains(out, "checkpoint "+ckpt+" holds the run there") || strings.Count(out, "Resume with") != 1 {
				t.Fatalf("interrupted: exit %v, want a failure saying, once, that the checkpoint holds the run:\n%s", err, out)
			}
			if _, err := os.Stat(filepath.Join(dir, cut+".safetensors")); err == nil {
				t.Error("the interrupted run wrote the model")
			}
			ck, err := trainer.LoadCheckpoint(ckpt)
			if err != nil {
				t.Fatal(err)
			}
			// the checkpoint holds exactly the point the run says it
			// stopped at (an epoch's end where a selection completes
			// first, which may also be a periodic checkpoint's epoch)
			where := fmt.Sprintf("after epoch %d of %d", ck.Epoch, epochs)
			if ck.Part.Batches > 0 {
				where += fmt.Sprintf(" and %d batches of epoch %d", ck.Part.Batches, ck.Epoch+1)
			}
			if ck.Epoch >= epochs || !strings.Contains(out, "training interrupted "+where+":") {
				t.Errorf("the checkpoint holds epoch %d and %d batches: not the point the run was interrupted at:\n%s", ck.Epoch, ck.Part.Batches, out)
			}
			if out, err := mpiRun(t, mpirun, 2, bin, append(args(cut), "--resume")...); err != nil {
				t.Fatalf("resume: %v\n%s", err, out)
			}
			if d := differ(readRun(t, bin, dir, ref, ood), readRun(t, bin, dir, cut, ood)); d != "" {
				t.Errorf("interrupted under mpirun at epoch %d + %d batches and resumed, against uninterrupted: %s", ck.Epoch, ck.Part.Batches, d)
			}
		})
	}
}
