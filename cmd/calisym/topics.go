package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/bagtools/logio"
)

// topicJSON is one topic of `calisym topics --json`.
type topicJSON struct {
	Topic     string  `json:"topic"`
	Type      string  `json:"type"`
	Encoding  string  `json:"encoding"`
	Count     uint64  `json:"count"`
	RateHz    float64 `json:"rate_hz"`
	DurationS float64 `json:"duration_s"`
	First     string  `json:"first,omitempty"`
	Last      string  `json:"last,omitempty"`
}

func newTopicsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "topics LOG",
		Short: "List the topics of an MCAP file or ROS 1 bag: types, message counts, rates",
		Long: `topics reads a message log (MCAP or ROS 1 bag v2.0, chosen by its magic
bytes) from start to end and lists every topic with its message type,
encoding, message count, mean rate and time span (log times). A log that
was cut short is summarised up to the damage, with a warning on stderr.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			infos, err := logio.Summarize(args[0], nil)
			if err != nil && !(errors.Is(err, logio.ErrTruncated) && infos != nil) {
				return namedErr(args[0], err)
			}
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v\n", namedErr(args[0], err))
			}
			w := cmd.OutOrStdout()
			if asJSON {
				out := make([]topicJSON, len(infos))
				for i, t := range infos {
					out[i] = topicJSON{Topic: t.Topic, Type: t.Type, Encoding: t.Encoding, Count: t.Count, RateHz: t.RateHz, DurationS: t.Duration()}
					if t.Count > 0 {
						out[i].First, out[i].Last = stampString(t.First), stampString(t.Last)
					}
				}
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			var total uint64
			var first, last uint64
			for _, t := range infos {
				if t.Count == 0 {
					continue
				}
				if total == 0 || t.First < first {
					first = t.First
				}
				last = max(last, t.Last)
				total += t.Count
			}
			fmt.Fprintf(w, "%s: %d messages on %d topics", args[0], total, len(infos))
			if total > 0 {
				fmt.Fprintf(w, ", %.3f s from %s", float64(last-first)/1e9, stampString(first))
			}
			fmt.Fprintln(w)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TOPIC\tTYPE\tENCODING\tCOUNT\tRATE Hz\tSPAN s")
			for _, t := range infos {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%.3f\n", t.Topic, t.Type, t.Encoding, t.Count, t.RateHz, t.Duration())
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

// namedErr names the file path in err where err does not already (a
// corrupt record deep in a log: "mcap: record 102 near offset 14296: …").
func namedErr(path string, err error) error {
	if err == nil || strings.Contains(err.Error(), path) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// stampString formats a log time (ns since the Unix epoch) in UTC.
func stampString(ns uint64) string {
	return time.Unix(0, int64(ns)).UTC().Format("2006-01-02T15:04:05.000000000Z")
}
