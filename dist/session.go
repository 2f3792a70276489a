package dist

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Session is a rank's membership in a job after Join: the payload rank 0
// sent, and the rendezvous connections (a star around rank 0), kept open as
// a liveness channel and for small host-side collectives (AllGather,
// Barrier). When a peer disconnects without Close, or calls Abort, every
// other rank's Session fails (Failed is closed, Err says who): rank 0
// relays the failure to the ranks it still reaches. Methods are safe for
// concurrent use, but AllGather and Barrier calls must be issued in the
// same order on every rank.
type Session struct {
	rank, world int
	payload     []byte
	peers       []*conn // rank 0: one per other rank; others: peers[0] only

	failed   chan struct{}
	failOnce sync.Once
	failErr  error

	gatherMu sync.Mutex
	seq      uint64
	inbox    []chan []byte // rank 0: gather messages per rank; others: inbox[0] = results
	left     []chan struct{}

	closing   atomic.Bool // set before this rank closes its own connections
	closeOnce sync.Once
	readers   sync.WaitGroup
}

func newSession(rank, world int, payload []byte, peers []*conn) *Session {
	s := &Session{rank: rank, world: world, payload: payload, peers: peers, failed: make(chan struct{}),
		inbox: make([]chan []byte, world), left: make([]chan struct{}, world)}
	for r, c := range peers {
		if c == nil {
			continue
		}
		s.inbox[r] = make(chan []byte, 4)
		s.left[r] = make(chan struct{})
		s.readers.Add(1)
		go s.read(r, c)
	}
	return s
}

// Rank returns this rank.
func (s *Session) Rank() int { return s.rank }

// WorldSize returns the number of ranks.
func (s *Session) WorldSize() int { return s.world }

// Payload returns what rank 0 passed to Join (the same bytes on every rank).
func (s *Session) Payload() []byte { return s.payload }

// Failed is closed when the job has failed: a peer was lost or aborted, or
// this rank aborted. Err then reports why.
func (s *Session) Failed() <-chan struct{} { return s.failed }

// Err returns the reason the session failed (nil while healthy). It matches
// ErrPeerLost when a peer died or aborted.
func (s *Session) Err() error {
	select {
	case <-s.failed:
		return s.failErr
	default:
		return nil
	}
}

// fail records the first failure. On rank 0, relay forwards reason (a
// sentence naming the failed rank) to every other rank.
func (s *Session) fail(err error, reason string, relay bool) {
	s.failOnce.Do(func() {
		s.failErr = err
		close(s.failed)
		if relay && s.rank == 0 {
			for _, c := range s.peers {
				if c != nil {
					_ = c.send(msgAbort, []byte(reason))
				}
			}
		}
	})
}

// lost records the loss of a peer (reason names it) and relays it.
func (s *Session) lost(reason string) {
	s.fail(fmt.Errorf("%w: %s", ErrPeerLost, reason), reason, true)
}

// read dispatches peer r's messages until its connection ends.
func (s *Session) read(r int, c *conn) {
	defer s.readers.Done()
	for {
		typ, p, err := c.recv(maxMessage)
		if err != nil {
			select {
			case <-s.left[r]: // orderly goodbye already received
			default:
				if !s.closing.Load() {
					s.lost(fmt.Sprintf("rank %d disconnected (%v)", r, err))
				}
			}
			return
		}
		switch typ {
		case msgGather, msgResult:
			select {
			case s.inbox[r] <- p:
			case <-s.failed:
			}
		case msgAbort: // the text names the failed rank (rank 0 relays others')
			s.lost(string(p))
		case msgBye:
			close(s.left[r])
		default:
			s.lost(fmt.Sprintf("rank %d sent unexpected message %q", r, typ))
		}
	}
}

// AllGather exchanges a small byte string with every rank: the result holds
// each rank's data in rank order (the same slices on every rank). It fails
// when a peer is lost, has left (Close) or ctx ends. It is meant for
// control data (hashes, flags, timings), not bulk data.
func (s *Session) AllGather(ctx context.Context, data []byte) ([][]byte, error) {
	s.gatherMu.Lock()
	defer s.gatherMu.Unlock()
	if err := s.Err(); err != nil {
		return nil, err
	}
	s.seq++
	seq := s.seq
	if s.world == 1 {
		return [][]byte{append([]byte(nil), data...)}, nil
	}
	wait := func(r int) ([]byte, error) {
		var err error
		select {
		case p := <-s.inbox[r]:
			return p, nil
		case <-s.left[r]:
			err = fmt.Errorf("%w: rank %d has left the session", ErrPeerLost, r)
		case <-s.failed:
			err = s.failErr
		case <-ctx.Done():
			err = timeoutCause(ctx, fmt.Sprintf("rank %d: all-gather %d waiting for rank %d", s.rank, seq, r))
		}
		select { // a message that arrived just before the end still counts
		case p := <-s.inbox[r]:
			return p, nil
		default:
			return nil, err
		}
	}
	if s.rank != 0 {
		if err := s.peers[0].send(msgGather, encodeGather(seq, [][]byte{data})); err != nil {
			return nil, fmt.Errorf("%w: sending to rank 0: %v", ErrPeerLost, err)
		}
		p, err := wait(0)
		if err != nil {
			return nil, err
		}
		got, parts, err := decodeGather(p, s.world)
		if err == nil && got != seq {
			err = fmt.Errorf("all-gather %d answered as %d (ranks disagree on the call order)", seq, got)
		}
		return parts, err
	}
	parts := make([][]byte, s.world)
	parts[0] = append([]byte(nil), data...)
	for r := 1; r < s.world; r++ {
		p, err := wait(r)
		if err != nil {
			return nil, err
		}
		got, one, err := decodeGather(p, 1)
		if err == nil && got != seq {
			err = fmt.Errorf("rank %d sent all-gather %d during all-gather %d (ranks disagree on the call order)", r, got, seq)
		}
		if err != nil {
			err = fmt.Errorf("dist: %w", err)
			s.fail(err, err.Error(), true)
			return nil, err
		}
		parts[r] = one[0]
	}
	msg := encodeGather(seq, parts)
	for r := 1; r < s.world; r++ {
		if err := s.peers[r].send(msgResult, msg); err != nil {
			s.lost(fmt.Sprintf("rank %d unreachable (%v)", r, err))
			return nil, s.Err()
		}
	}
	return parts, nil
}

// Barrier returns once every rank has called it (an AllGather of nothing).
func (s *Session) Barrier(ctx context.Context) error {
	_, err := s.AllGather(ctx, nil)
	return err
}

// Abort tells the other ranks that this rank has failed (they see
// ErrPeerLost at once instead of waiting for a timeout) and closes the
// session. Idempotent; a no-op after Close.
func (s *Session) Abort(reason string) {
	reason = fmt.Sprintf("rank %d aborted: %s", s.rank, reason)
	s.fail(fmt.Errorf("dist: %s", reason), reason, false)
	s.shut(msgAbort, []byte(reason))
}

// Close leaves the session in order: peers are told goodbye, so this
// rank's departure is not reported as a loss. Call it after the last
// collective (a final Barrier makes sure every rank got there). Idempotent.
func (s *Session) Close() error {
	err := s.shut(msgBye, nil)
	s.fail(ErrClosed, "", false)
	return err
}

// shut sends a last message to every peer and closes the connections once.
func (s *Session) shut(typ byte, last []byte) error {
	var errs []error
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		for r, c := range s.peers {
			if c == nil {
				continue
			}
			err := c.send(typ, last)
			select {
			case <-s.left[r]: // it left first: a failed goodbye is expected
			default:
				errs = append(errs, err)
			}
			_ = c.c.Close()
		}
	})
	s.readers.Wait()
	return errors.Join(errs...)
}
