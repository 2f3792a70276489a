package dist

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"
)

// Errors of the rendezvous and of collectives. Concrete errors wrap them.
var (
	// ErrTimeout: a peer did not arrive, answer or finish within the timeout.
	ErrTimeout = errors.New("dist: timed out")
	// ErrPeerLost: a peer disconnected without saying goodbye, or aborted.
	ErrPeerLost = errors.New("dist: peer lost")
	// ErrRefused: the rendezvous refused a rank (no or another token,
	// another job, another world size, a rank already taken), or a rank
	// refused an answer that did not prove the token.
	ErrRefused = errors.New("dist: rendezvous refused")
	// ErrClosed: use of a closed Session or Comm.
	ErrClosed = errors.New("dist: use of closed session")
)

// Message types of the rendezvous protocol. Every message is one type byte,
// a big-endian uint32 length and that many payload bytes.
const (
	msgChallenge = 'C' // 0 → rank: magic, flags, rank 0's nonce
	msgHello     = 'H' // rank → 0: magic, rank, world, nonce, proof, run id
	msgWelcome   = 'P' // 0 → rank: the broadcast payload (sealed when there is a token)
	msgRefuse    = 'E' // 0 → rank: why the hello was refused
	msgGather    = 'g' // rank → 0: sequence number, data
	msgResult    = 'G' // 0 → rank: sequence number, every rank's data
	msgAbort     = 'A' // either way: the sender (or a rank it relays for) failed
	msgBye       = 'Q' // either way: orderly close
)

const (
	protocolMagic = "RAYDRDZ2"
	oldMagic      = "RAYDRDZ1" // the protocol before challenges: hello first
	nonceBytes    = 32
	proofBytes    = sha256.Size
	// MaxRunIDBytes is the longest run id the rendezvous carries.
	MaxRunIDBytes = 256
	// challengeBytes is the size of a challenge; maxHello bounds the first
	// message of a connection, read before anything about its sender is
	// known.
	challengeBytes = len(protocolMagic) + 1 + nonceBytes
	helloFixed     = len(protocolMagic) + 4 + 4 + nonceBytes + 1 + 2
	maxHello       = 512
	maxMessage     = 64 << 20
	// eagerFrame: frames up to this size are allocated at once; larger ones
	// grow with the bytes that actually arrive.
	eagerFrame = 64 << 10
	// writeTimeout bounds every protocol write, so a stuck peer cannot hold
	// a rank in a send.
	writeTimeout = 10 * time.Second
)

// flagToken in a challenge: rank 0 requires a proof of the token.
const flagToken = 1

// errFrameTooLarge: a message announced more bytes than its place in the
// protocol allows.
var errFrameTooLarge = errors.New("protocol message too large")

// errOldProtocol: the peer speaks the rendezvous protocol of an older
// rayd-go build.
var errOldProtocol = errors.New("speaks the older rendezvous protocol " + oldMagic + " (run the same rayd-go build on every rank)")

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

// recv reads one message of at most limit payload bytes.
func (c *conn) recv(limit uint32) (byte, []byte, error) { return readFrame(c.c, limit) }

// readFrame reads one message of at most limit payload bytes. A larger
// announced length fails before any of it is read; a large frame's buffer
// grows with the bytes received, so a length header alone costs nothing.
func readFrame(r io.Reader, limit uint32) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > limit {
		return 0, nil, fmt.Errorf("%w: %q of %d bytes exceeds %d", errFrameTooLarge, hdr[0], n, limit)
	}
	if n <= eagerFrame {
		p := make([]byte, n)
		if _, err := io.ReadFull(r, p); err != nil {
			return 0, nil, err
		}
		return hdr[0], p, nil
	}
	var b bytes.Buffer
	if m, err := io.CopyN(&b, r, int64(n)); err != nil {
		if errors.Is(err, io.EOF) && m < int64(n) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return hdr[0], b.Bytes(), nil
}

// challenge is rank 0's first message on every connection.
type challenge struct {
	token bool   // rank 0 requires a proof of the token
	nonce []byte // nonceBytes, fresh per connection
}

func (c challenge) encode() []byte {
	b := append([]byte(protocolMagic), 0)
	if c.token {
		b[len(protocolMagic)] = flagToken
	}
	return append(b, c.nonce...)
}

func decodeChallenge(b []byte) (challenge, error) {
	if len(b) != challengeBytes || string(b[:len(protocolMagic)]) != protocolMagic {
		return challenge{}, errors.New("not a rayd rendezvous challenge")
	}
	flags := b[len(protocolMagic)]
	if flags&^flagToken != 0 {
		return challenge{}, fmt.Errorf("rendezvous challenge with unknown flags %#x", flags)
	}
	return challenge{token: flags&flagToken != 0, nonce: slices.Clone(b[len(protocolMagic)+1:])}, nil
}

// hello is a rank's introduction: who it claims to be, its own nonce and,
// when it holds a token, its proof.
type hello struct {
	rank, world int
	runID       string
	nonce       []byte // nonceBytes
	proof       []byte // empty, or proofBytes
}

func (h hello) encode() []byte {
	b := append([]byte(protocolMagic), make([]byte, 8)...)
	binary.BigEndian.PutUint32(b[8:], uint32(int32(h.rank)))
	binary.BigEndian.PutUint32(b[12:], uint32(int32(h.world)))
	b = append(b, h.nonce...)
	b = append(b, byte(len(h.proof)))
	b = append(b, h.proof...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.runID)))
	return append(b, h.runID...)
}

func decodeHello(b []byte) (hello, error) {
	if len(b) >= len(oldMagic) && string(b[:len(oldMagic)]) == oldMagic {
		return hello{}, errOldProtocol
	}
	if len(b) < helloFixed || string(b[:len(protocolMagic)]) != protocolMagic {
		return hello{}, errors.New("not a rayd rendezvous hello")
	}
	h := hello{rank: int(int32(binary.BigEndian.Uint32(b[8:]))), world: int(int32(binary.BigEndian.Uint32(b[12:])))}
	h.nonce, b = slices.Clone(b[16:16+nonceBytes]), b[16+nonceBytes:]
	np := int(b[0])
	if np != 0 && np != proofBytes {
		return hello{}, fmt.Errorf("malformed hello: proof of %d bytes", np)
	}
	b = b[1:]
	if len(b) < np+2 {
		return hello{}, errors.New("malformed hello")
	}
	h.proof, b = slices.Clone(b[:np]), b[np:]
	nr := int(binary.BigEndian.Uint16(b))
	if nr > MaxRunIDBytes || len(b) != 2+nr {
		return hello{}, errors.New("malformed hello")
	}
	h.runID = string(b[2:])
	return h, nil
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
