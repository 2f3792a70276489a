package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheCommittedSuiteListIsValid(t *testing.T) {
	e, err := loadExpectations(suitesJSON)
	require.NoError(t, err)
	for _, s := range e.Suites {
		want := "./" + strings.ReplaceAll(s.Name, "-", "/")
		if s.Name == "rayd" {
			want = "."
		}
		assert.Equal(t, want, s.Package, "make gpu-bins names bin/%s.test after its package", s.Name)
	}
	_, ok := e.find("benchmarks-dist-allreduce")
	assert.True(t, ok, "the allreduce benchmark's 2-GPU test is a suite")
}

// TestTheMakefileBuildsEveryListedSuite: GPU_PKGS, the packages make
// gpu-bins builds, are exactly the list's.
func TestTheMakefileBuildsEveryListedSuite(t *testing.T) {
	b, err := os.ReadFile("../../../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^GPU_PKGS\s*:=\s*(.*)$`).FindSubmatch(b)
	require.NotNil(t, m, "GPU_PKGS in the Makefile")
	e, err := loadExpectations(suitesJSON)
	require.NoError(t, err)
	var pkgs []string
	for _, s := range e.Suites {
		pkgs = append(pkgs, s.Package)
	}
	assert.ElementsMatch(t, pkgs, strings.Fields(string(m[1])))
}

func TestBadSuiteListsAreRefused(t *testing.T) {
	for name, js := range map[string]string{
		"not json": `{`,
		"empty":    `{"suites": []}`,
		"no name":  `{"suites": [{"package": ".", "min_gpu_tests": 1}]}`,
		"twice":    `{"suites": [{"name": "a", "package": "./a", "min_gpu_tests": 1}, {"name": "a", "package": "./a", "min_gpu_tests": 1}]}`,
		"no gpu":   `{"suites": [{"name": "a", "package": "./a"}]}`,
		"negative": `{"suites": [{"name": "a", "package": "./a", "min_gpu_tests": -1, "min_multi_gpu_tests": 2}]}`,
	} {
		_, err := loadExpectations([]byte(js))
		assert.ErrorIs(t, err, errBadList, name)
	}
}
