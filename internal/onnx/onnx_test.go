package onnx

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// field is one decoded protobuf field.
type field struct {
	num  int
	wire int
	v    uint64
	b    []byte
}

// decode splits a protobuf message into its fields (varint and
// length-delimited only, what this package writes).
func decode(t *testing.T, b []byte) []field {
	t.Helper()
	var fs []field
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatalf("bad key varint at %x", b)
		}
		b = b[n:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case wireVarint:
			v, n := binary.Uvarint(b)
			if n <= 0 {
				t.Fatal("bad varint")
			}
			f.v, b = v, b[n:]
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 || int(l) > len(b)-n {
				t.Fatal("bad length")
			}
			f.b, b = b[n:n+int(l)], b[n+int(l):]
		default:
			t.Fatalf("wire type %d", f.wire)
		}
		fs = append(fs, f)
	}
	return fs
}

func find(fs []field, num int) []field {
	var out []field
	for _, f := range fs {
		if f.num == num {
			out = append(out, f)
		}
	}
	return out
}

// TestVarints checks the encoding against protobuf's documented examples.
func TestVarints(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want []byte
	}{
		{1, []byte{0x08, 0x01}},
		{150, []byte{0x08, 0x96, 0x01}},
		{-1, []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	} {
		var e enc
		e.int64(1, c.v)
		if !bytes.Equal(e.b, c.want) {
			t.Errorf("int64 field 1 = %d: % x, want % x", c.v, e.b, c.want)
		}
	}
	var e enc
	e.string(2, "testing")
	if want := append([]byte{0x12, 0x07}, "testing"...); !bytes.Equal(e.b, want) {
		t.Errorf("string field 2: % x, want % x", e.b, want)
	}
}

// TestModelStructure builds a one-node model and reads its fields back:
// IR version, opset, graph with node, initializer, input and output, and
// metadata.
func TestModelStructure(t *testing.T) {
	g := NewGraph("g")
	x := g.Input(Value{Name: "x", Shape: []Dim{Symbolic("batch"), Fixed(2)}})
	c := g.Const("w", []int64{2}, []float64{1.5, -2})
	g.Output(Value{Name: "y", Shape: []Dim{Symbolic("batch"), Fixed(2)}}, g.Op("Mul", []string{x, c}))
	m := &Model{Graph: g, ProducerName: "calisym", ProducerVersion: "test", Metadata: [][2]string{{"k", "v"}}}
	top := decode(t, m.Marshal())
	if ir := find(top, modelIRVersion); len(ir) != 1 || ir[0].v != irVersion {
		t.Fatalf("ir_version fields %v", ir)
	}
	ops := find(top, modelOpsetImport)
	if len(ops) != 1 {
		t.Fatal("no opset_import")
	}
	if v := find(decode(t, ops[0].b), opsetVersion); len(v) != 1 || v[0].v != Opset {
		t.Errorf("opset version %v", v)
	}
	md := find(top, modelMetadataProps)
	if len(md) != 1 || string(find(decode(t, md[0].b), entryKey)[0].b) != "k" {
		t.Errorf("metadata %v", md)
	}
	gr := decode(t, find(top, modelGraph)[0].b)
	nodes := find(gr, graphNode)
	if len(nodes) != 2 { // Mul and the Identity naming the output
		t.Fatalf("%d nodes, want 2", len(nodes))
	}
	mul := decode(t, nodes[0].b)
	if op := string(find(mul, nodeOpType)[0].b); op != "Mul" {
		t.Errorf("first node %s", op)
	}
	if ins := find(mul, nodeInput); len(ins) != 2 || string(ins[0].b) != "x" || string(ins[1].b) != c {
		t.Errorf("Mul inputs %v", ins)
	}
	inits := find(gr, graphInitializer)
	if len(inits) != 1 {
		t.Fatal("no initializer")
	}
	it := decode(t, inits[0].b)
	raw := find(it, tensorRawData)[0].b
	if find(it, tensorDataType)[0].v != typeDouble || len(raw) != 16 ||
		math.Float64frombits(binary.LittleEndian.Uint64(raw[8:])) != -2 {
		t.Errorf("initializer %v", it)
	}
	in := decode(t, find(gr, graphInput)[0].b)
	tp := decode(t, find(in, valueType)[0].b)
	tt := decode(t, find(tp, typeTensorType)[0].b)
	dims := find(decode(t, find(tt, tensorShape)[0].b), shapeDim)
	if len(dims) != 2 || string(find(decode(t, dims[0].b), dimParam)[0].b) != "batch" || find(decode(t, dims[1].b), dimValue)[0].v != 2 {
		t.Errorf("input shape %v", dims)
	}
	if out := decode(t, find(gr, graphOutput)[0].b); string(find(out, valueName)[0].b) != "y" {
		t.Errorf("output %v", out)
	}
}

// TestNamesUnique: a second input of the same name panics.
func TestNamesUnique(t *testing.T) {
	g := NewGraph("g")
	g.Input(Value{Name: "x"})
	defer func() {
		if recover() == nil {
			t.Error("a duplicate name was accepted")
		}
	}()
	g.Input(Value{Name: "x"})
}

// TestLoopBody: a body built between BeginBody and EndBody is encoded as
// the Loop node's graph attribute, with typed scalar inputs, and its
// nodes (and only its nodes) inside it; constants stay in the main graph.
func TestLoopBody(t *testing.T) {
	g := NewGraph("g")
	x := g.Input(Value{Name: "x", Shape: []Dim{Fixed(2)}})
	two := g.Const("two", []int64{2}, []float64{2, 2})
	trips := g.Int64s("trips", nil, 3)
	body := g.BeginBody("body")
	body.Input(Value{Name: "i", Elem: Int64})
	cond := body.Input(Value{Name: "c", Elem: Bool})
	carry := body.Input(Value{Name: "v", Shape: []Dim{Fixed(2)}})
	next := g.Op("Mul", []string{carry, two})
	body.Output(Value{Name: "c_out", Elem: Bool}, cond)
	body.Output(Value{Name: "v_out", Shape: []Dim{Fixed(2)}}, next)
	g.EndBody()
	outs := g.OpN("Loop", []string{trips, "", x}, 1, GraphAttr("body", body))
	g.Output(Value{Name: "y", Shape: []Dim{Fixed(2)}}, outs[0])
	if n := g.Nodes(); n != 5 { // Loop, Identity (y); body: Mul, 2 Identity
		t.Errorf("%d nodes, want 5", n)
	}
	top := decode(t, (&Model{Graph: g}).Marshal())
	gr := decode(t, find(top, modelGraph)[0].b)
	if n := len(find(gr, graphInitializer)); n != 2 {
		t.Errorf("%d initializers in the main graph, want 2", n)
	}
	nodes := find(gr, graphNode)
	loop := decode(t, nodes[0].b)
	if op := string(find(loop, nodeOpType)[0].b); op != "Loop" {
		t.Fatalf("first node %s, want Loop", op)
	}
	attr := decode(t, find(loop, nodeAttribute)[0].b)
	if find(attr, attrType)[0].v != attrTypeGraph {
		t.Fatalf("attribute type %v", find(attr, attrType))
	}
	bg := decode(t, find(attr, attrG)[0].b)
	if len(find(bg, graphInput)) != 3 || len(find(bg, graphOutput)) != 2 || len(find(bg, graphNode)) != 3 || len(find(bg, graphInitializer)) != 0 {
		t.Errorf("body: %d inputs, %d outputs, %d nodes, %d initializers", len(find(bg, graphInput)), len(find(bg, graphOutput)), len(find(bg, graphNode)), len(find(bg, graphInitializer)))
	}
	in0 := decode(t, find(bg, graphInput)[0].b)
	tt := decode(t, find(decode(t, find(in0, valueType)[0].b), typeTensorType)[0].b)
	if find(tt, tensorElemType)[0].v != typeInt64 || len(find(decode(t, find(tt, tensorShape)[0].b), shapeDim)) != 0 {
		t.Errorf("the iteration input is not an int64 scalar: %v", tt)
	}
}

// TestFloat32Graph: a float32 graph writes its constants rounded to
// float32 (FLOAT, 4 bytes each) and declares its real inputs and outputs
// FLOAT, its int64 values unchanged.
func TestFloat32Graph(t *testing.T) {
	g := NewFloat32Graph("g")
	x := g.Input(Value{Name: "x", Shape: []Dim{Fixed(2)}})
	c := g.Const("w", []int64{2}, []float64{0.1, -2})
	g.Int64s("i", []int64{1}, 7)
	g.Output(Value{Name: "y", Shape: []Dim{Fixed(2)}}, g.Op("Mul", []string{x, c}))
	if !g.Float32() || g.RealType() != typeFloat || NewGraph("h").RealType() != typeDouble {
		t.Fatalf("Float32 %v, RealType %d", g.Float32(), g.RealType())
	}
	gr := decode(t, find(decode(t, (&Model{Graph: g}).Marshal()), modelGraph)[0].b)
	inits := find(gr, graphInitializer)
	if len(inits) != 2 {
		t.Fatalf("%d initializers", len(inits))
	}
	w, i := decode(t, inits[0].b), decode(t, inits[1].b)
	raw := find(w, tensorRawData)[0].b
	if find(w, tensorDataType)[0].v != typeFloat || len(raw) != 8 || math.Float32frombits(binary.LittleEndian.Uint32(raw)) != float32(0.1) {
		t.Errorf("float32 constant: type %d, % x", find(w, tensorDataType)[0].v, raw)
	}
	if find(i, tensorDataType)[0].v != typeInt64 || len(find(i, tensorRawData)[0].b) != 8 {
		t.Errorf("int64 constant changed: %v", i)
	}
	for _, num := range []int{graphInput, graphOutput} {
		v := decode(t, find(gr, num)[0].b)
		tt := decode(t, find(decode(t, find(v, valueType)[0].b), typeTensorType)[0].b)
		if e := find(tt, tensorElemType)[0].v; e != typeFloat {
			t.Errorf("field %d: element type %d, want FLOAT (%d)", num, e, typeFloat)
		}
	}
}
