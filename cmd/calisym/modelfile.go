package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/trainer"
)

// openModel opens a model file as trainer.OpenModel does and prints its
// warning, if any (a file written before calisym added checksums, whose
// weights cannot be verified), on the command's stderr as
// "calisym CMD: warning: …". Every command that loads a model file
// (eval, inspect, replay, node) opens it through here.
func openModel(cmd *cobra.Command, path string) (*trainer.SavedModel, error) {
	sv, err := trainer.OpenModel(path)
	if err != nil {
		return nil, err
	}
	if sv.Warning != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: warning: %s\n", cmd.CommandPath(), sv.Warning)
	}
	return sv, nil
}
