package dist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds the rendezvous, communicator setup and every
// collective when no timeout is configured.
const DefaultTimeout = 10 * time.Minute

// RendezvousConfig describes one rank's side of a rendezvous.
type RendezvousConfig struct {
	// Addr is host:port of rank 0 (Env.RendezvousAddr). Rank 0 listens on
	// that port on every interface, or on the host alone when it is a
	// loopback address; the others connect to it, retrying until the
	// deadline.
	Addr            string
	Rank, WorldSize int
	// RunID, when set, must be equal on every rank (Env.RunID).
	RunID string
	// Timeout bounds the whole rendezvous (DefaultTimeout when 0); ctx may
	// end it earlier.
	Timeout time.Duration
	// Payload is rank 0's message to every rank (for NCCL: the unique id).
	// Other ranks leave it nil.
	Payload []byte
}

// Join meets every other rank of the job at cfg.Addr: rank 0 waits for the
// other WorldSize−1 ranks, checks that they agree on the world size and run
// id and that no rank is taken twice, then sends each of them its Payload.
// It returns a Session holding the payload and the connections, which stay
// open as a liveness channel: a rank that dies afterwards fails the other
// ranks' Session (Session.Failed) at once.
//
// A rank that is missing at the deadline makes Join fail with an error
// matching ErrTimeout that names the missing ranks (on rank 0) or the
// address that never answered (on the others); a refused rank gets
// ErrRefused. Join never waits past the timeout.
func Join(ctx context.Context, cfg RendezvousConfig) (*Session, error) {
	if cfg.WorldSize < 1 || cfg.Rank < 0 || cfg.Rank >= cfg.WorldSize {
		return nil, fmt.Errorf("dist: Join: rank %d of world %d", cfg.Rank, cfg.WorldSize)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if cfg.WorldSize == 1 {
		return newSession(cfg.Rank, 1, cfg.Payload, nil), nil
	}
	if cfg.Rank == 0 {
		ln, err := net.Listen("tcp", listenAddr(cfg.Addr))
		if err != nil {
			return nil, fmt.Errorf("dist: rendezvous: rank 0 cannot listen on %s: %w", cfg.Addr, err)
		}
		return serve(ctx, ln, cfg)
	}
	return dial(ctx, cfg)
}

// listenAddr is the address rank 0 binds: the host itself when it is a
// loopback name, otherwise every interface.
func listenAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return addr
	}
	return net.JoinHostPort("", port)
}

// timeoutCause turns a context end into ErrTimeout (deadline) or the
// context's error (cancellation).
func timeoutCause(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s", ErrTimeout, what)
	}
	return fmt.Errorf("dist: %s: %w", what, ctx.Err())
}

// serve is rank 0's side: accept, check and answer every other rank.
func serve(ctx context.Context, ln net.Listener, cfg RendezvousConfig) (*Session, error) {
	type arrival struct {
		c   *conn
		h   hello
		err error
	}
	arrivals := make(chan arrival)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	pending := map[net.Conn]bool{} // accepted, hello not read yet
	defer wg.Wait()
	defer func() { // unblock hello readers of connections nobody needs now
		close(stop)
		mu.Lock()
		for nc := range pending {
			_ = nc.Close()
		}
		mu.Unlock()
	}()
	go func() { <-ctx.Done(); _ = ln.Close() }()
	wg.Add(1)
	go func() { // accept loop: each hello is read on its own goroutine
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			pending[nc] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := &conn{c: nc}
				deadline, _ := ctx.Deadline()
				_ = nc.SetReadDeadline(deadline)
				typ, p, err := c.recv()
				_ = nc.SetReadDeadline(time.Time{})
				mu.Lock()
				delete(pending, nc)
				mu.Unlock()
				var h hello
				if err == nil && typ != msgHello {
					err = fmt.Errorf("unexpected message %q", typ)
				}
				if err == nil {
					h, err = decodeHello(p)
				}
				select {
				case arrivals <- arrival{c: c, h: h, err: err}:
				case <-stop:
					_ = nc.Close()
				}
			}()
		}
	}()
	peers := make([]*conn, cfg.WorldSize)
	var refusals []string
	fail := func(err error) (*Session, error) {
		_ = ln.Close()
		for _, c := range peers {
			if c != nil {
				_ = c.c.Close()
			}
		}
		return nil, err
	}
	for joined := 1; joined < cfg.WorldSize; {
		select {
		case <-ctx.Done():
			var missing []int
			for r := 1; r < cfg.WorldSize; r++ {
				if peers[r] == nil {
					missing = append(missing, r)
				}
			}
			what := fmt.Sprintf("rendezvous on %s: %d of %d ranks joined; missing ranks %v", cfg.Addr, joined, cfg.WorldSize, missing)
			if len(refusals) > 0 {
				what += "; refused: " + strings.Join(refusals, "; ")
			}
			for _, c := range peers { // tell the ranks that came why they wait no longer
				if c != nil {
					_ = c.send(msgAbort, []byte(what))
				}
			}
			return fail(timeoutCause(ctx, what))
		case a := <-arrivals:
			reason := ""
			switch {
			case a.err != nil:
				reason = a.err.Error()
			case a.h.world != cfg.WorldSize:
				reason = fmt.Sprintf("rank %d has world size %d, rank 0 has %d", a.h.rank, a.h.world, cfg.WorldSize)
			case a.h.runID != cfg.RunID:
				reason = fmt.Sprintf("rank %d belongs to run %q, rank 0 to run %q", a.h.rank, a.h.runID, cfg.RunID)
			case a.h.rank <= 0 || a.h.rank >= cfg.WorldSize:
				reason = fmt.Sprintf("rank %d outside [1, %d)", a.h.rank, cfg.WorldSize)
			case peers[a.h.rank] != nil:
				reason = fmt.Sprintf("rank %d joined twice", a.h.rank)
			}
			if reason != "" {
				refusals = append(refusals, reason)
				_ = a.c.send(msgRefuse, []byte(reason))
				_ = a.c.c.Close()
				continue
			}
			peers[a.h.rank] = a.c
			joined++
		}
	}
	_ = ln.Close()
	for r := 1; r < cfg.WorldSize; r++ {
		if err := peers[r].send(msgWelcome, cfg.Payload); err != nil {
			return fail(fmt.Errorf("%w: rendezvous: sending to rank %d: %v", ErrPeerLost, r, err))
		}
	}
	return newSession(0, cfg.WorldSize, slices.Clone(cfg.Payload), peers), nil
}

// dial is the side of every rank but 0: connect (retrying while rank 0 is
// not listening yet), introduce itself and wait for the payload.
func dial(ctx context.Context, cfg RendezvousConfig) (*Session, error) {
	backoff := 20 * time.Millisecond
	var lastErr error
	for {
		d := net.Dialer{Timeout: 2 * time.Second}
		nc, err := d.DialContext(ctx, "tcp", cfg.Addr)
		if err == nil {
			var s *Session
			if s, err = introduce(ctx, &conn{c: nc}, cfg); err == nil || errors.Is(err, ErrRefused) || errors.Is(err, ErrTimeout) {
				return s, err
			}
			_ = nc.Close()
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, timeoutCause(ctx, fmt.Sprintf("rendezvous: rank %d could not join rank 0 at %s (last error: %v)", cfg.Rank, cfg.Addr, lastErr))
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

func introduce(ctx context.Context, c *conn, cfg RendezvousConfig) (*Session, error) {
	if err := c.send(msgHello, hello{rank: cfg.Rank, world: cfg.WorldSize, runID: cfg.RunID}.encode()); err != nil {
		return nil, err
	}
	deadline, _ := ctx.Deadline()
	_ = c.c.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.c.SetReadDeadline(time.Now()) })
	typ, p, err := c.recv()
	stop()
	_ = c.c.SetReadDeadline(time.Time{})
	switch {
	case err != nil && (ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded)):
		what := fmt.Sprintf("rendezvous: rank %d connected to %s but rank 0 did not complete the rendezvous (are all %d ranks running?)",
			cfg.Rank, cfg.Addr, cfg.WorldSize)
		if e := ctx.Err(); e != nil && !errors.Is(e, context.DeadlineExceeded) {
			return nil, fmt.Errorf("dist: %s: %w", what, e)
		}
		return nil, fmt.Errorf("%w: %s", ErrTimeout, what)
	case err != nil:
		return nil, err
	case typ == msgRefuse:
		_ = c.c.Close()
		return nil, fmt.Errorf("%w: rank %d: %s", ErrRefused, cfg.Rank, p)
	case typ == msgAbort: // rank 0 gave up waiting for the others
		_ = c.c.Close()
		return nil, fmt.Errorf("%w: rank %d: rank 0 gave up: %s", ErrTimeout, cfg.Rank, p)
	case typ != msgWelcome:
		return nil, fmt.Errorf("dist: rendezvous: unexpected message %q", typ)
	}
	peers := make([]*conn, cfg.WorldSize)
	peers[0] = c
	return newSession(cfg.Rank, cfg.WorldSize, p, peers), nil
}
