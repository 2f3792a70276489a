package ref

import (
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

// The generators live in internal/testscene, shared with the GPU tests.
var (
	newRand         = testscene.Rand
	boxMesh         = testscene.Box
	sphereMesh      = testscene.Sphere
	soupMesh        = testscene.Soup
	gridMesh        = testscene.Grid
	randomRays      = testscene.RandomRays
	equalBits       = testscene.EqualBits
	firstDiff       = testscene.FirstDiff
	sameHits        = testscene.SameHits
	sameReflections = testscene.SameReflections
)

// scenes builds a BVH scene and a brute-force scene over the same tables.
func scenes(t *testing.T, meshes ...geom.Mesh) (bvhScene, brute *Scene) {
	t.Helper()
	tb, err := geom.BuildTables(meshes)
	if err != nil {
		t.Fatal(err)
	}
	bvhScene, err = NewScene(tb)
	if err != nil {
		t.Fatal(err)
	}
	brute, err = NewScene(tb, BruteForce())
	if err != nil {
		t.Fatal(err)
	}
	if bvhScene.IsBruteForce() || !brute.IsBruteForce() {
		t.Fatal("IsBruteForce")
	}
	return bvhScene, brute
}
