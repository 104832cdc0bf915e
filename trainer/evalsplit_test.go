package trainer

import (
	"context"
	"math"
	"slices"
	"testing"
)

// TestEvaluateBreakdown checks that the per-coordinate and per-file errors
// Evaluate reports add up to its MSE, and the base/joint split of
// BaseCoordinates.
func TestEvaluateBreakdown(t *testing.T) {
	ds := toyDataset(t, 3, 30, 2, 1, 3)
	ds.Episodes[0].Name, ds.Episodes[1].Name, ds.Episodes[2].Name = "a.mcap@0", "b.mcap@0", "a.mcap@30"
	sym := symplecticLearner(t, ds, "gr", 1)
	res, err := Evaluate(context.Background(), sym.Rollers(), ds, EvalOptions{Horizon: 10, Stride: 7})
	if err != nil {
		t.Fatal(err)
	}
	nx := ds.StateDim()
	var s float64
	for _, v := range res.PerCoord {
		s += v
	}
	if d := math.Abs(s/float64(nx) - res.MSE); d > 1e-12*res.MSE {
		t.Errorf("mean of per-coordinate MSE %.15g, MSE %.15g", s/float64(nx), res.MSE)
	}
	if len(res.PerFile) != 2 || res.PerFile[0].File != "a.mcap" || res.PerFile[1].File != "b.mcap" {
		t.Fatalf("per-file results %+v, want a.mcap then b.mcap", res.PerFile)
	}
	var fs float64
	win := 0
	for _, f := range res.PerFile {
		fs += f.MSE * float64(f.Windows)
		win += f.Windows
	}
	if win != res.Windows || math.Abs(fs/float64(win)-res.MSE) > 1e-12*res.MSE {
		t.Errorf("per-file windows %d (want %d), weighted MSE %.15g (want %.15g)", win, res.Windows, fs/float64(win), res.MSE)
	}
	if _, ok := res.Split(BaseCoordinates([]string{"q1", "q2"})); ok {
		t.Error("a split without a floating base")
	}
	if got := BaseCoordinates([]string{"rho_x", "rho_y", "rho_z", "phi_x", "phi_y", "phi_z", "LF_HAA"}); got != 6 {
		t.Errorf("BaseCoordinates of a floating base: %d", got)
	}
	// a fake 2-coordinate "base" of the toy: q1 and p1 against q2 and p2
	b, ok := res.Split(1)
	if !ok {
		t.Fatal("no split")
	}
	n := ds.N
	want := (res.PerCoord[0] + res.PerCoord[n]) / s
	if math.Abs(b.BaseShare-want) > 1e-12 || b.BaseQ != res.PerCoord[0] || b.JointP != res.PerCoord[n+1] {
		t.Errorf("split %+v of per-coordinate %v", b, res.PerCoord)
	}
}

// TestEvaluatePerFileNames checks the names of per_file: a file converted
// from outside the data root (its episodes named by an absolute path or
// one climbing out, "../…") is named by its base name where that is
// unambiguous among the evaluation's files; names relative to the data
// root are kept. Before, machine paths ended up in the tables.
func TestEvaluatePerFileNames(t *testing.T) {
	for _, c := range []struct {
		name        string
		files, want [3]string
	}{
		{"relative to the data root, kept", [3]string{"crazyflie/test/a.parquet", "crazyflie/test/b.parquet", "c.parquet"}, [3]string{"crazyflie/test/a.parquet", "crazyflie/test/b.parquet", "c.parquet"}},
		{"absolute, base names", [3]string{"/home/me/logs/a.mcap", "/home/me/logs/b.mcap", "/tmp/c.mcap"}, [3]string{"a.mcap", "b.mcap", "c.mcap"}},
		{"climbing out, base name", [3]string{"../shared/data/a.mcap", "x/b.mcap", "c.mcap"}, [3]string{"a.mcap", "x/b.mcap", "c.mcap"}},
		{"ambiguous base name, kept", [3]string{"/run1/a.mcap", "/run2/a.mcap", "/run2/b.mcap"}, [3]string{"/run1/a.mcap", "/run2/a.mcap", "b.mcap"}},
		{"absolute against a relative of that base name, kept", [3]string{"/home/me/a.mcap", "logs/a.mcap", "/home/me/b.mcap"}, [3]string{"/home/me/a.mcap", "logs/a.mcap", "b.mcap"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := toyDataset(t, 3, 30, 2, 1, 3)
			for i := range ds.Episodes {
				ds.Episodes[i].Name = c.files[i] + "@0"
			}
			sym := symplecticLearner(t, ds, "gr", 1)
			res, err := Evaluate(context.Background(), sym.Rollers(), ds, EvalOptions{Horizon: 10, Stride: 7})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.PerFile {
				got = append(got, f.File)
			}
			if !slices.Equal(got, c.want[:]) {
				t.Errorf("per_file %q, want %q", got, c.want)
			}
		})
	}
}
