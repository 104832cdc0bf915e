package experiment

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// NanoPaperSource says where NanoPaper's numbers come from.
const NanoPaperSource = "idsia-robotics/nanodrone-sysid-benchmark, results/model_comparison.ipynb " +
	"(commit d2b5f8ac, run 2026-02-16): the LaTeX table tab:numerical_performance it prints, " +
	"trained on the square, random and chirp (multisine) flights and scored on the Melon flights; " +
	"the paper (arXiv 2512.14450 v1, December 2025) reports the same table, whose printed numbers " +
	"may differ from this later run"

// NanoPaper holds the benchmark's table (NanoPaperSource): per model, per
// output group (NanoGroups), the mean error at h = 1, 10, 50 and the sum
// over h = 1 … 50.
var NanoPaper = []struct {
	Model  string
	Values [4][4]float64
}{
	{"naive", [4][4]float64{{0.0143, 0.1430, 0.6797, 17.7878}, {0.0329, 0.3182, 1.4749, 38.9241}, {0.0071, 0.0692, 0.3041, 8.2138}, {0.0796, 0.3596, 0.8837, 29.0866}}},
	{"physics", [4][4]float64{{0.0013, 0.0126, 0.1269, 2.3223}, {0.0080, 0.0570, 0.5781, 10.6232}, {0.0011, 0.0205, 0.2544, 5.1013}, {0.0796, 0.3596, 0.8837, 29.0866}}},
	{"feedforward", [4][4]float64{{0.0032, 0.0305, 0.1712, 4.0519}, {0.0116, 0.0890, 0.5720, 12.5809}, {0.0022, 0.0331, 0.2268, 6.0591}, {0.1138, 0.5949, 0.9005, 35.5735}}},
	{"physics+residual", [4][4]float64{{0.0016, 0.0166, 0.1119, 2.3625}, {0.0092, 0.0613, 0.5556, 10.4033}, {0.0027, 0.0376, 0.2306, 6.1534}, {0.0912, 0.4880, 0.5979, 28.9873}}},
	{"lstm", [4][4]float64{{0.0079, 0.0390, 0.2572, 5.9711}, {0.0247, 0.1175, 0.7407, 16.7207}, {0.0066, 0.0372, 0.2325, 5.6525}, {0.1021, 0.4292, 1.2407, 35.8353}}},
}

// NanoResult is the metric of one model of one system over its runs
// (training seeds): pooled over the flights (Pooled) and per flight.
type NanoResult struct {
	System, Model string
	// Runs are the run directories (one per seed); empty for a model that
	// is not trained (the state held constant).
	Runs []string
	// Pooled[r] is run r's metric over all flights' start samples;
	// PerFlight[r][f] its metric on flight f.
	Pooled    []NanoMetric
	PerFlight [][]NanoMetric
}

// NanoRecord is one number of the JSON record of the metric.
type NanoRecord struct {
	// System is the params' system (RealCrazyflieGravity, RealCrazyflie)
	// or "paper" (NanoPaper).
	System string `json:"system"`
	// Model is "calisym", "mlp" or "hold" (the paper's: NanoPaper's).
	Model string `json:"model"`
	// Flight is "all" for the start samples of every flight together, or
	// one flight's file name.
	Flight string `json:"flight"`
	// Output is a NanoGroups name and Unit its unit.
	Output string `json:"output"`
	Unit   string `json:"unit"`
	// Horizon is "1", "10", "50" or "sum_1_50".
	Horizon string `json:"horizon"`
	// Mean, Min and Max are over the runs (seeds).
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	// Runs is the number of runs (0 for the paper's).
	Runs int `json:"runs"`
}

// nanoCells returns the four reported values of group g: h = 1, 10, 50
// and the sum.
func nanoCells(m NanoMetric, g int) [4]float64 {
	var c [4]float64
	for i, h := range NanoReportHorizons {
		c[i] = m.At(g, h)
	}
	c[3] = m.Sum(g)
	return c
}

var nanoHorizonKeys = [4]string{"1", "10", "50", "sum_1_50"}

// nanoStats returns the mean, min and max of vs.
func nanoStats(vs []float64) (mean, lo, hi float64) {
	lo, hi = vs[0], vs[0]
	for _, v := range vs {
		mean += v
		lo, hi = min(lo, v), max(hi, v)
	}
	return mean / float64(len(vs)), lo, hi
}

// NanoRecords returns the records of the results (pooled and per flight,
// flights named by flightNames) and of the paper's table.
func NanoRecords(results []NanoResult, flightNames []string) []NanoRecord {
	var out []NanoRecord
	add := func(r NanoResult, flight string, ms []NanoMetric) {
		for g := range NanoGroups {
			for i, key := range nanoHorizonKeys {
				vs := make([]float64, len(ms))
				for k, m := range ms {
					vs[k] = nanoCells(m, g)[i]
				}
				mean, lo, hi := nanoStats(vs)
				out = append(out, NanoRecord{System: r.System, Model: r.Model, Flight: flight, Output: NanoGroups[g], Unit: NanoUnits[g],
					Horizon: key, Mean: mean, Min: lo, Max: hi, Runs: len(r.Runs)})
			}
		}
	}
	for _, r := range results {
		add(r, "all", r.Pooled)
		for f, name := range flightNames {
			ms := make([]NanoMetric, len(r.PerFlight))
			for k := range r.PerFlight {
				ms[k] = r.PerFlight[k][f]
			}
			add(r, filepath.Base(name), ms)
		}
	}
	for _, p := range NanoPaper {
		for g := range NanoGroups {
			for i, key := range nanoHorizonKeys {
				v := p.Values[g][i]
				out = append(out, NanoRecord{System: "paper", Model: p.Model, Flight: "melon", Output: NanoGroups[g], Unit: NanoUnits[g],
					Horizon: key, Mean: v, Min: v, Max: v})
			}
		}
	}
	return out
}

// nanoNum formats a metric value.
func nanoNum(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// NanoMarkdown renders the pooled results beside the paper's table: a row
// per output group and horizon, a column per system and model (mean over
// the runs, [min, max] where there are several) and per model of the
// paper.
func NanoMarkdown(results []NanoResult) string {
	var b strings.Builder
	b.WriteString("| output | h |")
	sep := "|---|---|"
	for _, r := range results {
		fmt.Fprintf(&b, " %s `%s` |", r.Model, r.System)
		sep += "---:|"
	}
	for _, p := range NanoPaper {
		fmt.Fprintf(&b, " paper: %s |", p.Model)
		sep += "---:|"
	}
	b.WriteString("\n" + sep + "\n")
	for g, name := range NanoGroups {
		for i, key := range nanoHorizonKeys {
			h := key
			if i == 3 {
				h = "Σ 1…50"
			}
			fmt.Fprintf(&b, "| %s [%s] | %s |", strings.ReplaceAll(name, "_", " "), NanoUnits[g], h)
			for _, r := range results {
				vs := make([]float64, len(r.Pooled))
				for k, m := range r.Pooled {
					vs[k] = nanoCells(m, g)[i]
				}
				mean, lo, hi := nanoStats(vs)
				if len(vs) > 1 {
					fmt.Fprintf(&b, " %s [%s, %s] |", nanoNum(mean), nanoNum(lo), nanoNum(hi))
				} else {
					fmt.Fprintf(&b, " %s |", nanoNum(mean))
				}
			}
			for _, p := range NanoPaper {
				fmt.Fprintf(&b, " %s |", nanoNum(p.Values[g][i]))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// NanoStarts returns the number of start samples of the first result's
// first run per flight and in all.
func NanoStarts(r NanoResult) (per []int, all int) {
	if len(r.PerFlight) == 0 {
		return nil, 0
	}
	for _, m := range r.PerFlight[0] {
		per = append(per, m.Starts)
	}
	return per, r.Pooled[0].Starts
}

// sortedRuns expands the glob patterns into sorted run directories.
func sortedRuns(patterns []string) ([]string, error) {
	var out []string
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("experiment: %q: %w", p, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("experiment: %q matches no run directory", p)
		}
		out = append(out, m...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
