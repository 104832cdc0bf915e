package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/msgs"
)

// TestReplayGhostFlags runs `calisym replay --ghost 250ms --ghost-prefix
// pred/` on the ANYmal slice: one /tf per prediction whose ghost base,
// under the prefix, is the predicted path's pose 25 steps (250 ms) ahead,
// bit for bit; and lookaheads that are not whole model steps within the
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
	if len(tfs) != 300 || len(paths) != 300 {
		t.Fatalf("%d /tf and %d paths, want 300 each", len(tfs), len(paths))
	}
	for i, m := range tfs {
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
