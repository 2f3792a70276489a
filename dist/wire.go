package dist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Errors of the rendezvous and of collectives. Concrete errors wrap them.
var (
	// ErrTimeout: a peer did not arrive, answer or finish within the timeout.
	ErrTimeout = errors.New("dist: timed out")
	// ErrPeerLost: a peer disconnected without saying goodbye, or aborted.
	ErrPeerLost = errors.New("dist: peer lost")
	// ErrRefused: the rendezvous refused a rank (another job, another world
	// size, a rank already taken).
	ErrRefused = errors.New("dist: rendezvous refused")
	// ErrClosed: use of a closed Session or Comm.
	ErrClosed = errors.New("dist: use of closed session")
)

// Message types of the rendezvous protocol. Every message is one type byte,
// a big-endian uint32 length and that many payload bytes.
const (
	msgHello   = 'H' // rank → 0: magic, rank, world, run id
	msgWelcome = 'P' // 0 → rank: the broadcast payload
	msgRefuse  = 'E' // 0 → rank: why the hello was refused
	msgGather  = 'g' // rank → 0: sequence number, data
	msgResult  = 'G' // 0 → rank: sequence number, every rank's data
	msgAbort   = 'A' // either way: the sender (or a rank it relays for) failed
	msgBye     = 'Q' // either way: orderly close
)

const (
	helloMagic = "RAYDRDZ1"
	maxMessage = 64 << 20
	// writeTimeout bounds every protocol write, so a stuck peer cannot hold
	// a rank in a send.
	writeTimeout = 10 * time.Second
)

// conn is one framed protocol connection; writes are serialised.
type conn struct {
	c  net.Conn
	mu sync.Mutex
}

func (c *conn) send(typ byte, payload []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf := make([]byte, 5+len(payload))
	buf[0] = typ
	binary.BigEndian.PutUint32(buf[1:], uint32(len(payload)))
	copy(buf[5:], payload)
	_ = c.c.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := c.c.Write(buf)
	return err
}

func (c *conn) recv() (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(c.c, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > maxMessage {
		return 0, nil, fmt.Errorf("dist: protocol message of %d bytes", n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(c.c, p); err != nil {
		return 0, nil, err
	}
	return hdr[0], p, nil
}

type hello struct {
	rank, world int
	runID       string
}

func (h hello) encode() []byte {
	b := append([]byte(helloMagic), make([]byte, 12)...)
	binary.BigEndian.PutUint32(b[8:], uint32(h.rank))
	binary.BigEndian.PutUint32(b[12:], uint32(h.world))
	binary.BigEndian.PutUint32(b[16:], uint32(len(h.runID)))
	return append(b, h.runID...)
}

func decodeHello(b []byte) (hello, error) {
	if len(b) < 20 || string(b[:8]) != helloMagic {
		return hello{}, errors.New("not a rayd rendezvous hello")
	}
	n := int(binary.BigEndian.Uint32(b[16:]))
	if len(b) != 20+n {
		return hello{}, errors.New("malformed hello")
	}
	return hello{rank: int(int32(binary.BigEndian.Uint32(b[8:]))), world: int(int32(binary.BigEndian.Uint32(b[12:]))),
		runID: string(b[20:])}, nil
}

// encodeGather is a sequence number followed by length-prefixed parts.
func encodeGather(seq uint64, parts [][]byte) []byte {
	b := binary.BigEndian.AppendUint64(nil, seq)
	for _, p := range parts {
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return b
}

func decodeGather(b []byte, want int) (uint64, [][]byte, error) {
	if len(b) < 8 {
		return 0, nil, errors.New("short gather message")
	}
	seq := binary.BigEndian.Uint64(b)
	b = b[8:]
	var parts [][]byte
	for len(b) > 0 {
		if len(b) < 4 || int(binary.BigEndian.Uint32(b)) > len(b)-4 {
			return 0, nil, errors.New("malformed gather message")
		}
		n := int(binary.BigEndian.Uint32(b))
		parts = append(parts, append([]byte(nil), b[4:4+n]...))
		b = b[4+n:]
	}
	if want >= 0 && len(parts) != want {
		return 0, nil, fmt.Errorf("gather message holds %d parts, want %d", len(parts), want)
	}
	return seq, parts, nil
}
