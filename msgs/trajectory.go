package msgs

import (
	"fmt"

	"github.com/calisym/calisym/msgs/rosmsg"
)

// PredictedTrajectory is calisym/msg/PredictedTrajectory
// (msg/PredictedTrajectory.msg): a rollout of a calisym model from the state
// observed at Header.Stamp. Row k of Q, P and Ports is the state at
// Header.Stamp + (k+1)·Dt.
type PredictedTrajectory struct {
	// Header stamps the initial state and names the frame of the
	// configuration coordinates.
	Header Header
	// Dt is the time step between rows, in seconds.
	Dt float64
	// CoordinateNames names the n configuration coordinates.
	CoordinateNames []string
	// Horizon is the number of rows H.
	Horizon uint32
	// Q holds the predicted configurations, H×n row-major.
	Q []float64
	// P holds the predicted canonical momenta, H×n row-major.
	P []float64
	// PortNames names the n_e port coordinates (controls, then contact
	// forces).
	PortNames []string
	// Ports holds the port values of each step, H×n_e row-major.
	Ports []float64
	// ModelID identifies the model.
	ModelID string
	// ModelSHA256 is the hexadecimal SHA-256 of the model file.
	ModelSHA256 string
	// InferenceLatencyS is the time from the newest input's arrival to
	// publication, in seconds.
	InferenceLatencyS float64
}

// ROSType returns "calisym/msg/PredictedTrajectory".
func (t *PredictedTrajectory) ROSType() string { return "calisym/msg/PredictedTrajectory" }

// ROSDefinition returns the complete ros2msg definition.
func (t *PredictedTrajectory) ROSDefinition() string {
	return definitionOf("calisym/PredictedTrajectory")
}

// EncodeCDR appends the fields.
func (t *PredictedTrajectory) EncodeCDR(w *rosmsg.CDRWriter) {
	t.Header.EncodeCDR(w)
	w.Float64(t.Dt)
	w.Strings(t.CoordinateNames)
	w.Uint32(t.Horizon)
	w.Float64s(t.Q)
	w.Float64s(t.P)
	w.Strings(t.PortNames)
	w.Float64s(t.Ports)
	w.String(t.ModelID)
	w.String(t.ModelSHA256)
	w.Float64(t.InferenceLatencyS)
}

// DecodeCDR reads the fields.
func (t *PredictedTrajectory) DecodeCDR(r *rosmsg.CDRReader) {
	t.Header.DecodeCDR(r)
	t.Dt = r.Float64()
	t.CoordinateNames = r.Strings()
	t.Horizon = r.Uint32()
	t.Q = r.Float64s()
	t.P = r.Float64s()
	t.PortNames = r.Strings()
	t.Ports = r.Float64s()
	t.ModelID = r.String()
	t.ModelSHA256 = r.String()
	t.InferenceLatencyS = r.Float64()
}

// Validate checks that the arrays have the sizes Horizon and the names
// imply.
func (t *PredictedTrajectory) Validate() error {
	h, n, ne := int(t.Horizon), len(t.CoordinateNames), len(t.PortNames)
	switch {
	case len(t.Q) != h*n:
		return fmt.Errorf("msgs: PredictedTrajectory: q has %d values, want horizon %d × %d coordinates: %w", len(t.Q), h, n, rosmsg.ErrValue)
	case len(t.P) != h*n:
		return fmt.Errorf("msgs: PredictedTrajectory: p has %d values, want horizon %d × %d coordinates: %w", len(t.P), h, n, rosmsg.ErrValue)
	case len(t.Ports) != h*ne:
		return fmt.Errorf("msgs: PredictedTrajectory: ports has %d values, want horizon %d × %d ports: %w", len(t.Ports), h, ne, rosmsg.ErrValue)
	case !(t.Dt > 0):
		return fmt.Errorf("msgs: PredictedTrajectory: dt is %g, want > 0: %w", t.Dt, rosmsg.ErrValue)
	}
	return nil
}

// QAt returns coordinate i of the configuration at step k.
func (t *PredictedTrajectory) QAt(k, i int) float64 { return t.Q[k*len(t.CoordinateNames)+i] }

// PAt returns coordinate i of the momentum at step k.
func (t *PredictedTrajectory) PAt(k, i int) float64 { return t.P[k*len(t.CoordinateNames)+i] }
