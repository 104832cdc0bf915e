package convert

import (
	"github.com/calisym/calisym/bagtools/signal"
	"github.com/calisym/calisym/statemap"
)

// plan is the mapping's plan of scalar inputs (statemap.Plan) with the
// interpolation of the port channels.
type plan struct {
	*statemap.Plan
	portMode signal.Interp // control
	contMode signal.Interp // contact
}

// newPlan returns the mapping's plan p of spec s with its ports'
// interpolation.
func newPlan(s *Spec, p *statemap.Plan) *plan {
	return &plan{Plan: p, portMode: interpOf(s.Control.Interp), contMode: interpOf(s.Contact.Interp)}
}

func interpOf(s string) signal.Interp {
	if s == statemap.InterpHold {
		return signal.Hold
	}
	return signal.Linear
}
