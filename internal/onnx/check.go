package onnx

import (
	"errors"
	"fmt"
)

// ErrInvalid wraps every problem Model.Check finds.
var ErrInvalid = errors.New("onnx: invalid model")

// Check validates the model as onnx.checker.check_model does for what this
// package writes: metadata_props keys unique; in every graph, value names
// assigned once (inputs, initializers, node outputs, the main graph's and
// its bodies' together), every node input defined before the node (an
// input, an initializer, an earlier node's output, or, in a Loop body,
// one of the enclosing graph's values defined before the Loop), every
// output produced; initializers holding as many values as their shape
// says; every declared dimension positive or named.
func (m *Model) Check() error {
	seen := map[string]bool{}
	for _, kv := range m.Metadata {
		if seen[kv[0]] {
			return fmt.Errorf("%w: metadata_props has the key %q twice", ErrInvalid, kv[0])
		}
		seen[kv[0]] = true
	}
	if m.Graph == nil {
		return fmt.Errorf("%w: no graph", ErrInvalid)
	}
	return m.Graph.check(map[string]bool{}, map[string]bool{})
}

// check validates g: outer holds the values visible from an enclosing
// graph, assigned every name assigned so far in the model.
func (g *Graph) check(outer, assigned map[string]bool) error {
	defined := make(map[string]bool, len(outer))
	for n := range outer {
		defined[n] = true
	}
	assign := func(name, what string) error {
		if name == "" {
			return fmt.Errorf("%w: graph %s: %s without a name", ErrInvalid, g.Name, what)
		}
		if assigned[name] {
			return fmt.Errorf("%w: graph %s: %s %q is assigned twice", ErrInvalid, g.Name, what, name)
		}
		assigned[name], defined[name] = true, true
		return nil
	}
	for _, v := range g.inputs {
		if err := assign(v.Name, "input"); err != nil {
			return err
		}
		if err := checkDims(g.Name, v); err != nil {
			return err
		}
	}
	for _, in := range g.inits {
		if err := assign(in.name, "initializer"); err != nil {
			return err
		}
		size := 8
		if in.typ == typeFloat {
			size = 4
		}
		n := int64(1)
		for _, d := range in.dims {
			if d < 0 {
				return fmt.Errorf("%w: graph %s: initializer %s has the dimension %d", ErrInvalid, g.Name, in.name, d)
			}
			n *= d
		}
		if int64(len(in.bytes)) != n*int64(size) {
			return fmt.Errorf("%w: graph %s: initializer %s of shape %v holds %d bytes, want %d", ErrInvalid, g.Name, in.name, in.dims, len(in.bytes), n*int64(size))
		}
	}
	for _, nd := range g.nodes {
		for _, in := range nd.inputs {
			if in != "" && !defined[in] {
				return fmt.Errorf("%w: graph %s: node %s (%s) reads %q, which is not defined before it", ErrInvalid, g.Name, nd.name, nd.op, in)
			}
		}
		for _, a := range nd.attrs {
			if a.Graph != nil {
				if err := a.Graph.check(defined, assigned); err != nil {
					return err
				}
			}
		}
		for _, out := range nd.outputs {
			if err := assign(out, "node output"); err != nil {
				return err
			}
		}
	}
	outs := map[string]bool{}
	for _, v := range g.outputs {
		if outs[v.Name] {
			return fmt.Errorf("%w: graph %s: output %q is declared twice", ErrInvalid, g.Name, v.Name)
		}
		outs[v.Name] = true
		if !defined[v.Name] {
			return fmt.Errorf("%w: graph %s: output %q is not produced", ErrInvalid, g.Name, v.Name)
		}
		if err := checkDims(g.Name, v); err != nil {
			return err
		}
	}
	return nil
}

// checkDims refuses a declared dimension that is neither positive nor
// named.
func checkDims(graph string, v Value) error {
	for i, d := range v.Shape {
		if d.Param == "" && d.Value < 1 {
			return fmt.Errorf("%w: graph %s: %s has dimension %d of size %d", ErrInvalid, graph, v.Name, i, d.Value)
		}
	}
	return nil
}
