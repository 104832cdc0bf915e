package node

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/calisym/calisym/msgs"
)

// The node's diagnostics: the status of the prediction, of each input
// and of the port forecast as a DiagnosticArray, published periodically
// and on a change of status once it has held for DiagnosticsSettle: a
// status that changes and changes back within it (an input stale for a
// moment until its late message comes, a state and its command arriving
// together) publishes nothing, and the messages of one instant publish
// one DiagnosticArray with their common status, not one each.

// DiagnosticsBurst bounds the diagnostics a node publishes in any
// diagnostics period: a change of status is published DiagnosticsSettle
// after it unless DiagnosticsBurst diagnostics went out in the last
// period, and then as soon as the oldest of them is a period old, so that
// a status that changes with every message (a log played again from its
// start, every message out of order) does not flood the topic.
const DiagnosticsBurst = 10

// DiagnosticsSettle is how long a change of status must hold before it is
// published [ns] (a tenth of the diagnostics period where that is
// shorter): the time a late message of a 100 Hz input may take.
const DiagnosticsSettle = 10_000_000

// noteStatus notes the status at time now: a change from the last
// published status becomes due once it has held for DiagnosticsSettle
// (and the burst limit allows); a status changed back is no change.
func (nd *Node) noteStatus(now int64) {
	nd.key = nd.statusKey(nd.key[:0], now)
	if bytes.Equal(nd.key, nd.lastDiag) {
		nd.changeDue = math.MaxInt64
		return
	}
	if nd.changeDue != math.MaxInt64 {
		return // a change pending since earlier
	}
	period := nanos(nd.cfg.DiagnosticsPeriod)
	due := now + min(DiagnosticsSettle, period/10)
	if nd.npub >= DiagnosticsBurst {
		due = max(due, nd.pubTimes[nd.npub%DiagnosticsBurst]+period)
	}
	nd.changeDue = due
}

// maybeDiagnostics publishes the diagnostics when they are due: a
// period after the last, or a change of status that has held (noteStatus).
func (nd *Node) maybeDiagnostics(now int64) error {
	nd.noteStatus(now)
	if now < nd.nextDiag && now < nd.changeDue {
		return nil
	}
	nd.nextDiag, nd.changeDue = now+nanos(nd.cfg.DiagnosticsPeriod), math.MaxInt64
	nd.lastDiag = append(nd.lastDiag[:0], nd.key...)
	nd.pubTimes[nd.npub%DiagnosticsBurst] = now
	nd.npub++
	return nd.publishDiagnostics(now)
}

// statusKey summarises the status levels and kinds, so that a change is
// published at once; it appends the key to dst.
func (nd *Node) statusKey(dst []byte, now int64) []byte {
	dst = append(dst, nd.predState...)
	for _, in := range nd.inputs {
		_, k, _ := in.state(now)
		dst = append(append(dst, '|'), k...)
	}
	return append(append(dst, '|'), nd.plan.reject...)
}

// Diagnostic status names.
const (
	// StatusPrediction names the prediction's DiagnosticStatus.
	StatusPrediction = "calisym: prediction"
	// StatusInputPrefix starts the name of each input's DiagnosticStatus,
	// followed by the topic.
	StatusInputPrefix = "calisym: input "
	// StatusPortForecast names the port forecast's DiagnosticStatus.
	StatusPortForecast = "calisym: port forecast"
)

// publishDiagnostics publishes one DiagnosticArray.
func (nd *Node) publishDiagnostics(now int64) error {
	topic := nd.cfg.Outputs.Diagnostics
	if topic == "-" {
		return nil
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	p50, p99 := nd.latencyPercentiles()
	pred := msgs.DiagnosticStatus{Name: StatusPrediction, HardwareID: nd.params.Robot, Level: nd.predLevel, Message: nd.predStatus,
		Values: []msgs.KeyValue{
			{Key: "predictions", Value: u(nd.stats.Predictions)},
			{Key: "suppressed", Value: u(nd.stats.Suppressed)},
			{Key: "coalesced", Value: u(nd.stats.Coalesced)},
			{Key: "latency_last_ms", Value: f(float64(nd.stats.LastLatency) / 1e6)},
			{Key: "latency_p50_ms", Value: f(p50 / 1e6)},
			{Key: "latency_p99_ms", Value: f(p99 / 1e6)},
			{Key: "horizon", Value: strconv.Itoa(nd.h)},
			{Key: "dt_s", Value: f(nd.dt)},
			{Key: "model_id", Value: nd.modelID},
			{Key: "model_sha256", Value: nd.sha},
		}}
	if nd.prior != nil {
		pred.Values = append(pred.Values, msgs.KeyValue{Key: "physics_prior", Value: string(nd.prior.Spec().Kind)})
	}
	if nd.modelWarning != "" {
		pred.Values = append(pred.Values, msgs.KeyValue{Key: "model_warning", Value: nd.modelWarning})
	}
	if h := nd.hist; h != nil {
		pred.Values = append(pred.Values,
			msgs.KeyValue{Key: "port_history_samples", Value: strconv.Itoa(h.past.Held())},
			msgs.KeyValue{Key: "port_history_restarts", Value: u(nd.stats.HistoryRestarts)})
	}
	if nd.force != nil && nd.force.force != nil {
		pred.Values = append(pred.Values,
			msgs.KeyValue{Key: "force_estimate_residuals", Value: strconv.Itoa(nd.force.est.Residuals())},
			msgs.KeyValue{Key: "force_estimate_N", Value: f(nd.forceNewtons())},
			msgs.KeyValue{Key: "force_estimate_restarts", Value: u(nd.stats.ForceRestarts)})
	}
	if nd.force != nil && nd.force.wrench != nil {
		force, torque, gate := nd.wrenchOdom()
		vec := func(v ...float64) string {
			parts := make([]string, len(v))
			for i, x := range v {
				parts[i] = f(x)
			}
			return strings.Join(parts, " ")
		}
		pred.Values = append(pred.Values,
			msgs.KeyValue{Key: "wrench_estimate_residuals", Value: strconv.Itoa(nd.force.est.Residuals())},
			msgs.KeyValue{Key: "wrench_force_N", Value: vec(force[0], force[1], force[2])},
			msgs.KeyValue{Key: "wrench_torque_Nm", Value: vec(torque[0], torque[1], torque[2])},
			msgs.KeyValue{Key: "wrench_confidence", Value: vec(gate[:]...)},
			msgs.KeyValue{Key: "wrench_frame", Value: nd.cfg.FrameID},
			msgs.KeyValue{Key: "wrench_estimate_restarts", Value: u(nd.stats.ForceRestarts)})
	}
	if nd.cfg.Trigger.Kind == TriggerMessage && !nd.trigger.feeds {
		pred.Values = append(pred.Values,
			msgs.KeyValue{Key: "trigger_waits", Value: u(nd.stats.PairWaits)},
			msgs.KeyValue{Key: "trigger_unpaired", Value: u(nd.stats.Unpaired)})
	}
	if pred.Message == "" {
		pred.Message = "predicting"
		if nd.stats.Predictions == 0 {
			pred.Message = "waiting for inputs"
		}
	}
	arr := msgs.DiagnosticArray{Header: msgs.Header{Stamp: msgs.TimeFromNanos(now)}, Status: []msgs.DiagnosticStatus{pred}}
	for _, in := range nd.inputs {
		level, _, msg := in.state(now)
		age := "inf"
		if in.have {
			age = f(float64(now-in.last) / 1e9)
		}
		c := in.counts
		arr.Status = append(arr.Status, msgs.DiagnosticStatus{Name: StatusInputPrefix + in.cfg.Topic, HardwareID: nd.params.Robot, Level: level, Message: msg,
			Values: []msgs.KeyValue{
				{Key: "type", Value: in.typ.Type},
				{Key: "age_s", Value: age},
				{Key: "max_age_s", Value: f(float64(in.maxAge) / 1e9)},
				{Key: "rate_hz", Value: f(in.rateHz())},
				{Key: "stale_after_s", Value: f(float64(in.staleAfter()) / 1e9)},
				{Key: "received", Value: u(c.Received)},
				{Key: "accepted", Value: u(c.Accepted)},
				{Key: "rejected_nan", Value: u(c.RejectedNaN)},
				{Key: "rejected_mismatch", Value: u(c.RejectedMismatch)},
				{Key: "rejected_decode", Value: u(c.RejectedDecode)},
				{Key: "out_of_order", Value: u(c.OutOfOrder)},
				{Key: "duplicates", Value: u(c.Duplicates)},
				{Key: "dropped", Value: u(in.dropped.Load())},
				{Key: "lost", Value: u(c.Lost)},
			}})
	}
	if nd.plan.topic != "" {
		st := msgs.DiagnosticStatus{Name: StatusPortForecast, HardwareID: nd.params.Robot, Level: msgs.DiagnosticOK, Message: "following " + nd.plan.topic}
		age := "inf"
		switch {
		case nd.plan.reject != "":
			st.Level, st.Message = msgs.DiagnosticError, nd.plan.reject
		case !nd.plan.have:
			st.Level, st.Message = msgs.DiagnosticWarn, "no port trajectory yet: holding the latest ports"
		case now-nd.plan.stamp > nd.plan.maxAge:
			st.Level, st.Message = msgs.DiagnosticWarn, "port trajectory stale: holding the latest ports"
		}
		if nd.plan.have {
			age = f(float64(now-nd.plan.stamp) / 1e9)
		}
		st.Values = []msgs.KeyValue{{Key: "age_s", Value: age}, {Key: "received", Value: u(nd.plan.received)},
			{Key: "rejected", Value: u(nd.plan.rejected)}, {Key: "dropped", Value: u(nd.plan.dropped.Load())},
			{Key: "fallbacks", Value: u(nd.stats.ForecastFallbacks)}, {Key: "steps", Value: strconv.Itoa(nd.plan.rows)}}
		arr.Status = append(arr.Status, st)
	}
	nd.stats.Diagnostics++
	if err := nd.pub.Publish(topic, now, msgs.Marshal(&arr)); err != nil {
		return fmt.Errorf("node: publish %s: %w", topic, err)
	}
	return nil
}

// latencyPercentiles returns the median and 99th percentile of the
// latencies of the last predictions [ns].
func (nd *Node) latencyPercentiles() (p50, p99 float64) {
	n := min(nd.nlat, len(nd.latency))
	if n == 0 {
		return 0, 0
	}
	l := slices.Clone(nd.latency[:n])
	slices.Sort(l)
	return float64(l[(n-1)/2]), float64(l[min(n-1, int(math.Ceil(0.99*float64(n)))-1)])
}
