module github.com/calisym/calisym/nodes/ros2

go 1.26.0

// rclgo is pinned to the pseudo-version of upstream commit
// 508dd42245daa2f122ce9d35e16d704d84927fa7, whose API main.go uses
// (NewSubscription taking options, PublishSerialized, ReliabilityBestEffort);
// older rclgo (NewSubscriptionWithOpts, RmwQosProfile) does not build it.
require (
	github.com/calisym/calisym v0.0.0
	github.com/tiiuae/rclgo v0.0.0-20260225085354-508dd42245da
)

require (
	github.com/kr/pretty v0.3.1 // indirect
	golang.org/x/sys v0.46.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

// The predictor node, its codecs and its mapping are the main module's,
// tested there; this module only adds the rclgo transport.
replace github.com/calisym/calisym => ../..
