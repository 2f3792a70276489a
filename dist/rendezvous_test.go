package dist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func loopback(t *testing.T) string {
	t.Helper()
	p, err := FreePort("127.0.0.1")
	require.NoError(t, err)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
}

// joinAll runs Join for the given ranks of a world concurrently (rank r
// starts after delay(r)) and returns each rank's session and error.
func joinAll(t *testing.T, cfg RendezvousConfig, ranks []int, delay func(int) time.Duration) ([]*Session, []error) {
	t.Helper()
	sess := make([]*Session, cfg.WorldSize)
	errs := make([]error, cfg.WorldSize)
	var wg sync.WaitGroup
	for _, r := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(delay(r))
			c := cfg
			c.Rank = r
			if r != 0 {
				c.Payload = nil
			}
			sess[r], errs[r] = Join(context.Background(), c)
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, s := range sess {
			if s != nil {
				_ = s.Close()
			}
		}
	})
	return sess, errs
}

func noDelay(int) time.Duration { return 0 }

func TestRendezvousDeliversThePayloadToEveryRank(t *testing.T) {
	for name, tok := range tokenModes {
		t.Run(name, func(t *testing.T) { testDelivery(t, tok) })
	}
}

// tokenModes are the two ways to run a rendezvous.
var tokenModes = map[string]Token{"token": testToken, "no token": ""}

// testToken is the secret of the tests' jobs.
const testToken Token = "0123456789abcdef-test-token"

func testDelivery(t *testing.T, tok Token) {
	cfg := RendezvousConfig{Addr: loopback(t), WorldSize: 4, RunID: "job", Token: tok, Timeout: 10 * time.Second, Payload: []byte("nccl-unique-id")}
	// Ranks 1..3 start before rank 0 listens: they must retry.
	sess, errs := joinAll(t, cfg, []int{0, 1, 2, 3}, func(r int) time.Duration {
		if r == 0 {
			return 200 * time.Millisecond
		}
		return 0
	})
	for r := range 4 {
		require.NoError(t, errs[r], "rank %d", r)
		assert.Equal(t, "nccl-unique-id", string(sess[r].Payload()), "rank %d", r)
		assert.Equal(t, r, sess[r].Rank())
		assert.Equal(t, 4, sess[r].WorldSize())
	}
	// Host collectives, twice, then an orderly close: nobody sees a loss.
	for round := range 2 {
		var wg sync.WaitGroup
		for r := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				parts, err := sess[r].AllGather(context.Background(), []byte(fmt.Sprintf("r%d/%d", r, round)))
				assert.NoError(t, err)
				for q := range 4 {
					assert.Equal(t, fmt.Sprintf("r%d/%d", q, round), string(parts[q]))
				}
				assert.NoError(t, sess[r].Barrier(context.Background()))
			}()
		}
		wg.Wait()
	}
	for r := range 4 {
		assert.NoError(t, sess[r].Close(), "rank %d", r)
		assert.ErrorIs(t, sess[r].Err(), ErrClosed, "rank %d: an orderly close is not a loss", r)
	}
}

func TestRendezvousMissingPeerIsATimeoutNotAHang(t *testing.T) {
	cfg := RendezvousConfig{Addr: loopback(t), WorldSize: 3, Timeout: 700 * time.Millisecond, Payload: []byte("id")}
	start := time.Now()
	_, errs := joinAll(t, cfg, []int{0, 1}, noDelay) // rank 2 never comes
	elapsed := time.Since(start)
	require.ErrorIs(t, errs[0], ErrTimeout)
	assert.Contains(t, errs[0].Error(), "missing ranks [2]")
	require.ErrorIs(t, errs[1], ErrTimeout)
	// Whichever deadline passes first: rank 0 tells rank 1 who is missing,
	// or rank 1 gives up on rank 0.
	msg := errs[1].Error()
	assert.True(t, strings.Contains(msg, "missing ranks [2]") || strings.Contains(msg, "did not complete the rendezvous"), msg)
	assert.Less(t, elapsed, 5*time.Second)
}

func TestRendezvousWithoutRankZeroTimesOut(t *testing.T) {
	cfg := RendezvousConfig{Addr: loopback(t), WorldSize: 2, Timeout: 400 * time.Millisecond}
	start := time.Now()
	_, errs := joinAll(t, cfg, []int{1}, noDelay)
	require.ErrorIs(t, errs[1], ErrTimeout)
	assert.Contains(t, errs[1].Error(), "could not join rank 0")
	assert.Less(t, time.Since(start), 4*time.Second)
}

// TestRendezvousRefusals: rank 0 (world 2, run "job") refuses a rank 1
// that disagrees with it, tells it why and names the refusal when it times
// out.
func TestRendezvousRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		tok0 Token            // rank 0's token
		bad  RendezvousConfig // rank 1's claims
		why  string
	}{
		{"world size", testToken, RendezvousConfig{WorldSize: 3, RunID: "job", Token: testToken}, "rank 1 has world size 3, rank 0 has 2"},
		{"run id", testToken, RendezvousConfig{WorldSize: 2, RunID: "other", Token: testToken}, `rank 1 belongs to run "other"`},
		{"world size, no tokens", "", RendezvousConfig{WorldSize: 3, RunID: "job"}, "rank 1 has world size 3"},
		{"no token", testToken, RendezvousConfig{WorldSize: 2, RunID: "job"}, "rank 1 has no rendezvous token but rank 0 requires one"},
		{"another token", testToken, RendezvousConfig{WorldSize: 2, RunID: "job", Token: "another-token-of-16-bytes"}, "does not prove the rendezvous token"},
		{"another token and run id", testToken, RendezvousConfig{WorldSize: 2, RunID: "other", Token: "another-token-of-16-bytes"}, "does not prove the rendezvous token"},
		{"rank 0 has no token", "", RendezvousConfig{WorldSize: 2, RunID: "job", Token: testToken}, "rank 1 holds a rendezvous token but rank 0 has none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := loopback(t)
			var wg sync.WaitGroup
			var err0, err1 error
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, err0 = Join(context.Background(), RendezvousConfig{Addr: addr, WorldSize: 2, RunID: "job", Token: tc.tok0,
					Timeout: 800 * time.Millisecond, Payload: []byte{1}})
			}()
			go func() {
				defer wg.Done()
				b := tc.bad
				b.Addr, b.Rank, b.Timeout = addr, 1, 5*time.Second
				_, err1 = Join(context.Background(), b)
			}()
			wg.Wait()
			require.ErrorIs(t, err1, ErrRefused)
			assert.Contains(t, err1.Error(), tc.why)
			require.ErrorIs(t, err0, ErrTimeout)
			assert.Contains(t, err0.Error(), "refused: ")
			assert.Contains(t, err0.Error(), tc.why)
			if tc.tok0 != "" && tc.bad.Token != tc.tok0 {
				assert.NotContains(t, err1.Error(), `"job"`, "a rank without the token learns nothing of the job")
			}
		})
	}
}

func TestRendezvousRefusesADuplicateRank(t *testing.T) {
	for name, tok := range tokenModes {
		t.Run(name, func(t *testing.T) { testDuplicate(t, tok) })
	}
}

func testDuplicate(t *testing.T, tok Token) {
	cfg := RendezvousConfig{Addr: loopback(t), WorldSize: 3, Token: tok, Timeout: 10 * time.Second, Payload: []byte("x")}
	var dupErr error
	dupDone := make(chan struct{})
	sess, errs := joinAll(t, cfg, []int{0, 1, 2}, func(r int) time.Duration {
		switch r {
		case 1:
			go func() { // a second rank 1, after the first has joined
				time.Sleep(300 * time.Millisecond)
				c := cfg
				c.Rank, c.Payload = 1, nil
				_, dupErr = Join(context.Background(), c)
				close(dupDone)
			}()
		case 2:
			<-dupDone
		}
		return 0
	})
	assert.ErrorIs(t, dupErr, ErrRefused)
	assert.Contains(t, dupErr.Error(), "joined twice")
	for r := range 3 {
		require.NoError(t, errs[r])
		assert.Equal(t, "x", string(sess[r].Payload()))
	}
}

func TestRendezvousHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := Join(ctx, RendezvousConfig{Addr: loopback(t), Rank: 1, WorldSize: 2, Timeout: time.Minute})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 3*time.Second)
}

func TestSessionDetectsALostPeerAtOnce(t *testing.T) {
	cfg := RendezvousConfig{Addr: loopback(t), WorldSize: 3, Timeout: 10 * time.Second, Payload: []byte("x")}
	sess, errs := joinAll(t, cfg, []int{0, 1, 2}, noDelay)
	for _, err := range errs {
		require.NoError(t, err)
	}
	_ = sess[2].peers[0].c.Close() // rank 2 "dies": no goodbye
	for _, r := range []int{0, 1} {
		select {
		case <-sess[r].Failed():
		case <-time.After(5 * time.Second):
			t.Fatalf("rank %d did not notice the loss of rank 2", r)
		}
		assert.ErrorIs(t, sess[r].Err(), ErrPeerLost, "rank %d", r)
		assert.Contains(t, sess[r].Err().Error(), "rank 2 disconnected", "rank %d", r)
		_, err := sess[r].AllGather(context.Background(), nil)
		assert.ErrorIs(t, err, ErrPeerLost)
	}
}

func TestSessionAbortReachesEveryRank(t *testing.T) {
	cfg := RendezvousConfig{Addr: loopback(t), WorldSize: 3, Timeout: 10 * time.Second, Payload: []byte("x")}
	sess, errs := joinAll(t, cfg, []int{0, 1, 2}, noDelay)
	for _, err := range errs {
		require.NoError(t, err)
	}
	sess[1].Abort("out of memory")
	assert.Contains(t, sess[1].Err().Error(), "rank 1 aborted: out of memory")
	for _, r := range []int{0, 2} {
		select {
		case <-sess[r].Failed():
		case <-time.After(5 * time.Second):
			t.Fatalf("rank %d did not hear rank 1's abort", r)
		}
		assert.ErrorIs(t, sess[r].Err(), ErrPeerLost)
		assert.Contains(t, sess[r].Err().Error(), "rank 1 aborted: out of memory", "rank %d", r)
	}
}

func TestAllGatherTimesOutOnAStalledPeer(t *testing.T) {
	cfg := RendezvousConfig{Addr: loopback(t), WorldSize: 2, Timeout: 10 * time.Second, Payload: []byte("x")}
	sess, errs := joinAll(t, cfg, []int{0, 1}, noDelay)
	require.NoError(t, errors.Join(errs...))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := sess[0].AllGather(ctx, []byte("alone")) // rank 1 is alive but never joins in
	assert.ErrorIs(t, err, ErrTimeout)
	assert.Contains(t, err.Error(), "waiting for rank 1")
}

func TestSingleRankNeedsNoNetwork(t *testing.T) {
	s, err := Join(context.Background(), RendezvousConfig{Addr: "invalid:-1", WorldSize: 1, Payload: []byte("p")})
	require.NoError(t, err)
	parts, err := s.AllGather(context.Background(), []byte("me"))
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("me")}, parts)
	assert.Equal(t, "p", string(s.Payload()))
	assert.NoError(t, s.Close())
	_, err = Join(context.Background(), RendezvousConfig{WorldSize: 2, Rank: 2})
	assert.Error(t, err)
}

func TestWireRoundTrips(t *testing.T) {
	for _, h := range []hello{
		{rank: 5, world: 8, runID: "run-1", nonce: newNonce(), proof: []byte{}},
		{rank: -1, world: 1 << 30, runID: strings.Repeat("r", MaxRunIDBytes), nonce: newNonce(), proof: newNonce()},
	} {
		got, err := decodeHello(h.encode())
		require.NoError(t, err)
		assert.Equal(t, h, got)
		assert.LessOrEqual(t, len(h.encode()), maxHello, "the largest hello fits the admission bound")
	}
	_, err := decodeHello([]byte("GET / HTTP/1.1\r\n\r\n"))
	assert.Error(t, err)
	_, err = decodeHello(append([]byte(oldMagic), make([]byte, 12)...))
	assert.ErrorIs(t, err, errOldProtocol)
	long := hello{runID: strings.Repeat("r", MaxRunIDBytes+1), nonce: newNonce()}.encode()
	_, err = decodeHello(long)
	assert.Error(t, err, "a run id beyond the bound")
	for _, tok := range []bool{false, true} {
		c := challenge{token: tok, nonce: newNonce()}
		got, err := decodeChallenge(c.encode())
		require.NoError(t, err)
		assert.Equal(t, c, got)
		assert.Len(t, c.encode(), challengeBytes)
	}
	bad := challenge{nonce: newNonce()}.encode()
	bad[len(protocolMagic)] = 0x80
	_, err = decodeChallenge(bad)
	assert.ErrorContains(t, err, "unknown flags")
	msg := encodeGather(42, [][]byte{nil, []byte("a"), []byte("bcd")})
	seq, parts, err := decodeGather(msg, 3)
	require.NoError(t, err)
	assert.Equal(t, uint64(42), seq)
	require.Len(t, parts, 3)
	assert.Empty(t, parts[0])
	assert.Equal(t, "a", string(parts[1]))
	assert.Equal(t, "bcd", string(parts[2]))
	_, _, err = decodeGather(msg, 2)
	assert.Error(t, err)
	_, _, err = decodeGather(msg[:len(msg)-1], -1)
	assert.Error(t, err)
}
