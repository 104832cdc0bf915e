package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer"
)

// runCLIContext runs the command line in process under ctx.
func runCLIContext(ctx context.Context, args ...string) (string, string, error) {
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// smokeData simulates the smoke preset's pendulum datasets (train, id,
// ood: episodes of 301 samples, coordinates q1 q2, ports u1 u2) under dir.
func smokeData(t *testing.T, dir string) string {
	t.Helper()
	sim := filepath.Join(dir, "sim")
	if _, _, err := runCLI(t, "sim", "--preset", "smoke", "--out", sim); err != nil {
		t.Fatal(err)
	}
	return sim
}

// rewriteDataset loads dataset src, lets edit change it and saves it to dst.
func rewriteDataset(t *testing.T, src, dst string, edit func(*dataset.Dataset)) string {
	t.Helper()
	ds, err := dataset.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	edit(ds)
	if err := ds.Save(dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// windowStored cuts every episode into windows of length samples at the
// given stride, one episode per window, as window storage does.
func windowStored(length, stride int) func(*dataset.Dataset) {
	return func(ds *dataset.Dataset) {
		nx, ne := ds.StateDim(), ds.PortDim()
		var eps []dataset.Episode
		for _, ep := range ds.Episodes {
			for a := 0; a+length <= ep.Len; a += stride {
				eps = append(eps, dataset.Episode{Name: ep.Name, Len: length,
					X: ep.X[a*nx : (a+length)*nx], E: ep.E[a*ne : (a+length)*ne]})
			}
		}
		ds.Episodes, ds.WindowLen, ds.Stride = eps, length, stride
	}
}

// TestTrainMLPDefaultOut trains the MLP without --out, as a new user
// would, and requires eval and inspect to read the file it wrote; an MLP
// --out that is not .json, or a CaLiSym one that is, is refused.
func TestTrainMLPDefaultOut(t *testing.T) {
	dir := t.TempDir()
	sim := smokeData(t, dir)
	t.Chdir(dir)
	out, _, err := runCLI(t, "train", "--data", filepath.Join(sim, "train"), "--model", "mlp", "--hidden", "4", "--epochs", "1", "--batch", "256", "--quiet")
	if err != nil || !strings.Contains(out, "-> model.json") {
		t.Fatalf("train --model mlp: %v\n%s", err, out)
	}
	if _, err := os.Stat("model.safetensors"); err == nil {
		t.Error("the MLP was written to model.safetensors")
	}
	out, _, err = runCLI(t, "eval", "--model", "model.json", "--data", filepath.Join(sim, "ood"), "--horizon", "50", "--horizons", "5,50")
	if err != nil || !strings.Contains(out, "(mlp, ") {
		t.Errorf("eval of the default MLP output: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "inspect", "model.json")
	if err != nil || !strings.Contains(out, "MLP baseline") || !strings.Contains(out, "[q1 q2]") {
		t.Errorf("inspect of the default MLP output: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "inspect", "--json", "model.json")
	var rep mlpInspectReport
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil || rep.Kind != "mlp" || rep.StateDim != 4 || !rep.ChecksumVerified || rep.Params == 0 {
		t.Errorf("inspect --json of the default MLP output: %v\n%s", err, out)
	}
	for _, c := range []struct{ model, out, want string }{
		{"mlp", "baseline.safetensors", "baseline.json"},
		{"grb", "model.json", "model.safetensors"},
	} {
		_, _, err := runCLI(t, "train", "--data", filepath.Join(sim, "train"), "--model", c.model, "--epochs", "1", "--quiet", "--out", c.out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("train --model %s --out %s: %v, want an error suggesting %s", c.model, c.out, err, c.want)
		}
	}
}

// TestEvalHoldAndNames evaluates a model beside the state held constant at
// every horizon, and refuses a dataset of the same dimensions whose
// coordinates have other names.
func TestEvalHoldAndNames(t *testing.T) {
	dir := t.TempDir()
	sim := smokeData(t, dir)
	model := filepath.Join(dir, "m.safetensors")
	if _, _, err := runCLI(t, "train", "--data", filepath.Join(sim, "train"), "--model", "grb", "--layers", "2", "--epochs", "1", "--batch", "256", "--quiet", "--out", model); err != nil {
		t.Fatal(err)
	}
	ood := filepath.Join(sim, "ood")
	out, _, err := runCLI(t, "eval", "--model", model, "--data", ood, "--horizon", "50", "--horizons", "5,10,50")
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	if !strings.Contains(out, "state held constant (x̂_k = x_0, the reference to beat): AR MSE ") {
		t.Errorf("eval prints no held-state reference at the horizon:\n%s", out)
	}
	for _, h := range []string{"5", "10", "50"} {
		if !regexp.MustCompile(`(?m)^ *` + h + `  +\S+  +\S+\s*$`).MatchString(out) {
			t.Errorf("eval has no row of the model and the held state at horizon %s:\n%s", h, out)
		}
	}
	out, _, err = runCLI(t, "eval", "--model", model, "--data", ood, "--horizon", "50", "--horizons", "5,10,50", "--json")
	var ev struct {
		ARMSE     float64              `json:"ar_mse"`
		HoldARMSE float64              `json:"hold_ar_mse"`
		Multi     []trainer.EvalResult `json:"multi_horizon"`
		Hold      []trainer.EvalResult `json:"hold_multi_horizon"`
	}
	if err != nil || json.Unmarshal([]byte(out), &ev) != nil || len(ev.Hold) != 3 || len(ev.Multi) != 3 {
		t.Fatalf("eval --json: %v\n%s", err, out)
	}
	ds, err := dataset.Load(ood)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range []int{5, 10, 50} {
		want, err := trainer.Evaluate(context.Background(), trainer.HoldRollers, ds, trainer.EvalOptions{Horizon: h, Stride: 10})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Hold[i].Horizon != h || ev.Hold[i].MSE != want.MSE || !(want.MSE > 0) {
			t.Errorf("held state at horizon %d: %+v, want MSE %v", h, ev.Hold[i], want.MSE)
		}
	}
	if !(ev.HoldARMSE > 0) || ev.HoldARMSE != ev.Hold[2].MSE {
		t.Errorf("hold_ar_mse %v, the table's %v", ev.HoldARMSE, ev.Hold[2].MSE)
	}

	// --force: offset-free rollouts, the evaluation's own (the held state
	// stays the plain reference)
	out, _, err = runCLI(t, "eval", "--model", model, "--data", ood, "--horizon", "50", "--horizons", "5", "--force", "10,0.9", "--json")
	var fev struct {
		ARMSE     float64 `json:"ar_mse"`
		HoldARMSE float64 `json:"hold_ar_mse"`
	}
	if err != nil || json.Unmarshal([]byte(out), &fev) != nil {
		t.Fatalf("eval --force: %v\n%s", err, out)
	}
	sv, err := trainer.OpenModel(model)
	if err != nil {
		t.Fatal(err)
	}
	want, err := trainer.Evaluate(context.Background(), sv.Rollers, ds, trainer.EvalOptions{Horizon: 50, Stride: 10, Force: &predictor.ForceEstimate{Window: 10, Decay: 0.9}})
	if err != nil {
		t.Fatal(err)
	}
	if fev.ARMSE != want.MSE || fev.ARMSE == ev.ARMSE || fev.HoldARMSE != ev.HoldARMSE {
		t.Errorf("eval --force: AR MSE %v (the evaluation's %v, without --force %v), held %v (%v)", fev.ARMSE, want.MSE, ev.ARMSE, fev.HoldARMSE, ev.HoldARMSE)
	}
	out, _, err = runCLI(t, "eval", "--model", model, "--data", ood, "--horizon", "50", "--horizons", "5", "--force", "4,1")
	if err != nil || !strings.Contains(out, "rollouts offset-free (force estimate: window 4, decay 1)") {
		t.Errorf("eval --force 4,1: %v\n%s", err, out)
	}
	// --wrench needs a floating base, and excludes --force
	for _, args := range [][]string{{"--wrench", "400,3"}, {"--wrench", "400,3", "--force", "10,0.9"}, {"--wrench", "400"}} {
		_, _, err := runCLI(t, append([]string{"eval", "--model", model, "--data", ood, "--horizon", "50", "--horizons", "5"}, args...)...)
		want := map[int]string{2: "needs a floating base", 4: "--force and --wrench: choose one"}[len(args)]
		if len(args) == 2 && args[1] == "400" {
			want = "eval: --wrench: \"400\": want window,gate"
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("eval %v: %v, want an error with %q", args, err, want)
		}
	}
	for _, bad := range []string{"10", "0,0.9", "10,1.5", "ten,0.9"} {
		if _, _, err := runCLI(t, "eval", "--model", model, "--data", ood, "--force", bad); err == nil || !strings.Contains(err.Error(), "--force") {
			t.Errorf("eval --force %s: %v, want an error", bad, err)
		}
	}

	// --twin: the model against itself with every step perturbed by its
	// one-step residual, the mean of seeds 1–3 of trainer.Twin
	out, _, err = runCLI(t, "eval", "--model", model, "--data", ood, "--horizon", "50", "--horizons", "5,10", "--twin", "1", "--json")
	var tev struct {
		Twin twinReport `json:"twin"`
	}
	if err != nil || json.Unmarshal([]byte(out), &tev) != nil || len(tev.Twin.Horizons) != 3 || len(tev.Twin.Sigma) != 4 || len(tev.Twin.Autocorr) != 4 {
		t.Fatalf("eval --twin 1 --json: %v\n%s", err, out)
	}
	sigma, _, err := trainer.OneStepResidual(context.Background(), sv.Rollers, ds)
	if err != nil {
		t.Fatal(err)
	}
	var mean float64
	for seed := uint64(1); seed <= 3; seed++ {
		r, err := trainer.Twin(context.Background(), sv.Rollers, ds, trainer.TwinOptions{Horizon: 50, Stride: 10, Sigma: sigma, EveryStep: true, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		mean += r.MSE / 3
	}
	if p := tev.Twin.Horizons[2]; p.Horizon != 50 || math.Abs(p.Mean-mean) > 1e-12*mean || !(p.Min <= p.Mean && p.Mean <= p.Max) || !(mean > 0) {
		t.Errorf("twin at 50 steps %+v, trainer.Twin's mean %v", p, mean)
	}
	out, _, err = runCLI(t, "eval", "--model", model, "--data", ood, "--horizon", "50", "--horizons", "5", "--twin", "0.5")
	if err != nil || !strings.Contains(out, "twin: the model as the exact dynamics, every step off by 0.5 × its one-step residual") ||
		!regexp.MustCompile(`(?m)^ *50  +\S+  +\S+ \[\S+, \S+\]\s*$`).MatchString(out) {
		t.Errorf("eval --twin 0.5: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"--twin", "0"}, {"--twin", "-1"}, {"--twin", "1e300"}, {"--twin", "1001"}, {"--twin", "NaN"}, {"--twin", "1", "--force", "10,0.9"}} {
		if _, _, err := runCLI(t, append([]string{"eval", "--model", model, "--data", ood, "--horizon", "50", "--horizons", "5"}, args...)...); err == nil || !strings.Contains(err.Error(), "--twin") {
			t.Errorf("eval %v: %v, want an error naming --twin", args, err)
		}
	}

	renamed := rewriteDataset(t, ood, filepath.Join(dir, "renamed"), func(ds *dataset.Dataset) {
		ds.Coordinates = []string{"shoulder", "elbow"}
	})
	_, _, err = runCLI(t, "eval", "--model", model, "--data", renamed)
	if !errors.Is(err, trainer.ErrModelData) || !strings.Contains(err.Error(), "[q1 q2]") || !strings.Contains(err.Error(), "[shoulder elbow]") {
		t.Errorf("eval on other coordinates: %v, want an error naming both lists", err)
	}
}

// TestEvalWindowStoredHorizons evaluates on window-stored data (episodes
// of 101 samples) with eval's default horizons, which it shortens with a
// note, and with explicit ones that do not fit, which are errors saying
// what to pass.
func TestEvalWindowStoredHorizons(t *testing.T) {
	dir := t.TempDir()
	sim := smokeData(t, dir)
	model := filepath.Join(dir, "m.json")
	if _, _, err := runCLI(t, "train", "--data", filepath.Join(sim, "train"), "--model", "mlp", "--hidden", "4", "--epochs", "1", "--quiet", "--out", model); err != nil {
		t.Fatal(err)
	}
	win := rewriteDataset(t, filepath.Join(sim, "ood"), filepath.Join(dir, "windows"), windowStored(101, 50))
	out, stderr, err := runCLI(t, "eval", "--model", model, "--data", win)
	if err != nil {
		t.Fatalf("eval with the default horizons on window-stored data: %v\n%s", err, stderr)
	}
	if !strings.Contains(out, "at horizon 100 over") || !strings.Contains(stderr, "at most 100 steps") || !strings.Contains(stderr, "one window of 101 samples per episode") ||
		!strings.Contains(stderr, "leaves out horizons 200,400,800") {
		t.Errorf("eval's default horizons on window-stored data:\n%s\n%s", out, stderr)
	}
	for _, h := range []string{"5", "100"} {
		if !regexp.MustCompile(`(?m)^ *` + h + `  +\S+  +\S+\s*$`).MatchString(out) {
			t.Errorf("no row at horizon %s:\n%s", h, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--horizon", "200"}, "pass --horizon 100 or less"},
		{[]string{"--horizon", "100", "--horizons", "5,100,200"}, "pass --horizons 5,100"},
		{[]string{"--horizon", "100", "--horizons", "400"}, "e.g. --horizons 100"},
	} {
		_, _, err := runCLI(t, append([]string{"eval", "--model", model, "--data", win}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "101 samples") {
			t.Errorf("eval %v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

// TestTrainResumeErrors: --resume without a checkpoint file, and resuming
// a checkpoint written on other data, are errors.
func TestTrainResumeErrors(t *testing.T) {
	dir := t.TempDir()
	sim := smokeData(t, dir)
	ckpt := filepath.Join(dir, "run.ckpt")
	args := func(data string, epochs string, extra ...string) []string {
		return append([]string{"train", "--data", filepath.Join(sim, data), "--model", "gr", "--arch", "quadrotor", "--layers", "2", "--width", "4",
			"--epochs", epochs, "--batch", "256", "--schedule", "constant", "--quiet", "--checkpoint", ckpt, "--out", filepath.Join(dir, "m.safetensors")}, extra...)
	}
	_, _, err := runCLI(t, args("train", "2", "--resume")...)
	if err == nil || !strings.Contains(err.Error(), ckpt+" does not exist") {
		t.Errorf("--resume without a checkpoint: %v", err)
	}
	if _, err := os.Stat(ckpt); err == nil {
		t.Error("--resume without a checkpoint trained anyway")
	}
	if _, _, err := runCLI(t, args("train", "1")...); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCLI(t, args("id", "2", "--resume")...)
	if !errors.Is(err, trainer.ErrCheckpoint) || !strings.Contains(err.Error(), "other data") || !strings.Contains(err.Error(), ckpt) {
		t.Errorf("--resume on other data: %v", err)
	}
	if _, _, err := runCLI(t, args("train", "2", "--resume")...); err != nil {
		t.Errorf("--resume on the same data: %v", err)
	}
}

// TestTrainInterrupted cancels training (Ctrl-C) and requires the error to
// say what was saved and, with a checkpoint, the command that resumes; that
// command then completes the run.
func TestTrainInterrupted(t *testing.T) {
	dir := t.TempDir()
	sim := smokeData(t, dir)
	ckpt, model := filepath.Join(dir, "run.ckpt"), filepath.Join(dir, "m.json")
	// the constant schedule: a run of 1 epoch may be resumed to 3
	base := []string{"train", "--data", filepath.Join(sim, "train"), "--model", "mlp", "--hidden", "4", "--batch", "256", "--schedule", "constant", "--quiet", "--out", model}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	_, _, err := runCLIContext(cancelled, append(base, "--epochs", "3")...)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "nothing to save") {
		t.Errorf("interrupted before the first epoch: %v", err)
	}
	if _, _, err := runCLI(t, append(base, "--epochs", "1", "--checkpoint", ckpt)...); err != nil {
		t.Fatal(err)
	}
	os.Remove(model)
	_, stderr, err := runCLIContext(cancelled, append(base, "--epochs", "3", "--checkpoint", ckpt, "--resume")...)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"interrupted after epoch 1 of 3", "checkpoint " + ckpt + " holds the run there", model + " is written only when training completes", "Resume with"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the interruption message lacks %q:\n%s", want, msg)
		}
	}
	if !strings.Contains(stderr, "stopping after the batch under way") {
		t.Errorf("no notice of the interruption on stderr: %q", stderr)
	}
	if _, err := os.Stat(model); err == nil {
		t.Error("an interrupted run wrote the model file")
	}
	line := regexp.MustCompile(`(?m)^  (calisym train .*)$`).FindStringSubmatch(msg)
	if line == nil || !strings.Contains(line[1], "--resume") || !strings.Contains(line[1], "--checkpoint "+ckpt) || strings.Contains(line[1], "'") {
		t.Fatalf("no resume command in:\n%s", msg)
	}
	out, _, err := runCLI(t, strings.Fields(line[1])[1:]...)
	if err != nil || !strings.Contains(out, model) {
		t.Fatalf("the printed resume command: %v\n%s", err, out)
	}
	ck, err := trainer.LoadCheckpoint(ckpt)
	if err != nil || ck.Epoch != 3 {
		t.Errorf("after resuming: checkpoint %v, %v", ck, err)
	}

}

// TestInterruptedWithoutCheckpoint: a run interrupted after some epochs
// without --checkpoint says that nothing was saved and how to make a run
// resumable.
func TestInterruptedWithoutCheckpoint(t *testing.T) {
	cmd := newTrainCmd()
	if err := cmd.ParseFlags([]string{"--data", "d", "--epochs", "5"}); err != nil {
		t.Fatal(err)
	}
	ie := &trainer.Interrupted{Done: 2, Epochs: 5, Err: context.Canceled}
	err := interruptedError(cmd, ie, ie, "model.json")
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after epoch 2 of 5: nothing was saved") || !strings.Contains(err.Error(), "train with --checkpoint FILE") {
		t.Errorf("got %v", err)
	}
}

// TestTrainTiming trains with --timing and requires the breakdown of the
// epochs' time per optimiser step on stderr, every phase named, the steps
// those of the run (one epoch of the smoke data's 2,772 transitions at
// batch 1024: 3) and the shares summing to 100%.
func TestTrainTiming(t *testing.T) {
	dir := t.TempDir()
	sim := smokeData(t, dir)
	_, errOut, err := runCLI(t, "train", "--data", filepath.Join(sim, "train"), "--arch", "gr:2x4", "--epochs", "1", "--batch", "1024",
		"--quiet", "--timing", "--out", filepath.Join(dir, "m.safetensors"))
	if err != nil {
		t.Fatalf("train --timing: %v\n%s", err, errOut)
	}
	i := strings.Index(errOut, "calisym train: time: ")
	if i < 0 {
		t.Fatalf("train --timing printed no breakdown:\n%s", errOut)
	}
	line := strings.SplitN(errOut[i:], "\n", 2)[0]
	var steps int
	if _, err := fmt.Sscanf(line, "calisym train: time: %d steps", &steps); err != nil || steps != 3 {
		t.Errorf("%q: %d steps (%v), want 3", line, steps, err)
	}
	var sum float64
	for _, name := range []string{"shards", "samples", "exchange", "reduce", "optimizer", "stop", "validation", "selection", "checkpoint", "other"} {
		var ms, pct float64
		j := strings.Index(line, " "+name+" ")
		if j < 0 {
			t.Errorf("%q does not report %s", line, name)
			continue
		}
		if _, err := fmt.Sscanf(line[j+len(name)+2:], "%f ms (%f%%)", &ms, &pct); err != nil {
			t.Errorf("%q: %s: %v", line, name, err)
		}
		sum += pct
	}
	if math.Abs(sum-100) > 0.6 {
		t.Errorf("%q: the shares sum to %.1f%%, want 100%%", line, sum)
	}
}
