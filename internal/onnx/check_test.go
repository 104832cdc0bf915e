package onnx

import (
	"errors"
	"strings"
	"testing"
)

// TestCheck: a valid graph with a Loop body passes; each kind of defect
// onnx.checker rejects is found and named.
func TestCheck(t *testing.T) {
	valid := func() *Model {
		g := NewGraph("g")
		x := g.Input(Value{Name: "x", Shape: []Dim{Symbolic("batch"), Fixed(2)}})
		w := g.Const("w", []int64{2, 2}, []float64{1, 0, 0, 1})
		y := g.Op("MatMul", []string{x, w})
		body := g.BeginBody("body")
		it := body.Input(Value{Name: "iter", Elem: Int64})
		cond := body.Input(Value{Name: "cond", Elem: Bool})
		carried := body.Input(Value{Name: "carried", Shape: []Dim{Symbolic("batch"), Fixed(2)}})
		next := g.Op("Add", []string{carried, y}) // reads the outer y
		body.Output(Value{Name: "cond_out", Elem: Bool}, g.Op("Identity", []string{cond}))
		body.Output(Value{Name: "carried_out", Shape: []Dim{Symbolic("batch"), Fixed(2)}}, next)
		_ = it
		g.EndBody()
		n := g.Int64s("n", nil, 3)
		out := g.Op("Loop", []string{n, "", y}, GraphAttr("body", body))
		g.Output(Value{Name: "z", Shape: []Dim{Symbolic("batch"), Fixed(2)}}, out)
		return &Model{Graph: g, Metadata: [][2]string{{"a", "1"}, {"b", "2"}}}
	}
	if err := valid().Check(); err != nil {
		t.Fatalf("a valid model: %v", err)
	}
	for _, c := range []struct {
		name  string
		spoil func(m *Model)
		want  string
	}{
		{"duplicate metadata", func(m *Model) { m.Metadata = append(m.Metadata, [2]string{"a", "1"}) }, `metadata_props has the key "a" twice`},
		{"undefined input", func(m *Model) { m.Graph.nodes[0].inputs[0] = "nowhere" }, `reads "nowhere", which is not defined before it`},
		{"read before assigned", func(m *Model) { m.Graph.nodes[0].inputs[0] = m.Graph.nodes[len(m.Graph.nodes)-1].outputs[0] }, "not defined before it"},
		{"output assigned twice", func(m *Model) { m.Graph.nodes[1].outputs[0] = m.Graph.nodes[0].outputs[0] }, "assigned twice"},
		{"input named like an initializer", func(m *Model) { m.Graph.inputs[0].Name = m.Graph.inits[0].name }, "assigned twice"},
		{"output not produced", func(m *Model) { m.Graph.outputs[0].Name = "ghost" }, `output "ghost" is not produced`},
		{"initializer size", func(m *Model) { m.Graph.inits[0].dims = []int64{2, 3} }, "holds 32 bytes, want 48"},
		{"zero dimension", func(m *Model) { m.Graph.inputs[0].Shape[1] = Fixed(0) }, "dimension 1 of size 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := valid()
			c.spoil(m)
			err := m.Check()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want ErrInvalid containing %q", err, c.want)
			}
		})
	}
}
