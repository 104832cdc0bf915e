package experiment

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/trainer"
)

// TestPayloadGroupNeverTrains: the ANYmal benchmark's evaluation groups
// include the dev payload log as "payload_dev", read by the groups'
// conversion only: no input of the system's training or evaluation
// conversions matches it, the groups' conversion leaves the spec's inputs
// as they were, and its windows (one per 101 samples from the log's start)
// are in payload_dev and in no other group.
func TestPayloadGroupNeverTrains(t *testing.T) {
	fixtures.Path(t, "anymal_sim", "dev", "payload_trot_701.mcap")
	fixtures.Path(t, "anymal_sim", "id", "sway_201.mcap")
	root := filepath.Join(fixtures.DataDir(), "anymal_sim")
	sys := anymalSystem()
	i := slices.IndexFunc(sys.groups, func(g EvalGroup) bool { return g.Name == "payload_dev" })
	if i < 0 {
		t.Fatalf("groups %v: no payload_dev", sys.groups)
	}
	payload := sys.groups[i]
	// the system's own inputs (training, ID test, OOD) never match it
	for _, pat := range sys.inputs {
		files, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("input %s matches nothing", pat)
		}
		for _, f := range files {
			if strings.Contains(f, "payload") || strings.Contains(f, string(filepath.Separator)+"dev"+string(filepath.Separator)) {
				t.Errorf("input %s reads %s", pat, f)
			}
		}
	}
	// the groups' conversion on a short log and the payload log
	params := filepath.Join(fixtures.Root(), "params", sys.params)
	spec, err := convert.LoadSpec(params)
	if err != nil {
		t.Fatal(err)
	}
	spec.History.PortMean = 0
	spec.Inputs = []string{"id/sway_201.mcap"}
	spec.Validate.Exclude = append(spec.Validate.Exclude, sys.exclude...)
	small := sys
	small.groups = []EvalGroup{{Name: "sway", Files: []string{"sway_201.mcap"}}, payload}
	groups, err := convertGroups(context.Background(), small, spec, root, params)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(spec.Inputs, []string{"id/sway_201.mcap"}) {
		t.Errorf("the evaluation spec's inputs became %v", spec.Inputs)
	}
	for _, g := range groups {
		for _, ep := range g.Data.Episodes {
			if f := filepath.Base(trainer.EpisodeFile(ep.Name)); (f == "payload_trot_701.mcap") != (g.Name == "payload_dev") {
				t.Errorf("group %s holds %s", g.Name, ep.Name)
			}
		}
	}
	// 6000 samples: 59 windows of 101 from the log's start
	if d := groups[1].Data; len(d.Episodes) != 59 || d.Episodes[0].Len != sys.horizon+1 {
		t.Errorf("payload_dev: %d windows of %d samples, want 59 of %d", len(d.Episodes), d.Episodes[0].Len, sys.horizon+1)
	}
}
