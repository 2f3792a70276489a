package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
)

// suitesJSON is the committed list of the GPU-tier suites: every suite
// gpuaccept must find, with the least number of GPU-gated top-level tests
// each must hold. `gpuaccept -census bin/*.test`, run anywhere, counts them.
//
//go:embed suites.json
var suitesJSON []byte

// expectation is one suite of the list.
type expectation struct {
	// Name is the binary's name without ".test" (make gpu-bins: the package
	// path with "/" spelled "-", "rayd" for the root package).
	Name string `json:"name"`
	// Package is the package directory, as in the Makefile's GPU_PKGS.
	Package string `json:"package"`
	// MinGPU is the least number of top-level tests gated on one device:
	// each must run and pass on any GPU machine.
	MinGPU int `json:"min_gpu_tests"`
	// MinMulti is the least number of top-level tests gated on two or more
	// devices: each must pass where the devices are, and is deferred where
	// they are not.
	MinMulti int `json:"min_multi_gpu_tests"`
}

type expectations struct {
	Comment string        `json:"comment"`
	Suites  []expectation `json:"suites"`
}

var errBadList = errors.New("gpuaccept: bad suite list")

// loadExpectations decodes and checks a suite list.
func loadExpectations(b []byte) (*expectations, error) {
	var e expectations
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadList, err)
	}
	if len(e.Suites) == 0 {
		return nil, fmt.Errorf("%w: no suites", errBadList)
	}
	seen := map[string]bool{}
	for _, s := range e.Suites {
		switch {
		case s.Name == "" || s.Package == "":
			return nil, fmt.Errorf("%w: a suite without a name or package: %+v", errBadList, s)
		case seen[s.Name]:
			return nil, fmt.Errorf("%w: suite %s listed twice", errBadList, s.Name)
		case s.MinGPU < 0 || s.MinMulti < 0 || s.MinGPU+s.MinMulti == 0:
			return nil, fmt.Errorf("%w: suite %s must expect at least one GPU-gated test", errBadList, s.Name)
		}
		seen[s.Name] = true
	}
	return &e, nil
}

func (e *expectations) find(name string) (expectation, bool) {
	for _, s := range e.Suites {
		if s.Name == name {
			return s, true
		}
	}
	return expectation{}, false
}
