package dist

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openRankZero runs rank 0 of a world of 2 that nobody else joins, for as
// long as the test lasts.
func openRankZero(t *testing.T, helloTimeout time.Duration) string {
	t.Helper()
	addr := loopback(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Join(ctx, RendezvousConfig{Addr: addr, WorldSize: 2, Token: testToken, Timeout: time.Minute,
			Payload: []byte("x"), helloTimeout: helloTimeout})
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
	})
	return addr
}

// TestHelloDeadline: while the rendezvous is still open, a connection that
// has not delivered its hello within the hello timeout is closed, whether
// it is idle or drips its bytes.
func TestHelloDeadline(t *testing.T) {
	const helloTimeout = 400 * time.Millisecond
	addr := openRankZero(t, helloTimeout)
	idle := rogueDial(t, addr)
	drip := rogueDial(t, addr)
	start := time.Now()
	go func() {
		for _, b := range forgedHello(nil) {
			time.Sleep(50 * time.Millisecond)
			if _, err := drip.Write([]byte{b}); err != nil {
				return
			}
		}
	}()
	for name, c := range map[string]net.Conn{"idle": idle, "drip": drip} {
		how, err := ending(c, 20*time.Second)
		require.NoError(t, err, name)
		assert.Equal(t, "closed", how, name)
		assert.GreaterOrEqual(t, time.Since(start), helloTimeout*3/4, "%s: closed at the hello deadline, not before", name)
	}
	assert.Less(t, time.Since(start), 10*time.Second)
}

// TestPendingBound: beyond WorldSize+pendingSlack connections awaiting
// their hello, each new one evicts the oldest, long before the hello
// deadline; the newest stay.
func TestPendingBound(t *testing.T) {
	const extra = 100
	addr := openRankZero(t, time.Minute)
	conns := make([]net.Conn, 2+pendingSlack+extra)
	for i := range conns {
		conns[i] = rogueDial(t, addr)
	}
	for i, c := range conns[:extra] {
		how, err := ending(c, 20*time.Second)
		require.NoError(t, err, "connection %d", i)
		require.Equal(t, "closed", how, "connection %d", i)
	}
	newest := conns[len(conns)-pendingSlack:]
	errs := make([]error, len(newest))
	var wg sync.WaitGroup
	for i, c := range newest {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = ending(c, 200*time.Millisecond)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "connection %d is still waiting for its hello", len(conns)-pendingSlack+i)
	}
}

// TestRankGetsInPastIdleConnections: a rank that arrives after the
// pending bound filled with idle connections is admitted at once, not
// after the hello deadline.
func TestRankGetsInPastIdleConnections(t *testing.T) {
	addr := loopback(t)
	cfg := RendezvousConfig{Addr: addr, WorldSize: 2, Token: testToken, Timeout: 30 * time.Second, helloTimeout: time.Minute,
		Payload: []byte("x")}
	done := make(chan error, 1)
	go func() {
		s, err := Join(context.Background(), cfg)
		if err == nil {
			defer s.Close()
		}
		done <- err
	}()
	for range 2 + pendingSlack + 10 {
		rogueDial(t, addr)
	}
	start := time.Now()
	c := cfg
	c.Rank, c.Payload = 1, nil
	s, err := Join(context.Background(), c)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, "x", string(s.Payload()))
	require.NoError(t, <-done)
	assert.Less(t, time.Since(start), 20*time.Second, "admitted well before the minute-long hello deadline")
}
