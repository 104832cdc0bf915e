package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/predictor/kernel"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer"
)

// inspectReport is what `calisym inspect --json` prints.
type inspectReport struct {
	Source                 string             `json:"source"`
	Kind                   predictor.Kind     `json:"kind"`
	Arch                   string             `json:"arch"`
	Layout                 predictor.Layout   `json:"layout"`
	LiftedDim              int                `json:"lifted_dim"`
	Layers                 int                `json:"layers"`
	Width                  int                `json:"width"`
	Params                 int                `json:"params"`
	PaperParams            int                `json:"paper_params,omitempty"`
	FLOPsPerStep           int                `json:"flops_per_step"`
	FLOPsPerStepFused      int                `json:"flops_per_step_fused"`
	PaperFLOPs             float64            `json:"paper_flops,omitempty"`
	FLOPs                  predictor.FLOPs    `json:"flops"`
	SymplecticResidualMean float64            `json:"symplectic_residual_mean"`
	SymplecticResidualMax  float64            `json:"symplectic_residual_max"`
	ResidualStates         int                `json:"residual_states"`
	Meta                   predictor.Metadata `json:"meta,omitzero"`
	// ChecksumVerified is set for a model file: whether its checksums
	// were present and matched.
	ChecksumVerified *bool `json:"checksum_verified,omitempty"`
	// Kernels is the kernel set the predictor runs on this machine
	// (kernel.Selection), which every timing depends on.
	Kernels string `json:"kernels"`
}

// mlpInspectReport is what `calisym inspect --json` prints for an MLP
// baseline.
type mlpInspectReport struct {
	Source           string   `json:"source"`
	Kind             string   `json:"kind"`
	StateDim         int      `json:"state_dim"`
	PortDim          int      `json:"port_dim"`
	Hidden           []int    `json:"hidden"`
	Params           int      `json:"params"`
	FLOPsPerStep     int      `json:"flops_per_step"`
	Coordinates      []string `json:"coordinates,omitempty"`
	Ports            []string `json:"ports,omitempty"`
	ChecksumVerified bool     `json:"checksum_verified"`
	// PortMap is how the ports of the model's training data were computed
	// (statemap.PortMap; "" where the file does not record it).
	PortMap string `json:"port_map,omitempty"`
}

func newInspectCmd() *cobra.Command {
	var preset, arch, save string
	var asJSON bool
	var states int
	var seed uint64
	var lay predictor.Layout
	cmd := &cobra.Command{
		Use:   "inspect [MODEL]",
		Short: "Describe a model file, a preset or an architecture on a robot's layout",
		Long: `Prints the lifted layout, the parameter count, FLOPs per rollout step and
the symplecticity residual ε_J (mean and max over random lifted states) of a
model file (for an MLP baseline, .json: its dimensions, hidden widths,
parameters and FLOPs per step), or of an architecture with random parameters:

  --preset NAME             a preset on its own system's layout (pendulum, quadrotor, quadruped)
  --arch NAME|DESC --n N    a preset's or described architecture on a robot with N
                            configuration coordinates, --nu control values (default N)
                            and --nc contact values (default 0), e.g.
                            calisym inspect --arch gr:14x36 --n 7 --nc 6

An architecture description is ` + predictor.ArchGrammar + ` (see 'calisym train --help'
and "Choosing an architecture" in docs/training.md).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var m *predictor.Model
			rep := inspectReport{Kernels: kernel.Selection()}
			fl := cmd.Flags()
			layoutGiven := fl.Changed("n") || fl.Changed("nu") || fl.Changed("nc")
			if !fl.Changed("nu") {
				lay.NU = lay.N
			}
			switch {
			case preset != "" && arch != "":
				return fmt.Errorf("give --preset or --arch, not both (--arch PRESET with --n takes a preset to another layout)")
			case save != "" && preset == "" && arch == "":
				return fmt.Errorf("--save writes a freshly initialised --preset or --arch")
			case len(args) == 1 && (preset != "" || arch != "" || layoutGiven):
				return fmt.Errorf("give a model file or --preset/--arch, not both")
			case len(args) == 1:
				sv, err := openModel(cmd, args[0])
				if err != nil {
					return err
				}
				if sv.Net != nil {
					return inspectMLP(cmd.OutOrStdout(), sv, asJSON)
				}
				m = sv.Model
				rep.Source = args[0]
				rep.ChecksumVerified = &sv.ChecksumVerified
			case preset != "" && layoutGiven:
				return fmt.Errorf("--preset %s has its own layout; for another one use --arch %s with --n, --nu, --nc", preset, preset)
			case preset != "" || arch != "":
				name := preset + arch
				a, p, err := predictor.ResolveArch(name)
				if err != nil {
					return err
				}
				switch {
				case p != nil && !layoutGiven:
					lay = p.Layout
					rep.Source = "preset:" + p.Name
					rep.PaperParams, rep.PaperFLOPs = p.PaperParams, p.PaperFLOPs
				case !layoutGiven:
					return fmt.Errorf("--arch %s needs the robot's layout: --n (configuration coordinates; --nu, control values, defaults to n; --nc, contact values, to 0)", name)
				default:
					if err := lay.Validate(); err != nil {
						return fmt.Errorf("--n %d --nu %d --nc %d: %w", lay.N, lay.NU, lay.NC, err)
					}
					rep.Source = fmt.Sprintf("arch:%s n=%d n_u=%d n_c=%d", name, lay.N, lay.NU, lay.NC)
				}
				if m, err = predictor.New(lay, a, rand.New(rand.NewPCG(seed, 1))); err != nil {
					return err
				}
				if save != "" {
					m.Meta.Name = rep.Source + " (untrained)"
					if p != nil && !layoutGiven {
						m.Meta.Name = "preset " + p.Name + " (untrained)"
					}
					if err := m.Save(save); err != nil {
						return err
					}
				}
			default:
				return fmt.Errorf("give a model file, --preset NAME (one of %v) or --arch NAME|%s with --n", predictor.PresetNames(), predictor.ArchGrammar)
			}
			if states < 1 {
				return fmt.Errorf("--states must be ≥ 1")
			}
			fillInspect(&rep, m, states, seed)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printInspect(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&preset, "preset", "", "inspect a freshly initialised preset on its own layout instead of a file")
	f.StringVar(&arch, "arch", "", "inspect a freshly initialised architecture: a preset name or "+predictor.ArchGrammar)
	f.IntVar(&lay.N, "n", 0, "with --arch: configuration coordinates n of the robot")
	f.IntVar(&lay.NU, "nu", 0, "with --arch: control values n_u (default: n)")
	f.IntVar(&lay.NC, "nc", 0, "with --arch: contact values n_c")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.StringVar(&save, "save", "", "with --preset or --arch: also write the initialised model to this file")
	f.IntVar(&states, "states", 300, "random lifted states for the ε_J statistics")
	f.Uint64Var(&seed, "seed", 1, "seed for the initialised parameters and the random states")
	return cmd
}

// inspectMLP describes an MLP baseline.
func inspectMLP(w io.Writer, sv *trainer.SavedModel, asJSON bool) error {
	c := sv.Net.Config()
	rep := mlpInspectReport{Source: sv.Path, Kind: sv.Kind, StateDim: c.StateDim, PortDim: c.PortDim, Hidden: c.Hidden,
		Params: sv.Params, FLOPsPerStep: sv.Net.FLOPs(), Coordinates: sv.Coordinates, Ports: sv.Ports, ChecksumVerified: sv.ChecksumVerified,
		PortMap: sv.PortMap}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "source\t%s\n", rep.Source)
	fmt.Fprintf(tw, "architecture\tMLP baseline, tanh hidden layers %v, residual one-step prediction\n", rep.Hidden)
	fmt.Fprintf(tw, "state, ports\t%d, %d\n", rep.StateDim, rep.PortDim)
	fmt.Fprintf(tw, "parameters\t%d\n", rep.Params)
	fmt.Fprintf(tw, "FLOPs/step\t%d\n", rep.FLOPsPerStep)
	fmt.Fprintf(tw, "symplectic\tno (not by construction; calisym bench reports its ε_J over data)\n")
	if len(rep.Coordinates) > 0 {
		fmt.Fprintf(tw, "coordinates\t%v\n", rep.Coordinates)
	}
	if len(rep.Ports) > 0 {
		fmt.Fprintf(tw, "ports\t%v\n", rep.Ports)
	}
	fmt.Fprintf(tw, "port map\t%s\n", portMapLine(rep.PortMap))
	return tw.Flush()
}

// portMapLine describes a model file's recorded port map for inspect.
func portMapLine(pm string) string {
	if pm == "" {
		return "none recorded (written before calisym recorded it: the node serves it with a warning; retrain to record it)"
	}
	return pm
}

func fillInspect(rep *inspectReport, m *predictor.Model, states int, seed uint64) {
	f := m.CountFLOPs()
	rep.Kind, rep.Layout, rep.LiftedDim = m.Arch.Kind, m.Layout, m.Layout.Dim()
	rep.Layers, rep.Width, rep.Params = m.Arch.Layers, m.Arch.Width, m.NumParams()
	if d, ok := m.Arch.Description(); ok {
		rep.Arch = d
	}
	rep.FLOPs, rep.FLOPsPerStep, rep.FLOPsPerStepFused = f, f.Total(), f.TotalFused()
	rep.Meta = m.Meta
	rng := rand.New(rand.NewPCG(seed, 2))
	zs := make([][]float64, states)
	for i := range zs {
		z := make([]float64, m.Layout.Dim())
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		zs[i] = z
	}
	rep.ResidualStates = states
	rep.SymplecticResidualMean, rep.SymplecticResidualMax, _ = m.ResidualStats(zs)
}

func printInspect(w io.Writer, r inspectReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "source\t%s\n", r.Source)
	fmt.Fprintf(tw, "architecture\t%s, %d layers, width %d%s\n", archName(r.Kind), r.Layers, r.Width, archNote(r.Arch))
	fmt.Fprintf(tw, "layout\t%s\n", r.Layout)
	fmt.Fprintf(tw, "parameters\t%d%s\n", r.Params, paperNote(float64(r.Params), float64(r.PaperParams)))
	fmt.Fprintf(tw, "FLOPs/step\t%d (lift %d + map %d + projection %d)%s\n", r.FLOPsPerStep, r.FLOPs.Lift, r.FLOPs.Map, r.FLOPs.Project, paperNote(float64(r.FLOPsPerStep), r.PaperFLOPs))
	fmt.Fprintf(tw, "FLOPs/step fused\t%d (what the compiled rollout executes)\n", r.FLOPsPerStepFused)
	fmt.Fprintf(tw, "ε_J mean / max\t%.2e / %.2e over %d random lifted states\n", r.SymplecticResidualMean, r.SymplecticResidualMax, r.ResidualStates)
	fmt.Fprintf(tw, "kernels\t%s\n", r.Kernels)
	if r.Meta.Name != "" {
		fmt.Fprintf(tw, "name\t%s\n", r.Meta.Name)
	}
	if r.ChecksumVerified != nil {
		sum := "verified (SHA-256 of the tensors and the description)"
		if !*r.ChecksumVerified {
			sum = "none: written before calisym added checksums, loaded unverified"
		}
		fmt.Fprintf(tw, "checksum\t%s\n", sum)
		// a file: how its training data's ports were computed
		fmt.Fprintf(tw, "port map\t%s\n", portMapLine(r.Meta.Provenance[statemap.PortMapKey]))
	}
	for k, v := range r.Meta.Metrics {
		fmt.Fprintf(tw, "metric %s\t%.6g\n", k, v)
	}
	tw.Flush()
}

func archName(k predictor.Kind) string {
	if k == predictor.KindGRB {
		return "GRB-SympNet"
	}
	return "GR-SympNet"
}

func archNote(desc string) string {
	if desc == "" {
		return ""
	}
	return "  (--arch " + desc + ")"
}

func paperNote(v, paper float64) string {
	if paper == 0 {
		return ""
	}
	return fmt.Sprintf("  (paper %.0f, %+.1f%%)", paper, 100*(v-paper)/paper)
}
