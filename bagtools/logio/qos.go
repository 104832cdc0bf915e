package logio

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// QoSInfinite is the infinite QoS duration (RMW_DURATION_INFINITE), which
// rosbag2 writes as sec 9223372036, nsec 854775807.
const QoSInfinite = time.Duration(math.MaxInt64)

// QoSProfile is the quality of service a topic's publisher offered, as
// rosbag2 records it in the offered_qos_profiles metadata of each channel;
// `ros2 bag play` publishes with it. Policies are rmw's names:
//
//	History      "keep_last", "keep_all", "system_default", "unknown"
//	Reliability  "reliable", "best_effort", "system_default", "best_available", "unknown"
//	Durability   "volatile", "transient_local", "system_default", "best_available", "unknown"
//	Liveliness   "automatic", "manual_by_topic", "system_default", "best_available", "unknown"
//
// Durations are QoSInfinite, 0 (unspecified) or a finite duration.
type QoSProfile struct {
	// History is the history policy.
	History string
	// Depth is the history depth for "keep_last".
	Depth int
	// Reliability is the reliability policy.
	Reliability string
	// Durability is the durability policy.
	Durability string
	// Deadline is the expected maximum period between messages.
	Deadline time.Duration
	// Lifespan is the age after which messages are dropped.
	Lifespan time.Duration
	// Liveliness is the liveliness policy.
	Liveliness string
	// LivelinessLeaseDuration is the liveliness lease.
	LivelinessLeaseDuration time.Duration
	// AvoidROSNamespaceConventions is rmw's flag of the same name.
	AvoidROSNamespaceConventions bool
}

// DefaultQoS returns the profile of a default ROS 2 publisher as rosbag2
// records it: keep last 10, reliable, volatile, infinite deadline, lifespan
// and lease, automatic liveliness.
func DefaultQoS() QoSProfile {
	return QoSProfile{
		History: "keep_last", Depth: 10, Reliability: "reliable", Durability: "volatile",
		Deadline: QoSInfinite, Lifespan: QoSInfinite, Liveliness: "automatic", LivelinessLeaseDuration: QoSInfinite,
	}
}

// policy returns the YAML value of a QoS policy: its name, or for numeric
// (rosbag2 metadata version 8 and older) its rmw enumeration value.
func policy(kind, name string, numeric bool) (string, error) {
	var names []string // the rmw enumeration, in the order of its values
	switch kind {
	case "history":
		names = []string{"system_default", "keep_last", "keep_all", "unknown"}
	case "reliability":
		names = []string{"system_default", "reliable", "best_effort", "unknown", "best_available"}
	case "durability":
		names = []string{"system_default", "transient_local", "volatile", "unknown", "best_available"}
	case "liveliness":
		names = []string{"system_default", "automatic", "manual_by_node", "manual_by_topic", "unknown", "best_available"}
	}
	for i, n := range names {
		if n == name {
			if numeric {
				return strconv.Itoa(i), nil
			}
			return n, nil
		}
	}
	return "", fmt.Errorf("logio: QoS %s policy %q: want one of %s", kind, name, strings.Join(names, ", "))
}

// qosDuration writes a duration as rosbag2 does: sec and nsec.
func qosDuration(b *strings.Builder, key string, d time.Duration) {
	sec, nsec := int64(d/time.Second), int64(d%time.Second)
	if d < 0 {
		sec, nsec = 0, 0
	}
	fmt.Fprintf(b, "  %s:\n    sec: %d\n    nsec: %d\n", key, sec, nsec)
}

// FormatQoSProfiles returns the offered_qos_profiles YAML of profiles in
// the layout rosbag2 writes (yaml-cpp's block style, no trailing newline).
// With numeric, policies are written as rmw enumeration values, as rosbag2
// does before Jazzy; otherwise by name, as Jazzy and later do.
func FormatQoSProfiles(profiles []QoSProfile, numeric bool) (string, error) {
	if len(profiles) == 0 {
		return "[]", nil
	}
	var b strings.Builder
	for _, p := range profiles {
		history, err := policy("history", p.History, numeric)
		if err != nil {
			return "", err
		}
		reliability, err := policy("reliability", p.Reliability, numeric)
		if err != nil {
			return "", err
		}
		durability, err := policy("durability", p.Durability, numeric)
		if err != nil {
			return "", err
		}
		liveliness, err := policy("liveliness", p.Liveliness, numeric)
		if err != nil {
			return "", err
		}
		if p.Depth < 0 {
			return "", fmt.Errorf("logio: QoS depth %d is negative", p.Depth)
		}
		fmt.Fprintf(&b, "- history: %s\n  depth: %d\n  reliability: %s\n  durability: %s\n", history, p.Depth, reliability, durability)
		qosDuration(&b, "deadline", p.Deadline)
		qosDuration(&b, "lifespan", p.Lifespan)
		fmt.Fprintf(&b, "  liveliness: %s\n", liveliness)
		qosDuration(&b, "liveliness_lease_duration", p.LivelinessLeaseDuration)
		fmt.Fprintf(&b, "  avoid_ros_namespace_conventions: %t\n", p.AvoidROSNamespaceConventions)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
