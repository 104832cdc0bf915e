package node

import (
	"fmt"
	"math"
	"strconv"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
)

// The prediction path: the triggers (messages, the timer), the rollout
// from the latest inputs over the port forecast, and the publication of
// the prediction, the predicted joint states and the base path.

// Tick lets time pass: it predicts when a timer trigger is due and
// publishes the periodic diagnostics. The first Tick (or Handle)
// publishes the robot description and the static frames. Run calls it on its timer; a replay
// calls it before each message with the message's time on the node's
// clock already advanced.
func (nd *Node) Tick() error {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	now := nd.now()
	if err := nd.publishLatched(now); err != nil {
		return err
	}
	if err := nd.pairTimeout(now); err != nil {
		return err
	}
	if nd.cfg.Trigger.Kind == TriggerTimer {
		period := int64(1e9 / nd.cfg.Trigger.Rate)
		if nd.nextTick == math.MinInt64 {
			nd.nextTick = now
		}
		if now >= nd.nextTick {
			// Missed ticks are not made up: one prediction from the latest inputs.
			nd.nextTick += period * ((now-nd.nextTick)/period + 1)
			if nd.counted() {
				if err := nd.predict(now, now); err != nil {
					return err
				}
			}
		}
	}
	return nd.maybeDiagnostics(now)
}

// isTrigger reports whether an accepted message of in is a trigger: a
// message on the trigger topic (TriggerMessage), or a state message
// (TriggerOnState) at least one period of Trigger.Rate, less half the
// state's measured period, after the state the last prediction started
// from (each state message without a rate). With TriggerOnState the
// prediction's publication time is then this message's stamp.
func (nd *Node) isTrigger(in *input) bool {
	switch nd.cfg.Trigger.Kind {
	case TriggerMessage:
		return in == nd.trigger
	case TriggerOnState:
		if !in.feeds {
			return false
		}
		if r := nd.cfg.Trigger.Rate; r > 0 && nd.onState.have {
			if nd.stateStamp()-nd.onState.last < int64(1e9/r)-nd.statePeriod()/2 {
				return false
			}
		}
		nd.trigger = in
		return true
	}
	return false
}

// counted counts a trigger and reports whether it is one that predicts:
// every Trigger.Every-th, from the first.
func (nd *Node) counted() bool {
	nd.triggers++
	return (nd.triggers-1)%uint64(max(nd.cfg.Trigger.Every, 1)) == 0
}

// NextTick returns when Tick next has something to do, on the node's
// clock: the next timer trigger or periodic diagnostics.
func (nd *Node) NextTick() int64 {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	next := min(nd.nextDiag, nd.changeDue, nd.pairDue())
	if nd.cfg.Trigger.Kind == TriggerTimer && nd.nextTick != math.MinInt64 && nd.nextTick < next {
		next = nd.nextTick
	}
	return next
}

// predict makes and publishes one prediction from the latest inputs, or
// records why it cannot.
func (nd *Node) predict(now, received int64) error {
	if why, level := nd.stale(now); why != "" {
		nd.suppress(level, "stale", "no prediction: "+why)
		return nil
	}
	if why := nd.warmingUp(); why != "" {
		nd.suppress(msgs.DiagnosticWarn, "warmup", why)
		return nil
	}
	pose, err := nd.sampler.Sample(nd.values, nd.x, nd.em)
	if err != nil {
		nd.suppress(msgs.DiagnosticError, "sample", "no prediction: "+err.Error())
		return nil
	}
	nd.modelPorts(nd.em, nd.e)
	if nd.loop == nil {
		nd.forecast(now)
	}
	if err := nd.rollout(); err != nil {
		nd.suppress(msgs.DiagnosticError, "rollout", "no prediction: "+err.Error())
		return nil
	}
	stamp := nd.trigger.last // the prediction's publication time
	start := nd.stateStamp()
	n := nd.n
	for k := range nd.h {
		copy(nd.traj.Q[k*n:(k+1)*n], nd.out[k*2*n:k*2*n+n])
		copy(nd.traj.P[k*n:(k+1)*n], nd.out[k*2*n+n:(k+1)*2*n])
	}
	nd.traj.Header.Stamp = msgs.TimeFromNanos(start)
	nd.traj.InferenceLatencyS = float64(nd.now()-received) / 1e9
	o := nd.cfg.Outputs
	if o.Prediction != "-" {
		nd.buf = nd.enc.Append(nd.buf[:0], &nd.traj)
		if err := nd.pub.Publish(o.Prediction, stamp, nd.buf); err != nil {
			return fmt.Errorf("node: publish %s: %w", o.Prediction, err)
		}
	}
	stepNs := nanos(nd.dt)
	if o.Joints != "-" && nd.nj > 0 {
		k := nd.cfg.PreviewStep - 1
		copy(nd.js.Position, nd.traj.Q[k*n+n-nd.nj:(k+1)*n])
		t := start + int64(k+1)*stepNs
		nd.js.Header.Stamp = msgs.TimeFromNanos(t)
		nd.buf = nd.enc.Append(nd.buf[:0], &nd.js)
		if err := nd.pub.Publish(o.Joints, stamp, nd.buf); err != nil {
			return fmt.Errorf("node: publish %s: %w", o.Joints, err)
		}
	}
	if o.Path != "-" && nd.sampler.Floating() {
		nd.path.Header.Stamp = msgs.TimeFromNanos(start)
		setPose(&nd.path.Poses[0], pose, start)
		for k := range nd.h {
			setPose(&nd.path.Poses[k+1], nd.sampler.BasePose(pose, nd.traj.Q[k*n:k*n+6]), start+int64(k+1)*stepNs)
		}
		nd.buf = nd.enc.Append(nd.buf[:0], &nd.path)
		if err := nd.pub.Publish(o.Path, stamp, nd.buf); err != nil {
			return fmt.Errorf("node: publish %s: %w", o.Path, err)
		}
	}
	if err := nd.publishGhost(stamp, pose); err != nil {
		return err
	}
	nd.stats.Predictions++
	nd.onState.last, nd.onState.have = start, true
	lat := nd.now() - received
	nd.stats.LastLatency = lat
	nd.latency[nd.nlat%len(nd.latency)] = lat
	nd.nlat++
	nd.predStatus, nd.predLevel, nd.predState = "", msgs.DiagnosticOK, ""
	return nil
}

// warmingUp returns why the model's inputs do not exist yet ("" when
// they do): with a port history, the means need the samples before the
// current one, so the node predicts only once the history holds all of
// them (convert.history.port_mean), after its start and after each
// restart (a lost sample). The offset-free force estimate needs no
// warm-up: it averages the residuals it has.
func (nd *Node) warmingUp() string {
	h := nd.hist
	if h == nil {
		return ""
	}
	m := nd.params.Spec.History.PortMean
	if held := h.past.Held(); held < m {
		return "warming up: " + strconv.Itoa(held) + " of " + strconv.Itoa(m) + " samples of the port history"
	}
	return ""
}

// stateStamp returns the stamp of the state a prediction starts from: the
// newest stamp of the inputs that carry state channels (joints, base), or
// the trigger's when none does. The trigger may be another topic (the
// pendulum's torque commands, stamped on receipt), whose stamp is not the
// state's.
func (nd *Node) stateStamp() int64 {
	t, found := int64(math.MinInt64), false
	for _, in := range nd.inputs {
		if in.feeds && in.have && in.last > t {
			t, found = in.last, true
		}
	}
	if !found {
		return nd.trigger.last
	}
	return t
}

func setPose(ps *msgs.PoseStamped, T mechanics.SE3, stamp int64) {
	ps.Header.Stamp = msgs.TimeFromNanos(stamp)
	ps.Pose.Position = msgs.Point{X: T.P[0], Y: T.P[1], Z: T.P[2]}
	q := mechanics.QuatFromRotation(T.R)
	ps.Pose.Orientation = msgs.Quaternion{X: q.X, Y: q.Y, Z: q.Z, W: q.W}
}

func (nd *Node) suppress(level uint8, state, msg string) {
	nd.stats.Suppressed++
	nd.predStatus, nd.predLevel, nd.predState = msg, level, state
}

// forecast fills the ports of every step: the measured ports of the
// planner's trajectory or the latest held and, with a port history, the
// means of each step over the observed samples and the forecast steps
// before it.
func (nd *Node) forecast(now int64) {
	ne, nm := nd.ne, nd.nm
	if ne == 0 {
		return
	}
	usePlan := nd.plan.topic != "" && nd.plan.have && now-nd.plan.stamp <= nd.plan.maxAge
	if nd.plan.topic != "" && !usePlan {
		nd.stats.ForecastFallbacks++
	}
	h := nd.hist
	if h != nil {
		h.fc.CopyFrom(h.past)
	}
	for k := range nd.h {
		meas := nd.em
		if usePlan {
			r := min(k, nd.plan.rows-1)
			meas = nd.plan.data[r*nm : (r+1)*nm]
		}
		row := nd.ports[k*ne : (k+1)*ne]
		if h == nil {
			copy(row, meas)
			continue
		}
		h.fc.Ports(meas, row)
		h.fc.Push(meas)
	}
}
