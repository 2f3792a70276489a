package dist

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// FuzzWireDecode feeds arbitrary bytes, as a stranger could send them, to
// the framing and to every decoder: nothing panics, no frame exceeds its
// bound, every decoded message encodes back to the same bytes, and no
// hello proves the token.
func FuzzWireDecode(f *testing.F) {
	nonce := bytes.Repeat([]byte{7}, nonceBytes)
	h := hello{rank: 1, world: 2, runID: "job", nonce: nonce}
	f.Add(frame(msgHello, h.encode()))
	h.proof = helloProof(testToken, nonce, h)
	f.Add(frame(msgHello, h.encode()))
	f.Add(frame(msgChallenge, challenge{token: true, nonce: nonce}.encode()))
	f.Add(frame(msgHello, append([]byte(oldMagic), make([]byte, 12)...)))
	f.Add(binary.BigEndian.AppendUint32([]byte{msgHello}, math.MaxUint32))
	f.Add(binary.BigEndian.AppendUint32([]byte{msgWelcome}, eagerFrame+1))
	f.Add(frame(msgGather, encodeGather(3, [][]byte{[]byte("a"), nil})))
	f.Add(append(frame(msgChallenge, challenge{nonce: nonce}.encode()), frame(msgHello, h.encode())...))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, limit := range []uint32{maxHello, maxMessage} {
			r := bytes.NewReader(data)
			for {
				_, p, err := readFrame(r, limit)
				if err != nil {
					break
				}
				if uint32(len(p)) > limit {
					t.Fatalf("frame of %d bytes past the bound %d", len(p), limit)
				}
				checkDecoders(t, p)
			}
		}
		checkDecoders(t, data)
	})
}

func checkDecoders(t *testing.T, p []byte) {
	if h, err := decodeHello(p); err == nil {
		if len(h.nonce) != nonceBytes || (len(h.proof) != 0 && len(h.proof) != proofBytes) || len(h.runID) > MaxRunIDBytes {
			t.Fatalf("decoded hello out of shape: %+v", h)
		}
		if !bytes.Equal(h.encode(), p) {
			t.Fatalf("hello does not encode back: %x", p)
		}
		if len(p) > maxHello {
			t.Fatalf("a hello of %d bytes decoded, the bound is %d", len(p), maxHello)
		}
		withToken := verifyHello(testToken, newNonce(), h) // a fresh challenge: nothing recorded can answer it
		withoutToken := verifyHello("", newNonce(), h)
		if withToken == nil || (withoutToken == nil) != (len(h.proof) == 0) {
			t.Fatalf("hello %+v: with a token %v, without %v", h, withToken, withoutToken)
		}
	}
	if c, err := decodeChallenge(p); err == nil {
		if len(c.nonce) != nonceBytes || !bytes.Equal(c.encode(), p) {
			t.Fatalf("challenge does not encode back: %x", p)
		}
	}
	if seq, parts, err := decodeGather(p, -1); err == nil {
		if !bytes.Equal(encodeGather(seq, parts), p) {
			t.Fatalf("gather does not encode back: %x", p)
		}
	}
}
