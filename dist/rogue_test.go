package dist

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rogue tests run a 3-rank rendezvous while a stranger on the same
// network attacks rank 0. In every case the real ranks must get in, rank 0's
// heap must stay within heapSlack of what it was before, and the stranger
// must be refused or disconnected.
const (
	rogueWorld        = 3
	rogueHelloTimeout = 500 * time.Millisecond
	heapSlack         = 4 << 20  // live heap growth allowed while the rogue is connected
	allocSlack        = 24 << 20 // bytes allocated over the whole phase (a 64 MiB buffer would exceed it)
)

// attack runs a stranger against rank 0 at addr before the real ranks
// arrive. The returned function, called once they are in, reports how the
// stranger's attempt ended (see ending).
type attack func(t *testing.T, addr string) (fate func() (string, error))

// rogueDial connects to addr, retrying while rank 0 is not listening yet.
func rogueDial(t *testing.T, addr string) net.Conn {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		require.True(t, time.Now().Before(deadline), "rank 0 never listened: %v", err)
		time.Sleep(5 * time.Millisecond)
	}
}

// readChallenge reads rank 0's first message, which must be a challenge.
func readChallenge(t *testing.T, c net.Conn) challenge {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, p, err := readFrame(c, maxHello)
	require.NoError(t, err)
	require.Equal(t, byte(msgChallenge), typ)
	ch, err := decodeChallenge(p)
	require.NoError(t, err)
	_ = c.SetReadDeadline(time.Time{})
	return ch
}

func frame(typ byte, payload []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{typ}, uint32(len(payload))), payload...)
}

// ending reads what rank 0 tells a stranger's connection: "refused: why"
// or "closed" when rank 0 ended it, an error when rank 0 welcomed it or
// still had it open after within.
func ending(c net.Conn, within time.Duration) (string, error) {
	_ = c.SetReadDeadline(time.Now().Add(within))
	for {
		typ, p, err := readFrame(c, maxMessage)
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
			return "closed", nil
		case err != nil:
			return "", fmt.Errorf("rank 0 did not end the connection: %w", err)
		case typ == msgRefuse:
			return "refused: " + string(p), nil
		case typ != msgChallenge:
			return "", fmt.Errorf("rank 0 answered a stranger with message %q", typ)
		}
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// withRogue runs the rendezvous with the attack and checks its outcome; it
// returns how the stranger's attempt ended.
func withRogue(t *testing.T, tok Token, strike attack) string {
	t.Helper()
	addr := loopback(t)
	cfg := RendezvousConfig{Addr: addr, WorldSize: rogueWorld, RunID: "job", Token: tok, Timeout: 60 * time.Second,
		helloTimeout: rogueHelloTimeout}
	before := liveHeap()
	sess := make([]*Session, rogueWorld)
	errs := make([]error, rogueWorld)
	var wg sync.WaitGroup
	join := func(r int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cfg
			c.Rank = r
			if r == 0 {
				c.Payload = []byte("nccl-unique-id")
			}
			sess[r], errs[r] = Join(context.Background(), c)
		}()
	}
	join(0)
	fate := strike(t, addr)
	start := time.Now()
	for r := 1; r < rogueWorld; r++ {
		join(r)
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, s := range sess {
			if s != nil {
				_ = s.Close()
			}
		}
	})
	during := liveHeap() // the stranger's connections are still open
	for r := range rogueWorld {
		require.NoError(t, errs[r], "rank %d", r)
		assert.Equal(t, "nccl-unique-id", string(sess[r].Payload()), "rank %d", r)
	}
	grew := int64(during.HeapAlloc) - int64(before.HeapAlloc)
	allocated := during.TotalAlloc - before.TotalAlloc
	t.Logf("ranks joined in %v; live heap %+d bytes, %d bytes allocated", time.Since(start).Round(time.Millisecond), grew, allocated)
	assert.Less(t, grew, int64(heapSlack), "live heap growth")
	assert.Less(t, allocated, uint64(allocSlack), "bytes allocated during the attack")
	how, err := fate()
	require.NoError(t, err)
	return how
}

// forgedHello claims rank 1 of the rogue job, with proof bytes that are
// not an answer to anything.
func forgedHello(proof []byte) []byte {
	return frame(msgHello, hello{rank: 1, world: rogueWorld, runID: "job", nonce: newNonce(), proof: proof}.encode())
}

func TestRogueWrongToken(t *testing.T) {
	how := withRogue(t, testToken, func(t *testing.T, addr string) func() (string, error) {
		// A rank of another job (another token) that claims rank 1 first.
		_, err := Join(context.Background(), RendezvousConfig{Addr: addr, Rank: 1, WorldSize: rogueWorld, RunID: "job",
			Token: "not-the-job-token-at-all", Timeout: 10 * time.Second})
		return func() (string, error) { return fmt.Sprint(err), nil }
	})
	assert.Contains(t, how, ErrRefused.Error())
	assert.Contains(t, how, "does not prove the rendezvous token")
}

func TestRogueStrangerClaimsARankFirst(t *testing.T) {
	for name, proof := range map[string][]byte{"no proof": nil, "forged proof": newNonce()} {
		t.Run(name, func(t *testing.T) {
			how := withRogue(t, testToken, func(t *testing.T, addr string) func() (string, error) {
				c := rogueDial(t, addr)
				readChallenge(t, c)
				_, err := c.Write(forgedHello(proof))
				require.NoError(t, err)
				how, err := ending(c, 10*time.Second) // refused before rank 1 arrives
				return func() (string, error) { return how, err }
			})
			assert.Contains(t, how, "refused: ")
			assert.Contains(t, how, "rank 1")
			assert.NotContains(t, how, "job", "the refusal tells a stranger nothing about the job")
		})
	}
}

// TestRogueReplaysAHello records rank 1's exchange with rank 0 in one
// rendezvous (neither the token nor the payload is in it) and replays the
// hello, as an eavesdropper would, in the next one with the same token, run
// id and world.
func TestRogueReplaysAHello(t *testing.T) {
	addr := loopback(t)
	proxy, recorded := recordingProxy(t, addr)
	cfg := RendezvousConfig{WorldSize: rogueWorld, RunID: "job", Token: testToken, Timeout: 30 * time.Second,
		Payload: []byte("nccl-unique-id")}
	var wg sync.WaitGroup
	sess := make([]*Session, rogueWorld)
	errs := make([]error, rogueWorld)
	for r := range rogueWorld {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cfg
			c.Rank, c.Addr = r, addr
			if r != 0 {
				c.Payload = nil
			}
			if r == 1 {
				c.Addr = proxy // through the eavesdropper
			}
			sess[r], errs[r] = Join(context.Background(), c)
		}()
	}
	wg.Wait()
	for r := range rogueWorld {
		require.NoError(t, errs[r], "rank %d", r)
		defer sess[r].Close()
		assert.Equal(t, "nccl-unique-id", string(sess[r].Payload()))
	}
	up, down := recorded()
	assert.NotContains(t, string(down), "nccl-unique-id", "the payload does not cross the wire in clear")
	assert.NotContains(t, string(up)+string(down), string(testToken), "nor does the token")
	typ, heard, err := readFrame(bytes.NewReader(up), maxHello)
	require.NoError(t, err)
	require.Equal(t, byte(msgHello), typ)
	h, err := decodeHello(heard)
	require.NoError(t, err)
	require.Equal(t, 1, h.rank)
	require.Len(t, h.proof, proofBytes, "the recorded hello carries rank 1's proof")

	how := withRogue(t, testToken, func(t *testing.T, addr string) func() (string, error) {
		c := rogueDial(t, addr)
		readChallenge(t, c)
		_, err := c.Write(frame(msgHello, heard))
		require.NoError(t, err)
		how, err := ending(c, 10*time.Second)
		return func() (string, error) { return how, err }
	})
	assert.Contains(t, how, "refused: ")
	assert.Contains(t, how, "replayed")
}

// recordingProxy forwards one connection to target and records what each
// side sent.
func recordingProxy(t *testing.T, target string) (string, func() (fromClient, fromServer []byte)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	var mu sync.Mutex
	var up, down bytes.Buffer
	pipe := func(dst, src net.Conn, rec *bytes.Buffer) {
		buf := make([]byte, 4096)
		for {
			n, err := src.Read(buf)
			mu.Lock()
			rec.Write(buf[:n])
			mu.Unlock()
			if _, werr := dst.Write(buf[:n]); err != nil || werr != nil {
				_ = dst.Close()
				_ = src.Close()
				return
			}
		}
	}
	go func() {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		var server net.Conn
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if server, err = net.Dial("tcp", target); err == nil {
				break
			}
		}
		if server == nil {
			_ = client.Close()
			return
		}
		go pipe(client, server, &down)
		pipe(server, client, &up)
	}()
	return ln.Addr().String(), func() ([]byte, []byte) {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Clone(up.Bytes()), bytes.Clone(down.Bytes())
	}
}

func TestRogueHugeLengthHeader(t *testing.T) {
	for _, n := range []uint32{math.MaxUint32, maxMessage - 1} { // 4 GiB, and just under the pre-admission bound of old
		for mode, tok := range tokenModes {
			t.Run(fmt.Sprintf("%d bytes, %s", n, mode), func(t *testing.T) {
				how := withRogue(t, tok, func(t *testing.T, addr string) func() (string, error) {
					c := rogueDial(t, addr)
					readChallenge(t, c)
					hdr := binary.BigEndian.AppendUint32([]byte{msgHello}, n)
					_, err := c.Write(append(hdr, bytes.Repeat([]byte{'x'}, 4096)...))
					require.NoError(t, err)
					how, err := ending(c, 10*time.Second)
					return func() (string, error) { return how, err }
				})
				assert.Contains(t, []string{"refused: ", "closed"}, how[:min(len(how), len("refused: "))])
			})
		}
	}
}

func TestRogueThousandIdleConnections(t *testing.T) {
	for mode, tok := range tokenModes {
		t.Run(mode, func(t *testing.T) {
			how := withRogue(t, tok, func(t *testing.T, addr string) func() (string, error) {
				conns := make([]net.Conn, 1000)
				for i := range conns {
					conns[i] = rogueDial(t, addr)
				}
				return func() (string, error) {
					closed := 0
					for _, c := range conns {
						how, err := ending(c, 10*time.Second)
						if err != nil {
							return "", err
						}
						if how == "closed" {
							closed++
						}
					}
					return fmt.Sprintf("%d of %d closed", closed, len(conns)), nil
				}
			})
			assert.Equal(t, "1000 of 1000 closed", how)
		})
	}
}

func TestRogueSlowDrip(t *testing.T) {
	for mode, tok := range tokenModes {
		t.Run(mode, func(t *testing.T) {
			how := withRogue(t, tok, func(t *testing.T, addr string) func() (string, error) {
				c := rogueDial(t, addr)
				stop := make(chan struct{})
				dripped := make(chan int, 1)
				go func() { // one byte of a hello every 20 ms: it would take seconds
					n := 0
					defer func() { dripped <- n }()
					for _, b := range forgedHello(nil) {
						select {
						case <-stop:
							return
						case <-time.After(20 * time.Millisecond):
						}
						if _, err := c.Write([]byte{b}); err != nil {
							return
						}
						n++
					}
				}()
				return func() (string, error) {
					how, err := ending(c, 10*time.Second)
					close(stop)
					if n := <-dripped; n >= len(forgedHello(nil)) {
						return "", fmt.Errorf("the whole hello dripped in before rank 0 closed the connection")
					}
					return how, err
				}
			})
			assert.Equal(t, "closed", how)
		})
	}
}
