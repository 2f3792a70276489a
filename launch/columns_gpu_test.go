package launch_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
)

const (
	packedPoison = 0xa5 // bytes of the packed buffer no column covers
	columnPoison = 0x5a // bytes of a column's allocation outside the column
)

// byteColumn is one column of a byte-level test layout: the bytes
// [at, at+len(data)) of parent, packed at offset.
type byteColumn struct {
	parent *launch.Buffer[uint8]
	at     int
	offset int
	data   []byte
}

// randomLayout makes count columns of odd sizes at odd places: each column
// starts a random 0..17 bytes into its own allocation and a random 0..17
// bytes after the previous one in the packed buffer; one column is larger
// than the kernels' capped grid covers in one sweep when big is set.
func randomLayout(t *testing.T, d *launch.Device, rng *rand.Rand, count int, big bool) ([]byteColumn, int) {
	t.Helper()
	var cols []byteColumn
	end := 0
	for k := range count {
		n := 1 + rng.IntN(5000)
		switch {
		case big && k == count/2:
			n = 8<<20 + 16*rng.IntN(1000) + rng.IntN(16)
		case k%4 == 3:
			n = rng.IntN(16) // tails only (or empty)
		}
		at := rng.IntN(18)
		parent, err := launch.Alloc[uint8](d, at+n+rng.IntN(18))
		require.NoError(t, err)
		t.Cleanup(func() { _ = parent.Close() })
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		off := end + rng.IntN(18)
		if rng.IntN(3) == 0 {
			off = (end + 15) &^ 15 // aligned packed offsets too
		}
		cols = append(cols, byteColumn{parent: parent, at: at, offset: off, data: data})
		end = off + n
	}
	return cols, end + rng.IntN(18)
}

// TestGatherScatterColumnsRoundTrip: on fresh random layouts (odd sizes,
// odd offsets in the columns' allocations and in the packed buffer, aligned
// ones, one column past the capped grid), ScatterColumns writes exactly the
// columns' bytes into a poisoned packed buffer and GatherColumns writes them
// back into poisoned allocations, leaving every other byte alone; a
// persistent Columns does the same twice.
func TestGatherScatterColumnsRoundTrip(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	d, err := launch.Open(0)
	require.NoError(t, err)
	defer d.Close()
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Close()
	seed := testscene.Seed(t)
	t.Logf("seed %#x", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	for round, shape := range []struct {
		count int
		big   bool
	}{{1, false}, {10, false}, {16, true}, {40, false}} {
		name := fmt.Sprintf("round %d (%d columns)", round, shape.count)
		cols, packedBytes := randomLayout(t, d, rng, shape.count, shape.big)
		packed, err := launch.Alloc[uint8](d, packedBytes)
		require.NoError(t, err)
		require.NoError(t, packed.Memset8(s, packedPoison))
		var layout []launch.Column
		for _, c := range cols {
			require.NoError(t, c.parent.Memset8(s, columnPoison))
			v, err := c.parent.View(c.at, len(c.data))
			require.NoError(t, err)
			if len(c.data) > 0 {
				require.NoError(t, v.Upload(s, c.data))
			}
			layout = append(layout, launch.Column{Mem: v, Offset: c.offset, Bytes: len(c.data)})
		}
		require.NoError(t, launch.ScatterColumns(s, packed, layout))
		want := bytes.Repeat([]byte{packedPoison}, packedBytes)
		for _, c := range cols {
			copy(want[c.offset:], c.data)
		}
		got := make([]byte, packedBytes)
		require.NoError(t, packed.Download(s, got))
		requireSameBytes(t, name+" packed", got, want)

		cs, err := launch.NewColumns(s, packed, layout)
		require.NoError(t, err)
		for pass := range 2 {
			for _, c := range cols {
				require.NoError(t, c.parent.Memset8(s, columnPoison))
			}
			if pass == 0 {
				require.NoError(t, launch.GatherColumns(s, packed, layout))
			} else {
				require.NoError(t, cs.Gather(s))
			}
			for k, c := range cols {
				want := bytes.Repeat([]byte{columnPoison}, c.parent.Len())
				copy(want[c.at:], c.data)
				got := make([]byte, c.parent.Len())
				require.NoError(t, c.parent.Download(s, got))
				requireSameBytes(t, fmt.Sprintf("%s pass %d column %d", name, pass, k), got, want)
			}
		}
		// The persistent layout packs again into a re-poisoned buffer.
		require.NoError(t, packed.Memset8(s, packedPoison))
		require.NoError(t, cs.Scatter(s))
		require.NoError(t, packed.Download(s, got))
		requireSameBytes(t, name+" packed again", got, want)
		require.NoError(t, cs.Close())
		require.NoError(t, packed.Close())
	}
}

// TestColumnsOfTypedBuffers: float32, int32 (a view one element in) and
// float64 columns packed at 4- and 8-byte offsets come back bit for bit in
// fresh buffers; a closed column is refused.
func TestColumnsOfTypedBuffers(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	d, err := launch.Open(0)
	require.NoError(t, err)
	defer d.Close()
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Close()
	seed := testscene.Seed(t)
	t.Logf("seed %#x", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	f := make([]float32, 1001)
	for i := range f {
		f[i] = math.Float32frombits(rng.Uint32()) // NaN payloads and −0 included
	}
	ints := make([]int32, 777)
	for i := range ints {
		ints[i] = int32(rng.Uint32())
	}
	g := make([]float64, 333)
	for i := range g {
		g[i] = math.Float64frombits(rng.Uint64())
	}
	fb, ib, gb := upload(t, s, f), upload(t, s, ints), upload(t, s, g)
	iv, err := ib.View(1, len(ints)-2)
	require.NoError(t, err)
	packed, err := launch.Alloc[uint32](d, 4096)
	require.NoError(t, err)
	defer packed.Close()
	offF := 4                                 // 4-byte units: the packed address is 4 past a 16-byte boundary
	offI := offF + 4*len(f) + 4               // the view starts 4 bytes into its buffer
	offG := (offI + 4*(len(ints)-2) + 7) &^ 7 // 8-byte aligned
	layout := func(a, b, c launch.Memory) []launch.Column {
		return []launch.Column{{Mem: a, Offset: offF, Bytes: 4 * len(f)}, {Mem: b, Offset: offI, Bytes: 4 * (len(ints) - 2)},
			{Mem: c, Offset: offG, Bytes: 8 * len(g)}}
	}
	require.NoError(t, launch.ScatterColumns(s, packed, layout(fb, iv, gb)))
	f2, err := launch.Alloc[float32](d, len(f))
	require.NoError(t, err)
	defer f2.Close()
	i2, err := launch.Alloc[int32](d, len(ints)-2)
	require.NoError(t, err)
	defer i2.Close()
	g2, err := launch.Alloc[float64](d, len(g))
	require.NoError(t, err)
	defer g2.Close()
	require.NoError(t, launch.GatherColumns(s, packed, layout(f2, i2, g2)))
	gotF, gotI, gotG := make([]float32, len(f)), make([]int32, len(ints)-2), make([]float64, len(g))
	require.NoError(t, f2.Download(s, gotF))
	require.NoError(t, i2.Download(s, gotI))
	require.NoError(t, g2.Download(s, gotG))
	for i := range f {
		require.Equal(t, math.Float32bits(f[i]), math.Float32bits(gotF[i]), "float32 %d", i)
	}
	require.Equal(t, ints[1:len(ints)-1], gotI)
	for i := range g {
		require.Equal(t, math.Float64bits(g[i]), math.Float64bits(gotG[i]), "float64 %d", i)
	}
	cs, err := launch.NewColumns(s, packed, layout(f2, i2, g2))
	require.NoError(t, err)
	require.NoError(t, g2.Close())
	require.ErrorIs(t, cs.Gather(s), launch.ErrClosed)
	require.NoError(t, cs.Close())
}

func upload[T launch.Elem](t *testing.T, s *launch.Stream, src []T) *launch.Buffer[T] {
	t.Helper()
	b, err := launch.Alloc[T](s.Device(), len(src))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	require.NoError(t, b.Upload(s, src))
	return b
}

// requireSameBytes names the first differing byte.
func requireSameBytes(t *testing.T, name string, got, want []byte) {
	t.Helper()
	require.Equal(t, len(want), len(got), name)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: byte %d is %#x, want %#x", name, i, got[i], want[i])
		}
	}
}
