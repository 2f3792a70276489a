package dist_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/rayd-go/rayd/dist"
)

// A launcher's variables become an Env; LOCAL_RANK picks the GPU and RANK
// the shard of a global batch.
func ExampleParseEnv() {
	vars := map[string]string{"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_ADDR": "127.0.0.1",
		"MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "demo", "TORCHELASTIC_USE_AGENT_STORE": "True"}
	env, err := dist.ParseEnv(func(k string) string { return vars[k] })
	if err != nil {
		panic(err)
	}
	dev, _ := dist.DeviceFor(env.LocalRank, 2)
	begin, end := dist.ShardBounds(262144, env.Rank, env.WorldSize)
	fmt.Println(env)
	fmt.Println("rendezvous at", env.RendezvousAddr())
	fmt.Printf("device cuda:%d, rays [%d, %d)\n", dev, begin, end)

	_, err = dist.ParseEnv(func(string) string { return "" })
	fmt.Println(errors.Is(err, dist.ErrNotLaunched))
	// Output:
	// rank 1/2 (local 1/2, torchrun)
	// rendezvous at 127.0.0.1:29501
	// device cuda:1, rays [131072, 262144)
	// true
}

// Shards of a global batch partition it in rank order.
func ExampleShardBounds() {
	for r := range 3 {
		b, e := dist.ShardBounds(10, r, 3)
		fmt.Printf("rank %d: [%d, %d)\n", r, b, e)
	}
	// Output:
	// rank 0: [0, 4)
	// rank 1: [4, 7)
	// rank 2: [7, 10)
}

// Monte-Carlo lane windows are warp aligned and cover a lane space rounded
// up to a multiple of 32 lanes per rank.
func ExampleLaneWindow() {
	for r := range 3 {
		b, c, total := dist.LaneWindow(1000, r, 3)
		fmt.Printf("rank %d: lanes [%d, %d) of %d\n", r, b, b+c, total)
	}
	// Output:
	// rank 0: lanes [0, 352) of 1056
	// rank 1: lanes [352, 704) of 1056
	// rank 2: lanes [704, 1056) of 1056
}

// Three ranks (here goroutines) meet at rank 0's address; every rank gets
// rank 0's payload and can exchange small host values. They share a token
// (in a real job: RAYD_RENDEZVOUS_TOKEN, read into Env.Token), so no other
// process can join.
func ExampleJoin() {
	port, _ := dist.FreePort("127.0.0.1")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	token := dist.NewToken()
	out := make([]string, 3)
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := dist.RendezvousConfig{Addr: addr, Rank: r, WorldSize: 3, Token: token, Timeout: 10 * time.Second}
			if r == 0 {
				cfg.Payload = []byte("unique-id")
			}
			s, err := dist.Join(context.Background(), cfg)
			if err != nil {
				out[r] = err.Error()
				return
			}
			defer s.Close()
			hashes, err := s.AllGather(context.Background(), []byte(fmt.Sprintf("h%d", r)))
			if err == nil {
				err = s.Barrier(context.Background())
			}
			out[r] = fmt.Sprintf("rank %d got %s, gathered %q (%v)", r, s.Payload(), hashes, err)
		}()
	}
	wg.Wait()
	for _, line := range out {
		fmt.Println(line)
	}
	// Output:
	// rank 0 got unique-id, gathered ["h0" "h1" "h2"] (<nil>)
	// rank 1 got unique-id, gathered ["h0" "h1" "h2"] (<nil>)
	// rank 2 got unique-id, gathered ["h0" "h1" "h2"] (<nil>)
}

// One rank of a job started by torchrun --no-python, rayd launch, srun or
// mpirun: read the placement, set up the communicator, all-reduce a device
// gradient, and release the communicator on every way out.
func ExampleInit() {
	env, err := dist.FromEnvironment()
	if err != nil {
		fmt.Println(err) // not started by a launcher
		return
	}
	ctx := context.Background()
	comm, err := dist.Init(ctx, env, dist.Options{Timeout: 5 * time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer comm.Close()
	var grad dist.Buffer // e.g. a *launch.Buffer[float32] on cuda:comm.Device()
	if grad != nil {
		if err := comm.AllReduce(ctx, dist.Sum, grad); err != nil {
			comm.Abort(err.Error())
			return
		}
	}
	_ = comm.Barrier(ctx)
}

// A rank's work through Run: the communicator is aborted if the work fails
// (so the other ranks stop waiting at once) and closed on every way out.
func ExampleRun() {
	env, err := dist.FromEnvironment()
	if err != nil {
		fmt.Println(err) // not started by a launcher
		return
	}
	err = dist.Run(context.Background(), env, dist.Options{Timeout: 5 * time.Minute},
		func(ctx context.Context, comm *dist.Comm) error {
			// ... build the scene on cuda:comm.Device(), trace this rank's
			// shard, all-reduce the gradients ...
			return comm.Barrier(ctx)
		})
	if err != nil {
		fmt.Println("rank failed:", err)
	}
}
