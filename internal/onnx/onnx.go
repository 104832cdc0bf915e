// Package onnx writes ONNX models (https://onnx.ai): a small graph builder
// and the protobuf encoding of the ONNX messages it needs (ModelProto,
// GraphProto, NodeProto, TensorProto, ValueInfoProto, AttributeProto and
// their parts), written by hand from onnx.proto's field numbers so that
// the project needs no protobuf code generator. It writes float64
// (DOUBLE) or float32 (FLOAT, a graph made with NewFloat32Graph) and int64
// tensors only, and never reads ONNX; Model.Check validates what it
// built as onnx.checker would.
package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Tensor element types (TensorProto.DataType).
const (
	typeFloat  = 1
	typeInt64  = 7
	typeBool   = 9
	typeDouble = 11
)

// Field numbers of onnx.proto (proto3, IR version 8).
const (
	// ModelProto
	modelIRVersion     = 1
	modelProducerName  = 2
	modelProducerVer   = 3
	modelDocString     = 6
	modelGraph         = 7
	modelOpsetImport   = 8
	modelMetadataProps = 14
	// OperatorSetIdProto
	opsetDomain  = 1
	opsetVersion = 2
	// StringStringEntryProto
	entryKey   = 1
	entryValue = 2
	// GraphProto
	graphNode        = 1
	graphName        = 2
	graphInitializer = 5
	graphDocString   = 10
	graphInput       = 11
	graphOutput      = 12
	// NodeProto
	nodeInput     = 1
	nodeOutput    = 2
	nodeName      = 3
	nodeOpType    = 4
	nodeAttribute = 5
	// AttributeProto
	attrName = 1
	attrI    = 3
	attrG    = 6
	attrInts = 8
	attrType = 20
	// TensorProto
	tensorDims     = 1
	tensorDataType = 2
	tensorName     = 8
	tensorRawData  = 9
	// ValueInfoProto
	valueName      = 1
	valueType      = 2
	valueDocString = 3
	// TypeProto and TypeProto.Tensor
	typeTensorType = 1
	tensorElemType = 1
	tensorShape    = 2
	// TensorShapeProto and its Dimension
	shapeDim      = 1
	dimValue      = 1
	dimParam      = 2
	attrTypeInt   = 2
	attrTypeGraph = 5
	attrTypeInts  = 7
	irVersion     = 8
	wireVarint    = 0
	wireBytes     = 2
)

// Opset is the version of the default ("ai.onnx") operator set the models
// declare: 17, which onnxruntime has run since 1.13.
const Opset = 17

// enc is a protobuf message being encoded.
type enc struct{ b []byte }

func (e *enc) tag(field, wire int) { e.uvarint(uint64(field)<<3 | uint64(wire)) }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

// int64 writes an int64 field (varint; negative values take ten bytes, as
// protobuf encodes them).
func (e *enc) int64(field int, v int64) {
	e.tag(field, wireVarint)
	e.uvarint(uint64(v))
}

func (e *enc) bytes(field int, b []byte) {
	e.tag(field, wireBytes)
	e.uvarint(uint64(len(b)))
	e.b = append(e.b, b...)
}

func (e *enc) string(field int, s string) { e.bytes(field, []byte(s)) }

func (e *enc) message(field int, m *enc) { e.bytes(field, m.b) }

// Dim is one dimension of an input or output: a fixed size, or a named
// symbolic size when Param is set.
type Dim struct {
	Value int64
	Param string
}

// Fixed returns a dimension of fixed size.
func Fixed(n int) Dim { return Dim{Value: int64(n)} }

// Symbolic returns a named dimension whose size is chosen at run time.
func Symbolic(name string) Dim { return Dim{Param: name} }

// Elem is the element type of a graph input or output.
type Elem int

// The element types of inputs and outputs.
const (
	// Double is the graph's real type: float64, or float32 in a graph
	// made with NewFloat32Graph.
	Double Elem = iota
	Int64
	Bool
)

// Value is a graph input or output: a tensor of the given element type
// and shape (an empty shape is a scalar).
type Value struct {
	Name  string
	Elem  Elem
	Shape []Dim
	Doc   string
}

// Attr is an integer, integer-list or graph node attribute.
type Attr struct {
	Name  string
	Int   int64
	Ints  []int64
	Graph *Graph
	list  bool
}

// GraphAttr returns a graph attribute (the body of a Loop).
func GraphAttr(name string, g *Graph) Attr { return Attr{Name: name, Graph: g} }

// IntAttr returns an integer attribute.
func IntAttr(name string, v int64) Attr { return Attr{Name: name, Int: v} }

// IntsAttr returns an integer-list attribute.
func IntsAttr(name string, v ...int64) Attr { return Attr{Name: name, Ints: v, list: true} }

type node struct {
	op      string
	name    string
	inputs  []string
	outputs []string
	attrs   []Attr
}

type initializer struct {
	name  string
	dims  []int64
	typ   int
	bytes []byte
}

// Graph builds one ONNX graph. Node outputs are named automatically
// unless given; every name is unique within the graph.
type Graph struct {
	Name    string
	Doc     string
	nodes   []node
	inits   []initializer
	inputs  []Value
	outputs []Value
	ns      *namespace
	// root is the main graph (nil for the main graph itself), which
	// holds every initializer; body is the subgraph Op currently adds
	// nodes to (nil: this graph).
	root *Graph
	body *Graph
	// f32 makes the real values (Const, Scalar, Double inputs and
	// outputs) float32.
	f32 bool
}

// namespace is the set of value names of a model: the main graph's and
// its subgraphs' names are unique together, so a body can use the outer
// graph's values by name.
type namespace struct {
	seq   int
	names map[string]bool
}

// NewGraph returns an empty graph whose real values are float64.
func NewGraph(name string) *Graph {
	return &Graph{Name: name, ns: &namespace{names: map[string]bool{}}}
}

// NewFloat32Graph returns an empty graph whose real values are float32:
// Const rounds its values to float32 and the Double inputs and outputs are
// declared FLOAT.
func NewFloat32Graph(name string) *Graph {
	g := NewGraph(name)
	g.f32 = true
	return g
}

// Float32 reports whether the graph's real values are float32.
func (g *Graph) Float32() bool { return g.f32 }

func (g *Graph) fresh(prefix string) string {
	for {
		g.ns.seq++
		n := fmt.Sprintf("%s_%d", prefix, g.ns.seq)
		if !g.ns.names[n] {
			g.ns.names[n] = true
			return n
		}
	}
}

func (g *Graph) claim(name string) string {
	if g.ns.names[name] {
		panic(fmt.Sprintf("onnx: name %q used twice", name))
	}
	g.ns.names[name] = true
	return name
}

// BeginBody starts a subgraph (the body of a Loop) and makes it the
// target of Op until EndBody: the body's nodes may use every value of the
// graph by name, and constants made meanwhile still go to the main graph.
// Declare the body's inputs and outputs on the returned graph.
func (g *Graph) BeginBody(name string) *Graph {
	if g.body != nil {
		panic("onnx: nested bodies are not supported")
	}
	g.body = &Graph{Name: name, ns: g.ns, root: g, f32: g.f32}
	return g.body
}

// EndBody ends the current body: Op adds nodes to the graph again.
func (g *Graph) EndBody() { g.body = nil }

// target is the graph Op adds nodes to.
func (g *Graph) target() *Graph {
	if g.body != nil {
		return g.body
	}
	return g
}

// Input declares a graph input and returns its name.
func (g *Graph) Input(v Value) string {
	g.inputs = append(g.inputs, v)
	return g.claim(v.Name)
}

// Output declares the value named src as a graph output called v.Name,
// through an Identity node when the names differ.
func (g *Graph) Output(v Value, src string) {
	if src != v.Name {
		g.nodes = append(g.nodes, node{op: "Identity", name: g.fresh("Identity"), inputs: []string{src}, outputs: []string{g.claim(v.Name)}})
	}
	g.outputs = append(g.outputs, v)
}

// Const adds a real initializer of the given shape (nil for a scalar),
// float64 or, in a float32 graph, the values rounded to float32, and
// returns its name; prefix names it.
func (g *Graph) Const(prefix string, dims []int64, data []float64) string {
	size := int64(1)
	for _, d := range dims {
		size *= d
	}
	if size != int64(len(data)) {
		panic(fmt.Sprintf("onnx: constant %s of shape %v with %d values", prefix, dims, len(data)))
	}
	typ := typeDouble
	b := make([]byte, 0, 8*len(data))
	for _, v := range data {
		if g.f32 {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
			continue
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	if g.f32 {
		typ = typeFloat
	}
	name := g.fresh(prefix)
	g.inits = append(g.inits, initializer{name: name, dims: dims, typ: typ, bytes: b})
	return name
}

// RealType returns the ONNX data type number of the graph's real values
// (the "to" of a Cast to them): 11 (DOUBLE) or 1 (FLOAT).
func (g *Graph) RealType() int64 {
	if g.f32 {
		return typeFloat
	}
	return typeDouble
}

// Scalar adds a real scalar initializer.
func (g *Graph) Scalar(v float64) string { return g.Const("c", nil, []float64{v}) }

// Int64s adds an int64 initializer of the given shape (nil for a scalar).
func (g *Graph) Int64s(prefix string, dims []int64, data ...int64) string {
	b := make([]byte, 0, 8*len(data))
	for _, v := range data {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	name := g.fresh(prefix)
	g.inits = append(g.inits, initializer{name: name, dims: dims, typ: typeInt64, bytes: b})
	return name
}

// Op adds a node with one output (to the current body, if any) and
// returns the output's name.
func (g *Graph) Op(op string, inputs []string, attrs ...Attr) string {
	return g.OpN(op, inputs, 1, attrs...)[0]
}

// OpN adds a node with n outputs and returns their names.
func (g *Graph) OpN(op string, inputs []string, n int, attrs ...Attr) []string {
	outs := make([]string, n)
	for i := range outs {
		outs[i] = g.fresh(op)
	}
	t := g.target()
	t.nodes = append(t.nodes, node{op: op, name: outs[0] + "_node", inputs: inputs, outputs: outs, attrs: attrs})
	return outs
}

// Nodes returns the number of nodes so far, bodies included.
func (g *Graph) Nodes() int {
	n := len(g.nodes)
	for _, nd := range g.nodes {
		for _, a := range nd.attrs {
			if a.Graph != nil {
				n += a.Graph.Nodes()
			}
		}
	}
	return n
}

func (v Value) encode(f32 bool) *enc {
	var shape enc
	for _, d := range v.Shape {
		var dm enc
		if d.Param != "" {
			dm.string(dimParam, d.Param)
		} else {
			dm.int64(dimValue, d.Value)
		}
		shape.message(shapeDim, &dm)
	}
	var tt enc
	elem := map[Elem]int64{Double: typeDouble, Int64: typeInt64, Bool: typeBool}[v.Elem]
	if v.Elem == Double && f32 {
		elem = typeFloat
	}
	tt.int64(tensorElemType, elem)
	tt.message(tensorShape, &shape)
	var tp enc
	tp.message(typeTensorType, &tt)
	var vi enc
	vi.string(valueName, v.Name)
	vi.message(valueType, &tp)
	if v.Doc != "" {
		vi.string(valueDocString, v.Doc)
	}
	return &vi
}

func (n node) encode() *enc {
	var e enc
	for _, in := range n.inputs {
		e.string(nodeInput, in)
	}
	for _, out := range n.outputs {
		e.string(nodeOutput, out)
	}
	e.string(nodeName, n.name)
	e.string(nodeOpType, n.op)
	for _, a := range n.attrs {
		var ae enc
		ae.string(attrName, a.Name)
		if a.Graph != nil {
			ae.message(attrG, a.Graph.encode())
			ae.int64(attrType, attrTypeGraph)
		} else if a.list {
			for _, v := range a.Ints {
				ae.int64(attrInts, v)
			}
			ae.int64(attrType, attrTypeInts)
		} else {
			ae.int64(attrI, a.Int)
			ae.int64(attrType, attrTypeInt)
		}
		e.message(nodeAttribute, &ae)
	}
	return &e
}

func (in initializer) encode() *enc {
	var e enc
	for _, d := range in.dims {
		e.int64(tensorDims, d)
	}
	e.int64(tensorDataType, int64(in.typ))
	e.string(tensorName, in.name)
	e.bytes(tensorRawData, in.bytes)
	return &e
}

func (g *Graph) encode() *enc {
	var e enc
	for _, n := range g.nodes {
		e.message(graphNode, n.encode())
	}
	e.string(graphName, g.Name)
	for _, in := range g.inits {
		e.message(graphInitializer, in.encode())
	}
	if g.Doc != "" {
		e.string(graphDocString, g.Doc)
	}
	for _, v := range g.inputs {
		e.message(graphInput, v.encode(g.f32))
	}
	for _, v := range g.outputs {
		e.message(graphOutput, v.encode(g.f32))
	}
	return &e
}

// Model is an ONNX model: one graph, its producer and metadata.
type Model struct {
	Graph           *Graph
	ProducerName    string
	ProducerVersion string
	Doc             string
	// Metadata becomes the model's metadata_props, in the given order.
	Metadata [][2]string
}

// Marshal encodes the model as an ONNX file (a serialised ModelProto of IR
// version 8 importing the default operator set at Opset).
func (m *Model) Marshal() []byte {
	var e enc
	e.int64(modelIRVersion, irVersion)
	e.string(modelProducerName, m.ProducerName)
	e.string(modelProducerVer, m.ProducerVersion)
	if m.Doc != "" {
		e.string(modelDocString, m.Doc)
	}
	e.message(modelGraph, m.Graph.encode())
	var op enc
	op.string(opsetDomain, "")
	op.int64(opsetVersion, Opset)
	e.message(modelOpsetImport, &op)
	for _, kv := range m.Metadata {
		var p enc
		p.string(entryKey, kv[0])
		p.string(entryValue, kv[1])
		e.message(modelMetadataProps, &p)
	}
	return e.b
}
