package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rayd-go/rayd/edge"
)

// poisoned is a host record of n rows as output k looks before any kernel
// writes it.
func poisoned(n, k int) *edge.RayResult {
	r := edge.NewRayResult(n)
	f := math.Float32frombits(poisonF[k])
	for _, v := range [][]float32{r.Distance, r.RayT, r.Point, r.EdgeT, r.EdgePoint} {
		for i := range v {
			v[i] = f
		}
	}
	for _, v := range [][]int32{r.ShapeID, r.EdgeID, r.GlobalEdgeID} {
		for i := range v {
			v[i] = poisonI[k]
		}
	}
	return r
}

// TestARowNeitherKernelWroteNeverComparesEqual: the two outputs carry
// different poison, so an unwritten row is a mismatch as well as counted.
func TestARowNeitherKernelWroteNeverComparesEqual(t *testing.T) {
	bvh, brute := poisoned(1, 0), poisoned(1, 1)
	assert.False(t, sameRow(bvh, 0, brute, 0))
	for _, ray := range []bool{false, true} {
		assert.True(t, unwritten(bvh, 0, 0, ray))
		assert.True(t, unwritten(brute, 0, 1, ray))
		assert.False(t, unwritten(bvh, 0, 1, ray), "output 0's poison is not output 1's")
	}
}

func TestAWrittenRowIsNotUnwritten(t *testing.T) {
	r := edge.NewRayResult(2) // misses: distance +Inf, ids -1
	for _, ray := range []bool{false, true} {
		assert.False(t, unwritten(r, 1, 0, ray))
		assert.False(t, unwritten(r, 1, 1, ray))
	}
	r.EdgePoint[4] = math.Float32frombits(poisonF[0]) // one field left unwritten
	assert.True(t, unwritten(r, 1, 0, false))
	r = edge.NewRayResult(1)
	r.RayT[0] = math.Float32frombits(poisonF[1])
	assert.False(t, unwritten(r, 0, 1, false), "points write no ray_t")
	assert.True(t, unwritten(r, 0, 1, true))
	assert.Contains(t, comparedFields(true), "ray_t")
	assert.NotContains(t, comparedFields(false), "ray_t")
}
