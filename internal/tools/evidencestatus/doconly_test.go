package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSameCodeIgnoresCommentsOnly(t *testing.T) {
	base := []byte("package p\n\n// F doubles.\nfunc F(x int) int { return 2 * x }\n")
	for name, c := range map[string]struct {
		src  string
		same bool
	}{
		"comment reworded":   {"package p\n\n// F returns twice x.\nfunc F(x int) int { return 2 * x } // fast\n", true},
		"layout":             {"package p\n\n// F doubles.\nfunc F(x int) int {\n\treturn 2 * x\n}\n", true},
		"constant changed":   {"package p\n\n// F doubles.\nfunc F(x int) int { return 3 * x }\n", false},
		"name changed":       {"package p\n\n// F doubles.\nfunc F(y int) int { return 2 * y }\n", false},
		"string changed":     {"package p\n\nvar s = \"a\"\n", false},
		"code in a comment":  {"package p\n\n// F doubles.\n/* func G() {} */\nfunc F(x int) int { return 2 * x }\n", true},
		"syntax error":       {"package p\n\nfunc F(x int) int { return 2 * x \"\n", false},
		"line break in code": {"package p\n\n// F doubles.\nfunc F(x int) int { return\n2 * x }\n", false},
	} {
		assert.Equal(t, c.same, sameCode(base, []byte(c.src)), name)
	}
}

// A commit that only rewords comments in GPU code leaves evidence current;
// one that also changes a CUDA source, or any Go token, does not.
func TestCommentOnlyCommitsKeepEvidenceCurrent(t *testing.T) {
	r := newTestRepo(t)
	r.write("accel/a.go", "package accel\n\n// K is 2.\nconst K = 2\n")
	ran := r.commit("code")
	r.evidence("tests/evidence/run.json", ran, false)
	r.commit("evidence")
	r.write("accel/a.go", "package accel\n\n// K is two (measured).\nconst K = 2 // the count\n")
	r.commit("comments")
	out, rc := r.status(true)
	assert.Zero(t, rc, out)
	assert.Contains(t, out, "current  tests/evidence/run.json")

	r.write("ptx/src/k.cu", "// a kernel\n")
	r.commit("a CUDA source")
	out, rc = r.status(true)
	assert.Equal(t, 1, rc, out)
	assert.Contains(t, out, "1 GPU-code commit(s) since")

	r.write("accel/a.go", "package accel\n\n// K is two (measured).\nconst K = 3 // the count\n")
	r.commit("a constant")
	out, _ = r.status(true)
	assert.Contains(t, out, "2 GPU-code commit(s) since")
}
