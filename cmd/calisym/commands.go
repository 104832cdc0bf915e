package main

import "github.com/spf13/cobra"

// addCommands registers the commands beyond inspect.
func addCommands(root *cobra.Command) {
	root.AddCommand(newDemoCmd(), newSimCmd(), newTrainCmd(), newEvalCmd(), newBenchCmd(), newConvertCmd(), newTopicsCmd())
	root.AddCommand(newReplayCmd(), newNodeCmd(), newExportCmd(), newMPCCmd())
}
