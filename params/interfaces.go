// Package params carries what the robots' params files in this directory
// share with the binary: the .msg definitions of their third-party
// message types (interfaces/, see interfaces/README.md), embedded, so that
// the predictor node finds them for a params file copied out of the
// repository (node.definitions: interfaces, resolved beside the copy,
// where there is no such directory).
package params

import (
	"embed"
	"io/fs"
)

//go:embed interfaces
var interfaces embed.FS

// Interfaces returns the definitions laid out as ROS installs them:
// <package>/msg/<Type>.msg.
func Interfaces() fs.FS {
	sub, err := fs.Sub(interfaces, "interfaces")
	if err != nil {
		panic(err) // the embedded directory exists: go:embed checked it
	}
	return sub
}
