package dist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// DefaultTimeout bounds the rendezvous, communicator setup and every
// collective when no timeout is configured.
const DefaultTimeout = 10 * time.Minute

// RendezvousConfig describes one rank's side of a rendezvous.
type RendezvousConfig struct {
	// Addr is host:port of rank 0 (Env.RendezvousAddr); the others connect
	// to it, retrying until the deadline. Rank 0 listens on the interface
	// of that host when it is one of its own (a loopback name or address,
	// an address of one of its interfaces, a name that resolves to them),
	// and on every interface otherwise or when BindAll is set.
	Addr            string
	Rank, WorldSize int
	// RunID, when set, must be equal on every rank (Env.RunID); at most
	// MaxRunIDBytes.
	RunID string
	// Token is the job's shared secret (Env.Token): when set, rank 0 admits
	// only ranks that prove they hold it, and every rank accepts only an
	// answer that proves it back. It must be set on every rank or on none.
	// Without one, any host that reaches rank 0 and knows the run id can
	// join; rank 0 then warns once when it listens beyond loopback.
	Token Token
	// BindAll makes rank 0 listen on every interface (Env.BindAll).
	BindAll bool
	// Timeout bounds the whole rendezvous (DefaultTimeout when 0); ctx may
	// end it earlier.
	Timeout time.Duration
	// Payload is rank 0's message to every rank (for NCCL: the unique id).
	// Other ranks leave it nil.
	Payload []byte

	helloTimeout time.Duration // 0: defaultHelloTimeout
}

func (c RendezvousConfig) helloWait() time.Duration {
	if c.helloTimeout > 0 {
		return c.helloTimeout
	}
	return defaultHelloTimeout
}

// Join meets every other rank of the job at cfg.Addr: rank 0 waits for the
// other WorldSize−1 ranks, checks that they prove the token (when there is
// one), agree on the world size and run id and that no rank is taken
// twice, then sends each of them its Payload. It returns a Session holding
// the payload and the connections, which stay open as a liveness channel:
// a rank that dies afterwards fails the other ranks' Session
// (Session.Failed) at once.
//
// Before a connection has introduced itself, rank 0 bounds what it may
// cost: a hello of at most a few hundred bytes within a short deadline,
// and a bounded number of such connections. A connection that fails or is
// refused never takes a rank's place, so the real rank still gets in.
//
// A rank that is missing at the deadline makes Join fail with an error
// matching ErrTimeout that names the missing ranks (on rank 0) or the
// address that never answered (on the others); a refused rank gets
// ErrRefused. Join never waits past the timeout.
func Join(ctx context.Context, cfg RendezvousConfig) (*Session, error) {
	if cfg.WorldSize < 1 || cfg.Rank < 0 || cfg.Rank >= cfg.WorldSize {
		return nil, fmt.Errorf("dist: Join: rank %d of world %d", cfg.Rank, cfg.WorldSize)
	}
	if len(cfg.RunID) > MaxRunIDBytes {
		return nil, fmt.Errorf("dist: Join: run id of %d bytes exceeds %d", len(cfg.RunID), MaxRunIDBytes)
	}
	if err := cfg.Token.check(); err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if cfg.WorldSize == 1 {
		return newSession(cfg.Rank, 1, cfg.Payload, nil), nil
	}
	if cfg.Rank != 0 {
		return dial(ctx, cfg)
	}
	plan, err := planListen(ctx, cfg.Addr, cfg.BindAll)
	if err != nil {
		return nil, fmt.Errorf("dist: rendezvous: rank 0 cannot listen on %s: %w", cfg.Addr, err)
	}
	lns, err := plan.listen()
	if err != nil {
		return nil, fmt.Errorf("dist: rendezvous: rank 0 cannot listen on %s (%s): %w", cfg.Addr, plan, err)
	}
	if cfg.Token == "" && plan.beyondLoopback() {
		warnNoToken(plan)
	}
	return serve(ctx, lns, cfg)
}

// timeoutCause turns a context end into ErrTimeout (deadline) or the
// context's error (cancellation).
func timeoutCause(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s", ErrTimeout, what)
	}
	return fmt.Errorf("dist: %s: %w", what, ctx.Err())
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

// introduce answers rank 0's challenge and waits for the payload.
func introduce(ctx context.Context, c *conn, cfg RendezvousConfig) (*Session, error) {
	deadline, _ := ctx.Deadline()
	_ = c.c.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.c.SetReadDeadline(time.Now()) })
	defer stop()
	typ, p, err := c.recv(uint32(challengeBytes))
	if err == nil && typ != msgChallenge {
		err = fmt.Errorf("%s answered with message %q, not a rayd rendezvous challenge", cfg.Addr, typ)
	}
	var ch challenge
	if err == nil {
		ch, err = decodeChallenge(p)
	}
	if err != nil {
		return nil, waitErr(ctx, cfg, err)
	}
	h := hello{rank: cfg.Rank, world: cfg.WorldSize, runID: cfg.RunID, nonce: newNonce()}
	if cfg.Token != "" {
		h.proof = helloProof(cfg.Token, ch.nonce, h)
	}
	if err := c.send(msgHello, h.encode()); err != nil {
		return nil, err
	}
	typ, p, err = c.recv(maxMessage)
	if err != nil {
		return nil, waitErr(ctx, cfg, err)
	}
	switch typ {
	case msgRefuse:
		_ = c.c.Close()
		return nil, fmt.Errorf("%w: rank %d: %s", ErrRefused, cfg.Rank, p)
	case msgAbort: // rank 0 gave up waiting for the others
		_ = c.c.Close()
		return nil, fmt.Errorf("%w: rank %d: rank 0 gave up: %s", ErrTimeout, cfg.Rank, p)
	case msgWelcome:
	default:
		return nil, fmt.Errorf("dist: rendezvous: unexpected message %q", typ)
	}
	if cfg.Token != "" {
		if p, err = openWelcome(cfg.Token, ch.nonce, h, p); err != nil {
			_ = c.c.Close()
			return nil, fmt.Errorf("%w: rank %d: the answer from %s does not prove the rendezvous token (rank 0 has another token or none)", ErrRefused, cfg.Rank, cfg.Addr)
		}
	}
	_ = c.c.SetReadDeadline(time.Time{})
	peers := make([]*conn, cfg.WorldSize)
	peers[0] = c
	return newSession(cfg.Rank, cfg.WorldSize, p, peers), nil
}

// waitErr turns a failed wait for rank 0 into ErrTimeout or the context's
// error when ctx has ended, and returns other errors as they are (dial
// then reconnects).
func waitErr(ctx context.Context, cfg RendezvousConfig, err error) error {
	if ctx.Err() == nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	what := fmt.Sprintf("rendezvous: rank %d connected to %s but rank 0 did not complete the rendezvous (are all %d ranks running?)",
		cfg.Rank, cfg.Addr, cfg.WorldSize)
	if e := ctx.Err(); e != nil && !errors.Is(e, context.DeadlineExceeded) {
		return fmt.Errorf("dist: %s: %w", what, e)
	}
	return fmt.Errorf("%w: %s", ErrTimeout, what)
}
