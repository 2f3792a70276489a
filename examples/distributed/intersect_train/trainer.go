package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/dist"
	"github.com/rayd-go/rayd/launch"
)

// span is the side of the trainable grid; the rays start at height rayZ.
const (
	span = 2.0
	rayZ = 2.0
)

// gridMesh is a dynamic cells×cells grid of two triangles per cell over
// [−span/2, span/2]² at z = 0.
func gridMesh(cells int) rayd.Mesh {
	n := cells + 1
	m := rayd.Mesh{Dynamic: true}
	for j := range n {
		for i := range n {
			m.Vertices = append(m.Vertices, float32(-span/2+span*float64(i)/float64(cells)),
				float32(-span/2+span*float64(j)/float64(cells)), 0)
		}
	}
	for j := range cells {
		for i := range cells {
			a := int32(j*n + i)
			m.Faces = append(m.Faces, a, a+1, a+int32(n), a+1, a+int32(n)+1, a+int32(n))
		}
	}
	return m
}

// globalRays generates the whole batch identically on every rank: xy =
// (U − 0.5)·2·0.9 for U uniform in [0,1)², z = rayZ, d = (0, 0, −1); and
// each ray's target hit distance rayZ − 0.3·exp(−2(x² + y²)).
func globalRays(n int, seed uint64) (xy []float32, target []float64) {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	xy, target = make([]float32, 2*n), make([]float64, n)
	for i := range n {
		x := float32((rng.Float64() - 0.5) * 2 * 0.9)
		y := float32((rng.Float64() - 0.5) * 2 * 0.9)
		xy[2*i], xy[2*i+1] = x, y
		target[i] = rayZ - 0.3*math.Exp(-2*(float64(x)*float64(x)+float64(y)*float64(y)))
	}
	return xy, target
}

// adam is the optimiser state (Adam with bias correction; sgd selects plain
// gradient descent). The state is float64 and the arithmetic the same on
// every rank, so identical gradients give identical parameters.
type adam struct {
	sgd          bool
	lr           float64
	m, v         []float64
	t            int
	beta1, beta2 float64
	eps          float64
}

func newOptimizer(kind string, lr float64, n int) *adam {
	return &adam{sgd: kind == "sgd", lr: lr, m: make([]float64, n), v: make([]float64, n), beta1: 0.9, beta2: 0.999, eps: 1e-8}
}

// apply updates p in place from gradient g, the same arithmetic on every rank.
func (o *adam) apply(p, g []float32) {
	o.t++
	c1 := 1 - math.Pow(o.beta1, float64(o.t))
	c2 := 1 - math.Pow(o.beta2, float64(o.t))
	for i := range p {
		gi := float64(g[i])
		if o.sgd {
			p[i] = float32(float64(p[i]) - o.lr*gi)
			continue
		}
		o.m[i] = o.beta1*o.m[i] + (1-o.beta1)*gi
		o.v[i] = o.beta2*o.v[i] + (1-o.beta2)*gi*gi
		p[i] = float32(float64(p[i]) - o.lr*(o.m[i]/c1)/(math.Sqrt(o.v[i]/c2)+o.eps))
	}
}

// paramHash is the SHA-256 of the parameters' raw little-endian bytes.
func paramHash(p []float32) string {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, p)
	s := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(s[:])
}

// trainer is one rank's state: its scene, its shard of the rays on the
// device, the trainable vertices on the host and the device buffers of the
// gradient, the loss and the drift check.
type trainer struct {
	comm       *dist.Comm
	scene      *rayd.Scene
	stream     *launch.Stream
	begin, end int
	nGlobal    int
	target     []float64 // this shard's targets
	params     []float32 // the mesh's vertices (3V), identical on every rank
	opt        *adam

	rays              *rayd.DeviceRays
	hits              *rayd.DeviceHits
	gradT             *launch.Buffer[float32] // ∂L/∂t per shard row
	grad              *launch.Buffer[float32] // [V,3] vertex gradient
	loss              *launch.Buffer[float64] // the shard's loss, then the global loss
	pMax, pMin        *launch.Buffer[float32] // drift check
	hostT, hostG, tmp []float32
}

func newTrainer(ctx context.Context, comm *dist.Comm, cfg config) (_ *trainer, err error) {
	mesh := gridMesh(cfg.cells)
	t := &trainer{comm: comm, nGlobal: cfg.rays, params: append([]float32(nil), mesh.Vertices...)}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	if t.scene, err = rayd.NewScene(ctx, []rayd.Mesh{mesh}, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(comm.Device())); err != nil {
		return nil, err
	}
	xy, target := globalRays(cfg.rays, cfg.seed)
	t.begin, t.end = dist.ShardBounds(cfg.rays, comm.Rank(), comm.WorldSize())
	n := t.end - t.begin
	t.target = target[t.begin:t.end]
	local := rayd.Rays{Origins: make([]float32, 3*n), Directions: make([]float32, 3*n)}
	for i := range n {
		g := t.begin + i
		copy(local.Origins[3*i:], []float32{xy[2*g], xy[2*g+1], rayZ})
		copy(local.Directions[3*i:], []float32{0, 0, -1})
	}
	if t.rays, err = t.scene.UploadRays(ctx, local); err != nil {
		return nil, err
	}
	if t.hits, err = t.scene.AllocHits(n, rayd.FlagGeometric|rayd.FlagUV); err != nil {
		return nil, err
	}
	dev := t.rays.Origins.Device()
	if t.stream, err = dev.NewStream(); err != nil {
		return nil, err
	}
	nv := len(t.params)
	for _, a := range []struct {
		dst **launch.Buffer[float32]
		n   int
	}{{&t.gradT, n}, {&t.grad, nv}, {&t.pMax, nv}, {&t.pMin, nv}} {
		if *a.dst, err = launch.Alloc[float32](dev, a.n); err != nil {
			return nil, err
		}
	}
	if t.loss, err = launch.Alloc[float64](dev, 1); err != nil {
		return nil, err
	}
	t.hostT, t.hostG, t.tmp = make([]float32, n), make([]float32, nv), make([]float32, nv)
	t.opt = newOptimizer(cfg.optimizer, cfg.lr, nv)
	return t, nil
}

// step runs one optimisation step and returns the global loss.
func (t *trainer) step(ctx context.Context) (float64, error) {
	if err := t.scene.IntersectInto(ctx, t.rays, t.hits); err != nil {
		return 0, err
	}
	if err := t.hits.T.Download(t.stream, t.hostT); err != nil {
		return 0, err
	}
	loss := 0.0
	for i, ti := range t.hostT {
		if math.IsInf(float64(ti), 0) {
			return 0, fmt.Errorf("ray %d missed the mesh", t.begin+i)
		}
		r := float64(ti) - t.target[i]
		loss += r * r / float64(t.nGlobal)
		t.hostT[i] = float32(2 * r / float64(t.nGlobal)) // ∂L/∂t
	}
	if err := t.gradT.Upload(t.stream, t.hostT); err != nil {
		return 0, err
	}
	if err := t.loss.Upload(t.stream, []float64{loss}); err != nil {
		return 0, err
	}
	if err := t.stream.Synchronize(); err != nil {
		return 0, err
	}
	// An empty shard still joins: its VJP writes a zero gradient.
	err := t.scene.IntersectVJPInto(ctx, t.rays, t.hits, rayd.DeviceIntersectCotangents{T: t.gradT},
		rayd.DeviceIntersectGrads{Vertices: t.grad})
	if err != nil {
		return 0, err
	}
	if err := t.comm.AllReduce(ctx, dist.Sum, t.grad, t.loss); err != nil {
		return 0, err
	}
	if err := t.grad.Download(t.stream, t.hostG); err != nil {
		return 0, err
	}
	global := []float64{0}
	if err := t.loss.Download(t.stream, global); err != nil {
		return 0, err
	}
	for i := 0; i < len(t.hostG); i += 3 {
		t.hostG[i], t.hostG[i+1] = 0, 0 // the vertices move only in z
	}
	t.opt.apply(t.params, t.hostG)
	return global[0], t.scene.UpdateVertices(ctx, 0, t.params)
}

// checkDrift requires every rank to hold exactly the same parameters: the
// element-wise max and min over the ranks must agree (no value differs)
// and the parameters' hashes must be equal (no bit differs).
func (t *trainer) checkDrift(ctx context.Context) error {
	if err := t.pMax.Upload(t.stream, t.params); err != nil {
		return err
	}
	if err := t.pMin.Upload(t.stream, t.params); err != nil {
		return err
	}
	if err := t.stream.Synchronize(); err != nil {
		return err
	}
	if err := t.comm.AllReduce(ctx, dist.Max, t.pMax); err != nil {
		return err
	}
	if err := t.comm.AllReduce(ctx, dist.Min, t.pMin); err != nil {
		return err
	}
	if err := t.pMax.Download(t.stream, t.hostG); err != nil {
		return err
	}
	if err := t.pMin.Download(t.stream, t.tmp); err != nil {
		return err
	}
	drift := 0.0
	for i := range t.hostG {
		drift = math.Max(drift, float64(t.hostG[i])-float64(t.tmp[i]))
	}
	if drift != 0 {
		return fmt.Errorf("cross-rank drift: max |diff| = %g", drift)
	}
	hashes, err := t.comm.Session().AllGather(ctx, []byte(paramHash(t.params)))
	if err != nil {
		return err
	}
	for r, h := range hashes {
		if !bytes.Equal(h, hashes[0]) {
			return fmt.Errorf("cross-rank drift: rank %d's parameters hash to %s, rank 0's to %s", r, h, hashes[0])
		}
	}
	return nil
}

func (t *trainer) close() {
	var errs []error
	for _, c := range []interface{ Close() error }{t.gradT, t.grad, t.pMax, t.pMin, t.loss} {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	if t.hits != nil {
		errs = append(errs, t.hits.Close())
	}
	if t.rays != nil {
		errs = append(errs, t.rays.Close())
	}
	if t.stream != nil {
		errs = append(errs, t.stream.Close())
	}
	if t.scene != nil {
		errs = append(errs, t.scene.Close())
	}
	_ = errors.Join(errs...)
}
