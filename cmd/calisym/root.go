package main

import (
	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "calisym",
		Short: "Learn exactly symplectic dynamics of real robots and predict them live",
		Long: `calisym implements CaLiSym: a robot's state and ports (torques, thrusts,
contact forces) are embedded in a lifted canonical phase space, an exactly
symplectic map (GR-/GRB-SympNet) advances them, and the prediction is
projected back. Start with 'calisym demo'.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newInspectCmd())
	addCommands(root)
	return root
}
