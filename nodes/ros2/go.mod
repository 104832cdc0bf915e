module github.com/calisym/calisym/nodes/ros2

go 1.26.8

require (
	github.com/calisym/calisym v0.0.0
	github.com/tiiuae/rclgo v0.0.0-20260225085354-508dd42245da
)

// The predictor node, its codecs and its mapping are the main module's,
// tested there; this module only adds the rclgo transport.
replace github.com/calisym/calisym => ../..
