package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/calisym/calisym/predictor"
)

// wrenchFlagHelp describes eval's and bench's --wrench.
const wrenchFlagHelp = "the wrench estimate's window, gate, and optionally decay and blocks (\"400,3\", \"400,3,1,8\")"

// parseWrench reads a wrench estimate's "window,gate[,decay[,blocks]]"
// ("400,3" or "400,3,1,8"); decay and blocks take their defaults (1, 8)
// when left out.
func parseWrench(s string) (*predictor.WrenchEstimate, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 2 || len(parts) > 4 {
		return nil, fmt.Errorf("%q: want window,gate[,decay[,blocks]] (400,3 or 400,3,1,8)", s)
	}
	var we predictor.WrenchEstimate
	var err error
	if we.Window, err = strconv.Atoi(strings.TrimSpace(parts[0])); err != nil {
		return nil, fmt.Errorf("%q: window: %w", s, err)
	}
	if we.Gate, err = strconv.ParseFloat(strings.TrimSpace(parts[1]), 64); err != nil {
		return nil, fmt.Errorf("%q: gate: %w", s, err)
	}
	if len(parts) > 2 {
		if we.Decay, err = strconv.ParseFloat(strings.TrimSpace(parts[2]), 64); err != nil {
			return nil, fmt.Errorf("%q: decay: %w", s, err)
		}
		if we.Decay == 0 {
			return nil, fmt.Errorf("%q: decay 0: want a factor in (0, 1]", s)
		}
	}
	if len(parts) > 3 {
		if we.Blocks, err = strconv.Atoi(strings.TrimSpace(parts[3])); err != nil {
			return nil, fmt.Errorf("%q: blocks: %w", s, err)
		}
	}
	if we.Window == 0 || we.Gate == 0 || we.Blocks == 0 && len(parts) > 3 {
		return nil, fmt.Errorf("%q: window, gate and blocks must be given, not 0", s)
	}
	we.Defaults()
	if err := we.Check(); err != nil {
		return nil, err
	}
	return &we, nil
}
