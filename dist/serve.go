package dist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// Admission limits of rank 0: what a connection may cost before its hello
// has been checked.
const (
	// defaultHelloTimeout bounds the time from accepting a connection to
	// its complete hello; a rank sends it one round trip after connecting.
	defaultHelloTimeout = 10 * time.Second
	// pendingSlack is how many connections may await their hello beyond
	// one per rank.
	pendingSlack = 64
	// maxRefusals is how many refusal reasons the timeout error lists.
	maxRefusals = 8
)

// pending holds the accepted connections whose hello has not arrived,
// oldest first, at most max of them. A new connection beyond the bound
// evicts the oldest: a rank sends its hello one round trip after it
// connects, so idle or slow connections cannot hold the door shut, and only
// a flood of more than max connections per round trip could crowd a rank
// out (it then reconnects).
type pending struct {
	mu     sync.Mutex
	conns  []net.Conn
	max    int
	closed bool
}

// add registers nc (false once the rendezvous is over).
func (p *pending) add(nc net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if len(p.conns) >= p.max {
		_ = p.conns[0].Close()
		p.conns = slices.Delete(p.conns, 0, 1)
	}
	p.conns = append(p.conns, nc)
	return true
}

// remove unregisters nc; false when it was evicted or the rendezvous is
// over (nc is then closed or about to be).
func (p *pending) remove(nc net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.conns, nc)
	if i < 0 {
		return false
	}
	p.conns = slices.Delete(p.conns, i, i+1)
	return true
}

// close ends admission: every pending connection is closed.
func (p *pending) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, nc := range p.conns {
		_ = nc.Close()
	}
	p.conns = nil
}

// arrival is one connection's hello, or why it was refused.
type arrival struct {
	c     *conn // nil when refused (already answered and closed)
	h     hello
	nonce []byte // rank 0's challenge nonce on this connection
	err   error
}

// serve is rank 0's side: accept, check and answer every other rank.
func serve(ctx context.Context, lns []net.Listener, cfg RendezvousConfig) (*Session, error) {
	arrivals := make(chan arrival)
	stop := make(chan struct{})
	pend := &pending{max: cfg.WorldSize + pendingSlack}
	closeListeners := func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() { // unblock the readers of connections nobody needs now
		close(stop)
		closeListeners()
		pend.close()
	}()
	defer context.AfterFunc(ctx, closeListeners)()
	for _, ln := range lns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acceptLoop(ln, pend, stop, func(nc net.Conn) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					admit(ctx, nc, cfg, pend, arrivals, stop)
				}()
			})
		}()
	}
	peers := make([]*conn, cfg.WorldSize)
	nonces := make([][]byte, cfg.WorldSize)
	hellos := make([]hello, cfg.WorldSize)
	var refusals []string
	refused := 0
	fail := func(err error) (*Session, error) {
		closeListeners()
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
			if refused > 0 {
				what += "; refused: " + strings.Join(refusals, "; ")
				if refused > len(refusals) {
					what += fmt.Sprintf("; and %d more", refused-len(refusals))
				}
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
				if refused++; len(refusals) < maxRefusals {
					refusals = append(refusals, reason)
				}
				if a.c != nil {
					_ = a.c.send(msgRefuse, []byte(reason))
					_ = a.c.c.Close()
				}
				continue
			}
			peers[a.h.rank], nonces[a.h.rank], hellos[a.h.rank] = a.c, a.nonce, a.h
			joined++
		}
	}
	closeListeners()
	for r := 1; r < cfg.WorldSize; r++ {
		msg, err := cfg.Payload, error(nil)
		if cfg.Token != "" {
			if msg, err = sealWelcome(cfg.Token, nonces[r], hellos[r], cfg.Payload); err != nil {
				return fail(fmt.Errorf("dist: rendezvous: sealing the payload for rank %d: %w", r, err))
			}
		}
		if err := peers[r].send(msgWelcome, msg); err != nil {
			return fail(fmt.Errorf("%w: rendezvous: sending to rank %d: %v", ErrPeerLost, r, err))
		}
	}
	return newSession(0, cfg.WorldSize, slices.Clone(cfg.Payload), peers), nil
}

// acceptLoop hands every accepted connection to handle until the listener
// is closed. A transient failure (out of file descriptors under a flood of
// connections) pauses the loop instead of ending it.
func acceptLoop(ln net.Listener, pend *pending, stop <-chan struct{}, handle func(net.Conn)) {
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			select {
			case <-stop:
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if !pend.add(nc) {
			_ = nc.Close()
			return
		}
		handle(nc)
	}
}

// admit challenges one connection and reads its hello within the hello
// timeout and the size bound, then checks its proof. A connection that
// fails on the wire is closed and forgotten; one that sends a hello rank 0
// cannot accept is answered with the reason and closed. Neither takes a
// rank's place. The rest go to serve's loop.
func admit(ctx context.Context, nc net.Conn, cfg RendezvousConfig, pend *pending, arrivals chan<- arrival, stop <-chan struct{}) {
	c := &conn{c: nc}
	deadline := time.Now().Add(cfg.helloWait())
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = nc.SetReadDeadline(deadline)
	a := arrival{c: c, nonce: newNonce()}
	err := c.send(msgChallenge, challenge{token: cfg.Token != "", nonce: a.nonce}.encode())
	var typ byte
	var p []byte
	if err == nil {
		typ, p, err = c.recv(maxHello)
	}
	_ = nc.SetReadDeadline(time.Time{})
	if !pend.remove(nc) || (err != nil && !errors.Is(err, errFrameTooLarge)) {
		_ = nc.Close() // evicted, too slow, gone, or the rendezvous is over
		return
	}
	if err == nil && typ != msgHello {
		err = fmt.Errorf("message %q instead of a hello", typ)
	}
	if err == nil {
		a.h, err = decodeHello(p)
	}
	if err == nil {
		err = verifyHello(cfg.Token, a.nonce, a.h)
	}
	if err != nil {
		_ = c.send(msgRefuse, []byte(err.Error()))
		_ = nc.Close()
		a.c, a.err = nil, fmt.Errorf("connection from %s: %w", nc.RemoteAddr(), err)
	}
	select {
	case arrivals <- a:
	case <-stop:
		_ = nc.Close()
	}
}
