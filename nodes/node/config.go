package node

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/nodes/tfview"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// ErrConfig wraps every problem found in the "node:" section of a params
// file.
var ErrConfig = errors.New("node: invalid config")

// ConfigKey is the key of the node's section in a params YAML file.
const ConfigKey = "node"

// Trigger kinds.
const (
	// TriggerMessage predicts once per message on the trigger topic.
	TriggerMessage = "message"
	// TriggerTimer predicts at a fixed rate from the latest inputs.
	TriggerTimer = "timer"
	// TriggerOnState predicts when the state arrives: on each accepted
	// message of an input that carries state channels, or, with a rate,
	// on the first of them at least one period (less half the input's
	// measured period) after the state the last prediction started from.
	// A prediction then starts from the newest state at once, where a
	// timer makes it wait up to one period.
	TriggerOnState = "on_state"
)

// Port forecasts.
const (
	// ForecastHold holds the latest ports over the whole horizon.
	ForecastHold = "hold"
	// ForecastTopic takes the ports of each step from a port trajectory a
	// planner publishes (std_msgs/Float64MultiArray), holding its last row
	// beyond its end, and falls back to ForecastHold when it is missing or
	// stale.
	ForecastTopic = "topic"
	// ForecastLearned rolls the learned port forecast (Ports.Forecaster,
	// forecast.Learned) out with the model: the next measured ports from
	// the predicted state, the first state and the first ports.
	ForecastLearned = "learned"
)

// Stamp sources of an input.
const (
	// StampHeader uses the message's header.stamp.
	StampHeader = "header"
	// StampReceive uses the time the node received the message.
	StampReceive = "receive"
)

// Config is the "node:" section of a params file: how the predictor node
// reads its inputs, when it predicts and what it publishes. The mapping
// from input fields to the state and ports is the "convert:" section, the
// one the dataset conversion uses.
type Config struct {
	// Model is the model file (relative to the params file unless
	// absolute); the command line may override it.
	Model string `yaml:"model"`
	// ModelID names the model in predictions (default: the model's
	// metadata name, else the file's base name).
	ModelID string `yaml:"model_id"`
	// Horizon is the number of predicted steps (default 100).
	Horizon int `yaml:"horizon"`
	// FrameID is the frame of the predicted base path (default "odom").
	FrameID string `yaml:"frame_id"`
	// Topics lists every input topic with its type. Every topic the
	// convert section's message paths name must be here.
	Topics []TopicConfig `yaml:"topics"`
	// Channels maps the convert section's channel names (table columns of
	// the training logs) to the message paths they are read from live;
	// see statemap.SamplerOptions.
	Channels []ChannelMap `yaml:"channels"`
	// MaxAge is the default age [s] beyond which an input is stale and no
	// prediction is made (default 0.1); an input is stale only when it is
	// also older than StalePeriods of its own measured period.
	MaxAge float64 `yaml:"max_age"`
	// StalePeriods makes the stale limit of each input follow its
	// measured rate: an input is stale when its newest message is older
	// than max_age and than StalePeriods times its measured period (the median
	// interval between its stamps; default 3), so that a message late by up to two periods
	// neither suppresses a prediction nor restarts the input history, at
	// 100 Hz as at 400 Hz, while an input that stopped is stale within
	// max_age or three periods.
	StalePeriods float64 `yaml:"stale_periods"`
	// HistoryTolerance [s] is how far from one model step dt a state sample
	// may be from the last observed one and still continue the input
	// history (port history, force estimate); a larger gap is a lost
	// sample and restarts it. Default 0: the larger of dt/4 and half the
	// state input's measured period. It must be below dt/2.
	HistoryTolerance float64 `yaml:"history_tolerance"`
	// Trigger says when to predict.
	Trigger TriggerConfig `yaml:"trigger"`
	// Ports says which ports to assume over the horizon.
	Ports PortsConfig `yaml:"ports"`
	// Outputs names the published topics.
	Outputs OutputsConfig `yaml:"outputs"`
	// PreviewStep is the step (1…Horizon) whose predicted joint positions
	// are published as a JointState (default: Horizon).
	PreviewStep int `yaml:"preview_step"`
	// DiagnosticsPeriod is the period [s] of the diagnostics (default 1);
	// a change of status is published at once.
	DiagnosticsPeriod float64 `yaml:"diagnostics_period"`
	// Definitions is a directory of .msg files (Definitions.Dir) for input
	// types msgs does not know, relative to the params file unless
	// absolute.
	Definitions string `yaml:"definitions"`
	// Queue bounds the messages waiting for the live node; beyond it the
	// oldest is dropped and counted (default 64).
	Queue int `yaml:"queue"`
	// TF says how the robot description and the frames of the measured
	// and the predicted robot are published (package nodes/tfview).
	TF tfview.Config `yaml:"tf"`
	// ForceEstimate, when set, makes the predictions offset-free
	// (predictor.ForceEstimator): the model's one-step momentum residuals
	// over the last window samples estimate a force no input carries (a
	// push, a payload), added to the predicted momenta and fading by decay
	// per step. It needs a state sample every dt (a trigger at the model's
	// rate): samples further apart restart the estimate. Off by default:
	// on the simulated ANYmal's ID-test logs it raised the long-horizon
	// model's error at 5 steps by a third (README, lever 5).
	ForceEstimate *predictor.ForceEstimate `yaml:"force_estimate"`
	// WrenchEstimate, when set, makes the predictions offset-free by an
	// external wrench on the floating base (predictor.WrenchEstimator):
	// the model's one-step residuals of the six base momenta over the last
	// window samples, in a world frame, kept per component as far as
	// their mean stands out of its standard error (gate), translate the
	// predicted base momenta. Fed as force_estimate is; the two exclude
	// each other, and it needs a floating base. Off by default: its
	// effect on the benchmark is not measured yet (docs/benchmarks.md).
	WrenchEstimate *predictor.WrenchEstimate `yaml:"wrench_estimate"`
}

// TopicConfig is one input topic.
type TopicConfig struct {
	// Topic is the topic name.
	Topic string `yaml:"topic"`
	// Type is the message type, "pkg/msg/Type".
	Type string `yaml:"type"`
	// Stamp is StampHeader or StampReceive (default: header where the type
	// has a std_msgs/Header field "header", else receive).
	Stamp string `yaml:"stamp"`
	// MaxAge overrides Config.MaxAge for this topic [s].
	MaxAge float64 `yaml:"max_age"`
}

// ChannelMap maps one channel of the convert section to a live channel.
type ChannelMap struct {
	// From is the channel name in the convert section.
	From string `yaml:"from"`
	// Channel is the live channel: a message path with an optional unit,
	// scale and offset that turn its value into the logged quantity.
	statemap.Channel `yaml:",inline"`
}

// UnmarshalYAML reads a channel map: from, and the live channel's keys.
func (m *ChannelMap) UnmarshalYAML(n *yaml.Node) error {
	var from struct {
		From string `yaml:"from"`
	}
	if err := n.Decode(&from); err != nil {
		return err
	}
	rest := *n
	rest.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != "from" {
			rest.Content = append(rest.Content, n.Content[i], n.Content[i+1])
		}
	}
	m.From = from.From
	return rest.Decode(&m.Channel)
}

// TriggerConfig says when the node predicts.
type TriggerConfig struct {
	// Kind is TriggerMessage (default), TriggerTimer or TriggerOnState.
	Kind string `yaml:"kind"`
	// Topic is the trigger topic of TriggerMessage (default: the first of
	// Topics); TriggerOnState takes none. A prediction's header.stamp is
	// not the trigger's but the stamp of the state it starts from: the
	// newest stamp of the inputs that carry state channels.
	Topic string `yaml:"topic"`
	// Rate is the rate of TriggerTimer [Hz], and the most predictions per
	// second of the state's stamps for TriggerOnState (0: one per state
	// message), which lets a 400 Hz estimator drive predictions at 100 Hz
	// while a 100 Hz one drives one per message.
	Rate float64 `yaml:"rate"`
	// Every makes a prediction on every Every-th trigger (an accepted
	// trigger message, a timer tick) and lets the others pass (0 or 1, the
	// default: on each). A replay written to a file, or a viewer that needs fewer
	// predictions than the inputs' rate, sets it (replay and node --every).
	Every int `yaml:"every"`
}

// PortsConfig says which ports the rollout assumes.
type PortsConfig struct {
	// Forecast is ForecastHold (default), ForecastLearned or
	// ForecastTopic.
	Forecast string `yaml:"forecast"`
	// Forecaster is the forecaster file of ForecastLearned (relative to
	// the params file's directory; default: MODEL.forecaster.json beside
	// the model file; the node's --forecaster overrides it).
	Forecaster string `yaml:"forecaster"`
	// Topic is the port trajectory topic of ForecastTopic
	// (std_msgs/msg/Float64MultiArray, steps × measured ports row-major:
	// the mapping's ports without the port history's means, which the
	// node builds from the trajectory and its observed samples).
	Topic string `yaml:"topic"`
	// MaxAge is the age [s] beyond which the port trajectory is ignored
	// (default Config.MaxAge).
	MaxAge float64 `yaml:"max_age"`
}

// OutputsConfig names the published topics; an empty name (after
// defaults, "-") publishes nothing there.
type OutputsConfig struct {
	// Prediction is the calisym/msg/PredictedTrajectory topic (default
	// "/calisym/prediction").
	Prediction string `yaml:"prediction"`
	// Joints is the sensor_msgs/msg/JointState of the predicted joint
	// positions at PreviewStep (default "/calisym/predicted_joint_states").
	Joints string `yaml:"joints"`
	// Path is the nav_msgs/msg/Path of the predicted base poses, floating
	// bases only (default "/calisym/predicted_path").
	Path string `yaml:"path"`
	// Diagnostics is the diagnostic_msgs/msg/DiagnosticArray topic
	// (default "/diagnostics").
	Diagnostics string `yaml:"diagnostics"`
}

// Params is what the node reads from a params file: the mapping and the
// few other keys of its "convert:" section that serving needs, and the
// "node:" section. The rest of the convert section (inputs, filtering,
// windows, splits) belongs to dataset conversion (bagtools/convert), which
// checks it.
type Params struct {
	// Path is the params file.
	Path string
	// Robot is convert.robot, the diagnostics' hardware ID.
	Robot string
	// Spec is the mapping: convert.state, model, control and contact.
	Spec *statemap.Spec
	// Rate is convert.resample.rate [Hz], the rate the model was trained
	// at.
	Rate float64
	// MaxQuatNormError is convert.validate.max_quat_norm_error.
	MaxQuatNormError float64
	// Node is the "node:" section.
	Node *Config
}

// paramsFile is the layout of a params file as the node decodes it:
// the mapping's sections and the node section strictly, the rest of the
// convert section and other top-level keys left to their owners.
type paramsFile struct {
	Convert *struct {
		statemap.Spec `yaml:",inline"`
		Robot         string               `yaml:"robot"`
		Resample      yaml.Node            `yaml:"resample"`
		Validate      yaml.Node            `yaml:"validate"`
		Rest          map[string]yaml.Node `yaml:",inline"`
	} `yaml:"convert"`
	Node *Config              `yaml:"node"`
	Rest map[string]yaml.Node `yaml:",inline"`
}

// LoadParams reads the mapping (statemap.Spec) and the rate from the
// "convert:" section of the params YAML file at path and its "node:"
// section, rejecting unknown keys in both, fills in defaults and checks
// them (see Config.Check).
func LoadParams(path string) (*Params, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("node: read params %s: %w", path, err)
	}
	var f paramsFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", path, ErrConfig, strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if f.Convert == nil {
		return nil, fmt.Errorf("%s: %w: no %q section", path, statemap.ErrSpec, statemap.SpecKey)
	}
	if f.Node == nil {
		return nil, fmt.Errorf("%s: %w: no %q section", path, ErrConfig, ConfigKey)
	}
	if err := checkExplicitZeros(raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var extra struct {
		Resample struct {
			Rate float64 `yaml:"rate"`
		}
		Validate struct {
			MaxQuatNormError float64 `yaml:"max_quat_norm_error"`
		}
	}
	for _, d := range []struct {
		n   *yaml.Node
		dst any
	}{{&f.Convert.Resample, &extra.Resample}, {&f.Convert.Validate, &extra.Validate}} {
		if d.n.Kind != 0 {
			if err := d.n.Decode(d.dst); err != nil {
				return nil, fmt.Errorf("%s: %w: %w", path, statemap.ErrSpec, err)
			}
		}
	}
	spec := &f.Convert.Spec
	spec.Defaults()
	if err := spec.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r := extra.Resample.Rate; !(r > 0) || math.IsInf(r, 0) {
		return nil, fmt.Errorf("%s: %w", path, statemap.FieldError("resample.rate", "must be positive, got %g", r))
	}
	c := f.Node
	c.Defaults()
	if err := c.Check(spec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if dt := 1 / extra.Resample.Rate; c.HistoryTolerance >= dt/2 {
		return nil, fmt.Errorf("%s: %w", path, configError("history_tolerance", "must be below dt/2 = %g s (convert.resample.rate %g Hz; 0: automatic), got %g", dt/2, extra.Resample.Rate, c.HistoryTolerance))
	}
	return &Params{Path: path, Robot: f.Convert.Robot, Spec: spec, Rate: extra.Resample.Rate,
		MaxQuatNormError: extra.Validate.MaxQuatNormError, Node: c}, nil
}

// Resolve returns path relative to the params file's directory unless it
// is absolute or empty.
func (p *Params) Resolve(path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(filepath.Dir(p.Path), path)
}

// DefinitionsDir returns the params file's definitions directory.
func (p *Params) DefinitionsDir() string { return p.Resolve(p.Node.Definitions) }

// Defaults fills in the defaults of unset fields.
func (c *Config) Defaults() {
	if c.Horizon == 0 {
		c.Horizon = 100
	}
	if c.FrameID == "" {
		c.FrameID = "odom"
	}
	if c.MaxAge == 0 {
		c.MaxAge = 0.1
	}
	if c.StalePeriods == 0 {
		c.StalePeriods = 3
	}
	if c.Trigger.Kind == "" {
		c.Trigger.Kind = TriggerMessage
	}
	if c.Trigger.Topic == "" && len(c.Topics) > 0 && c.Trigger.Kind != TriggerOnState {
		c.Trigger.Topic = c.Topics[0].Topic
	}
	if c.Trigger.Every == 0 {
		c.Trigger.Every = 1
	}
	if c.Ports.Forecast == "" {
		c.Ports.Forecast = ForecastHold
	}
	if c.Ports.MaxAge == 0 {
		c.Ports.MaxAge = c.MaxAge
	}
	o := &c.Outputs
	for _, f := range []struct {
		p   *string
		def string
	}{{&o.Prediction, "/calisym/prediction"}, {&o.Joints, "/calisym/predicted_joint_states"}, {&o.Path, "/calisym/predicted_path"}, {&o.Diagnostics, "/diagnostics"}} {
		if *f.p == "" {
			*f.p = f.def
		}
	}
	if c.PreviewStep == 0 {
		c.PreviewStep = c.Horizon
	}
	if c.DiagnosticsPeriod == 0 {
		c.DiagnosticsPeriod = 1
	}
	c.TF.Defaults()
	if c.ForceEstimate != nil {
		c.ForceEstimate.Defaults()
	}
	if c.WrenchEstimate != nil {
		c.WrenchEstimate.Defaults()
	}
	if c.Queue == 0 {
		c.Queue = 64
	}
}

func configError(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s.%s: %s", ErrConfig, ConfigKey, field, fmt.Sprintf(format, args...))
}

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// SamplerOptions returns the options of the live mapping: the channel
// map (Config.Channels), the quaternion norm check and dataRoot for the
// mechanics model's files.
func (p *Params) SamplerOptions(dataRoot string) statemap.SamplerOptions {
	o := p.Node.SamplerOptions(dataRoot)
	o.MaxQuatNormError = p.MaxQuatNormError
	return o
}

// SamplerOptions returns the options that map the spec's channels to the
// live ones (Channels).
func (c *Config) SamplerOptions(dataRoot string) statemap.SamplerOptions {
	o := statemap.SamplerOptions{DataRoot: dataRoot}
	if len(c.Channels) > 0 {
		o.Channels = make(map[string]statemap.Channel, len(c.Channels))
		for _, m := range c.Channels {
			o.Channels[m.From] = m.Channel
		}
	}
	return o
}

// Topic returns the input topic named name, or nil.
func (c *Config) Topic(name string) *TopicConfig {
	for i := range c.Topics {
		if c.Topics[i].Topic == name {
			return &c.Topics[i]
		}
	}
	return nil
}

// Check validates the config (after Defaults) against spec: values in
// range, every topic the spec's live channels name listed with a type,
// no listed topic unused, the trigger topic an input.
func (c *Config) Check(spec *statemap.Spec) error {
	if err := c.TF.Check(); err != nil {
		return fmt.Errorf("%w: %s.tf: %w", ErrConfig, ConfigKey, err)
	}
	if c.Horizon < 1 || c.Horizon > 100000 {
		return configError("horizon", "must be in [1, 100000], got %d", c.Horizon)
	}
	if c.PreviewStep < 1 || c.PreviewStep > c.Horizon {
		return configError("preview_step", "must be in [1, horizon = %d], got %d", c.Horizon, c.PreviewStep)
	}
	if !positive(c.MaxAge) {
		return configError("max_age", "must be positive, got %g", c.MaxAge)
	}
	if !(c.StalePeriods >= 1) || math.IsInf(c.StalePeriods, 0) {
		return configError("stale_periods", "must be at least 1 (default 3), got %g", c.StalePeriods)
	}
	if !(c.HistoryTolerance >= 0) || math.IsInf(c.HistoryTolerance, 0) {
		return configError("history_tolerance", "must be 0 (automatic) or positive seconds below dt/2, got %g", c.HistoryTolerance)
	}
	if !positive(c.DiagnosticsPeriod) {
		return configError("diagnostics_period", "must be positive, got %g", c.DiagnosticsPeriod)
	}
	if c.ForceEstimate != nil {
		if err := c.ForceEstimate.Check(); err != nil {
			return configError("force_estimate", "%v", err)
		}
	}
	if c.WrenchEstimate != nil {
		if c.ForceEstimate != nil {
			return configError("wrench_estimate", "and force_estimate are both set: choose one")
		}
		if err := c.WrenchEstimate.Check(); err != nil {
			return configError("wrench_estimate", "%v", err)
		}
	}
	if c.Queue < 1 {
		return configError("queue", "must be at least 1, got %d", c.Queue)
	}
	seen := map[string]bool{}
	for i, t := range c.Topics {
		f := fmt.Sprintf("topics[%d]", i)
		if !strings.HasPrefix(t.Topic, "/") {
			return configError(f+".topic", "%q is not an absolute topic name", t.Topic)
		}
		if seen[t.Topic] {
			return configError(f+".topic", "%s is listed twice", t.Topic)
		}
		seen[t.Topic] = true
		if pkg, typ, ok := strings.Cut(rosmsg.NormalizeType(t.Type), "/"); !ok || pkg == "" || typ == "" || strings.Contains(typ, "/") {
			return configError(f+".type", "%q is not a message type pkg/msg/Type", t.Type)
		}
		if t.Stamp != "" && t.Stamp != StampHeader && t.Stamp != StampReceive {
			return configError(f+".stamp", "%q is not %q or %q", t.Stamp, StampHeader, StampReceive)
		}
		if t.MaxAge != 0 && !positive(t.MaxAge) {
			return configError(f+".max_age", "must be positive, got %g", t.MaxAge)
		}
	}
	for i, m := range c.Channels {
		if m.From == "" || m.Name == "" {
			return configError(fmt.Sprintf("channels[%d]", i), "needs from and name")
		}
	}
	names, fields, err := statemap.LiveChannels(spec, c.SamplerOptions(""))
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for i, n := range names {
		topic, err := rosmsg.TopicOf(n)
		if err != nil || topic == "" {
			return configError("channels", "%s reads %q, which is not a message path with a topic; map it to one in node.channels", strings.Join(fields[i], ", "), n)
		}
		if !seen[topic] {
			return configError("topics", "%s reads topic %s, which is not listed (listed: %s)", strings.Join(fields[i], ", "), topic, strings.Join(c.topicNames(), ", "))
		}
		used[topic] = true
	}
	for _, t := range c.Topics {
		if !used[t.Topic] {
			return configError("topics", "%s is listed but no channel reads it", t.Topic)
		}
	}
	switch c.Trigger.Kind {
	case TriggerMessage:
	case TriggerTimer:
		if !positive(c.Trigger.Rate) {
			return configError("trigger.rate", "kind %q needs a positive rate, got %g", TriggerTimer, c.Trigger.Rate)
		}
	case TriggerOnState:
		if r := c.Trigger.Rate; r != 0 && !positive(r) {
			return configError("trigger.rate", "kind %q takes 0 (a prediction per state message) or a positive rate, got %g", TriggerOnState, r)
		}
		if c.Trigger.Topic != "" {
			return configError("trigger.topic", "kind %q predicts on the inputs that carry state channels and takes no topic, got %q (kind %q predicts on one topic)", TriggerOnState, c.Trigger.Topic, TriggerMessage)
		}
	default:
		return configError("trigger.kind", "%q is not %q, %q or %q", c.Trigger.Kind, TriggerMessage, TriggerTimer, TriggerOnState)
	}
	if c.Trigger.Every < 0 {
		return configError("trigger.every", "must be at least 1 (0: the default, 1), got %d", c.Trigger.Every)
	}
	if c.Trigger.Kind != TriggerOnState && !seen[c.Trigger.Topic] {
		return configError("trigger.topic", "%q is not an input topic (inputs: %s)", c.Trigger.Topic, strings.Join(c.topicNames(), ", "))
	}
	switch c.Ports.Forecast {
	case ForecastHold:
	case ForecastLearned:
	case ForecastTopic:
		if !strings.HasPrefix(c.Ports.Topic, "/") || seen[c.Ports.Topic] {
			return configError("ports.topic", "forecast %q needs an absolute topic name that is not an input, got %q", ForecastTopic, c.Ports.Topic)
		}
	default:
		return configError("ports.forecast", "%q is not %q, %q or %q", c.Ports.Forecast, ForecastHold, ForecastLearned, ForecastTopic)
	}
	if !positive(c.Ports.MaxAge) {
		return configError("ports.max_age", "must be positive, got %g", c.Ports.MaxAge)
	}
	outs := []string{c.Outputs.Prediction, c.Outputs.Joints, c.Outputs.Path, c.Outputs.Diagnostics}
	for i, o := range outs {
		if o == "-" {
			continue
		}
		if !strings.HasPrefix(o, "/") || seen[o] || (c.Ports.Forecast == ForecastTopic && o == c.Ports.Topic) || slices.Contains(outs[:i], o) {
			return configError("outputs", "%q must be an absolute topic name used once and not an input", o)
		}
	}
	return nil
}

func (c *Config) topicNames() []string {
	out := make([]string, len(c.Topics))
	for i, t := range c.Topics {
		out[i] = t.Topic
	}
	return out
}

// CheckTopics checks the params against the topics they name: every
// input type's definition is found (msgs' types, then DefinitionsDir),
// and every message path the mapping reads compiles against its topic's
// definition to a number. It reads no log and builds no model.
func (p *Params) CheckTopics() error {
	names, fields, err := statemap.LiveChannels(p.Spec, p.Node.SamplerOptions(""))
	if err != nil {
		return err
	}
	defs := Definitions{Dir: p.DefinitionsDir()}
	for _, t := range p.Node.Topics {
		def, err := defs.Lookup(t.Type)
		if err != nil {
			return fmt.Errorf("%s: topic %s: %w", p.Path, t.Topic, err)
		}
		x, err := rosmsg.CompileExtractor(t.Type, rosmsg.SchemaEncodingROS2Msg, []byte(def), rosmsg.MessageEncodingCDR)
		if err != nil {
			return fmt.Errorf("%s: topic %s (%s): %w", p.Path, t.Topic, t.Type, err)
		}
		for i, n := range names {
			if topic, _ := rosmsg.TopicOf(n); topic == t.Topic {
				path, err := rosmsg.CompilePath(x.Schema(), n)
				if err == nil && !path.Numeric() {
					err = fmt.Errorf("%w: it does not lead to a number", rosmsg.ErrPath)
				}
				if err != nil {
					return fmt.Errorf("%s: %s reads %s: %w", p.Path, strings.Join(fields[i], ", "), n, err)
				}
			}
		}
		if _, err := stampMode(t, x.Schema()); err != nil {
			return fmt.Errorf("%s: topic %s: %w", p.Path, t.Topic, err)
		}
	}
	return nil
}
