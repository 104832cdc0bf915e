package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
)

// TestReplayGhostFlags runs `calisym replay --ghost 250ms --ghost-prefix
// pred/` on the ANYmal slice: one ghost /tf per prediction whose base,
// under the prefix, is the predicted path's pose 25 steps (250 ms) ahead,
// bit for bit, and the measured robot's /tf with every state; and lookaheads that are not whole model steps within the
// horizon, or not durations, are refused.
func TestReplayGhostFlags(t *testing.T) {
	f := newAnymalFixture(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "ghost.mcap")
	if stdout, _, err := runCLI(t, "replay", "--params", f.params, "--model", f.model, "--data", f.root, f.log, "--out", out,
		"--ghost", "250ms", "--ghost-prefix", "pred/", "--compression", "none", "--every", "1"); err != nil {
		t.Fatalf("replay: %v\n%s", err, stdout)
	}
	r, err := logio.Open(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var paths []msgs.Path
	var tfs []msgs.TFMessage
	for m, err := range logio.Messages(r) {
		if err != nil {
			t.Fatal(err)
		}
		switch m.Channel.Topic {
		case "/calisym/predicted_path":
			paths = append(paths, msgs.Path{})
			if err := msgs.Unmarshal(m.Data, &paths[len(paths)-1]); err != nil {
				t.Fatal(err)
			}
		case "/tf":
			tfs = append(tfs, msgs.TFMessage{})
			if err := msgs.Unmarshal(m.Data, &tfs[len(tfs)-1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The measured robot's frames with each of the 300 states, the
	// ghost's with each prediction (all but the 10 of the port history's
	// warm-up).
	var ghosts []msgs.TFMessage
	measured := 0
	for _, m := range tfs {
		if strings.HasPrefix(m.Transforms[0].ChildFrameID, "pred/") {
			ghosts = append(ghosts, m)
		} else {
			measured++
		}
	}
	if measured != 300 || len(ghosts) != 290 || len(paths) != 290 {
		t.Fatalf("%d measured and %d ghost /tf, %d paths; want 300, 290, 290", measured, len(ghosts), len(paths))
	}
	for i, m := range ghosts {
		var ghost *msgs.TransformStamped
		for k := range m.Transforms {
			if m.Transforms[k].ChildFrameID == "pred/base" {
				ghost = &m.Transforms[k]
			}
		}
		if ghost == nil || ghost.Header.FrameID != "odom" {
			t.Fatalf("/tf %d has no odom → pred/base", i)
		}
		want := paths[i].Poses[25].Pose
		got := ghost.Transform
		if got.Translation.X != want.Position.X || got.Translation.Y != want.Position.Y || got.Translation.Z != want.Position.Z || got.Rotation != want.Orientation {
			t.Fatalf("/tf %d: ghost %+v, want the path's pose 25 steps ahead %+v", i, got, want)
		}
	}
	for _, c := range []struct{ ghost, want string }{
		{"15ms", "whole number of model steps"},
		{"2s", "whole number of model steps"},
		{"soon", "--ghost \"soon\""},
	} {
		_, _, err := runCLI(t, "replay", "--params", f.params, "--model", f.model, "--data", f.root, f.log, "--out", filepath.Join(dir, "bad.mcap"), "--ghost", c.ghost)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--ghost %s: %v, want an error saying %q", c.ghost, err, c.want)
		}
	}
}

// TestGhostFlagLookahead: --ghost on the double pendulum (10 ms steps,
// horizon 100) must be a whole number of model steps within the horizon,
// refused naming the flag otherwise; a valid one sets node.tf.ghost.
func TestGhostFlagLookahead(t *testing.T) {
	for _, c := range []struct{ ghost, want string }{
		{"250ms", ""},
		{"1s", ""},
		{"15ms", `--ghost "15ms": a lookahead of 0.015 s is not a whole number of model steps (dt = 0.01 s) between 1 and the horizon's 100 (1 s)`},
		{"1.01", "between 1 and the horizon's 100"},
		{"0", "want a positive duration"},
	} {
		p, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		g := ghostFlags{lookahead: c.ghost}
		err = g.apply(p)
		switch {
		case c.want == "" && (err != nil || p.Node.TF.Ghost <= 0):
			t.Errorf("--ghost %s: %v (node.tf.ghost %g)", c.ghost, err, p.Node.TF.Ghost)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("--ghost %s: %v, want an error saying %q", c.ghost, err, c.want)
		}
	}
}
