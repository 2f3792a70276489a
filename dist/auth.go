package dist

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
)

// Environment variables of the rendezvous secret.
const (
	// EnvToken holds the job's rendezvous token (the same on every rank).
	EnvToken = "RAYD_RENDEZVOUS_TOKEN"
	// EnvTokenFile names a file holding the token instead (surrounding
	// white space is ignored), so that the secret stays out of the process
	// environment.
	EnvTokenFile = "RAYD_RENDEZVOUS_TOKEN_FILE"
)

// MinTokenBytes is the shortest token Join and ParseEnv accept.
const MinTokenBytes = 16

// Token is a job's shared rendezvous secret. Every rank proves that it
// holds it (an HMAC-SHA-256 answer to a fresh challenge from rank 0), and
// rank 0 proves it back by sealing the payload under a key derived from it
// and both nonces, so the token never crosses the wire, a recorded
// exchange cannot be replayed, and the payload travels encrypted. String and GoString
// hide the value: printing an Env or a RendezvousConfig never reveals it.
type Token string

// NewToken returns a fresh random token (128 bits from crypto/rand), what
// `rayd launch` gives its ranks.
func NewToken() Token { return Token(rand.Text()) }

// String returns "[redacted]" (or "" for no token).
func (t Token) String() string {
	if t == "" {
		return ""
	}
	return "[redacted]"
}

// GoString is String, for %#v.
func (t Token) GoString() string { return `"` + t.String() + `"` }

// check reports a token too short to be a secret.
func (t Token) check() error {
	if t != "" && len(t) < MinTokenBytes {
		return fmt.Errorf("dist: rendezvous token of %d bytes: use at least %d random bytes (e.g. openssl rand -hex 16)", len(t), MinTokenBytes)
	}
	return nil
}

// tokenFromEnv reads RAYD_RENDEZVOUS_TOKEN or the file named by
// RAYD_RENDEZVOUS_TOKEN_FILE ("" when neither is set). Setting both is an
// error, and so is a token shorter than MinTokenBytes. The value itself is
// never part of an error.
func tokenFromEnv(getenv func(string) string) (Token, error) {
	val, file := getenv(EnvToken), strings.TrimSpace(getenv(EnvTokenFile))
	var tok Token
	switch {
	case val != "" && file != "":
		return "", &EnvError{Var: EnvToken, Reason: "set only one of " + EnvToken + " and " + EnvTokenFile}
	case val != "":
		tok = Token(strings.TrimSpace(val))
		if err := tok.check(); err != nil || tok == "" {
			return "", &EnvError{Var: EnvToken, Reason: fmt.Sprintf("need at least %d bytes", MinTokenBytes)}
		}
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", &EnvError{Var: EnvTokenFile, Value: file, Reason: err.Error()}
		}
		tok = Token(strings.TrimSpace(string(b)))
		if err := tok.check(); err != nil || tok == "" {
			return "", &EnvError{Var: EnvTokenFile, Value: file, Reason: fmt.Sprintf("the token needs at least %d bytes", MinTokenBytes)}
		}
	}
	return tok, nil
}

// Labels that keep the two proofs (and any future protocol) apart.
const (
	helloLabel   = "rayd rendezvous v2 hello\x00"
	welcomeLabel = "rayd rendezvous v2 welcome\x00"
)

// helloProof is a rank's answer to rank 0's challenge: HMAC-SHA-256 under
// the token over rank 0's nonce, the rank's nonce, rank, world size and
// run id.
func helloProof(tok Token, serverNonce []byte, h hello) []byte {
	m := hmac.New(sha256.New, []byte(tok))
	m.Write([]byte(helloLabel))
	m.Write(serverNonce)
	m.Write(h.nonce)
	m.Write(h.fields())
	return m.Sum(nil)
}

// welcomeKey is the key of one exchange's welcome: HMAC-SHA-256 under the
// token over both nonces and the rank's claims, so it is fresh for every
// connection.
func welcomeKey(tok Token, serverNonce []byte, h hello) []byte {
	m := hmac.New(sha256.New, []byte(tok))
	m.Write([]byte(welcomeLabel))
	m.Write(serverNonce)
	m.Write(h.nonce)
	m.Write(h.fields())
	return m.Sum(nil)
}

// welcomeAEAD is AES-256-GCM under the exchange's welcome key. The key is
// used for one message only, so the all-zero GCM nonce is safe.
func welcomeAEAD(tok Token, serverNonce []byte, h hello) (cipher.AEAD, error) {
	block, err := aes.NewCipher(welcomeKey(tok, serverNonce, h))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealWelcome encrypts and authenticates rank 0's payload for one rank:
// the rank learns that rank 0 holds the token, and nobody on the wire
// learns the payload.
func sealWelcome(tok Token, serverNonce []byte, h hello, payload []byte) ([]byte, error) {
	aead, err := welcomeAEAD(tok, serverNonce, h)
	if err != nil {
		return nil, err
	}
	return aead.Seal(nil, make([]byte, aead.NonceSize()), payload, nil), nil
}

// openWelcome is the rank's side of sealWelcome; it fails unless the
// sender held the token and answered this very exchange.
func openWelcome(tok Token, serverNonce []byte, h hello, sealed []byte) ([]byte, error) {
	aead, err := welcomeAEAD(tok, serverNonce, h)
	if err != nil {
		return nil, err
	}
	return aead.Open(nil, make([]byte, aead.NonceSize()), sealed, nil)
}

// fields is the hello's claims as the proofs cover them.
func (h hello) fields() []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(int32(h.rank)))
	b = binary.BigEndian.AppendUint32(b, uint32(int32(h.world)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(h.runID)))
	return append(b, h.runID...)
}

// verifyHello checks a hello's proof against rank 0's token and the
// challenge nonce of its connection. The reasons say what is wrong without
// revealing anything about the token.
func verifyHello(tok Token, serverNonce []byte, h hello) error {
	switch {
	case tok == "" && len(h.proof) > 0:
		return fmt.Errorf("rank %d holds a rendezvous token but rank 0 has none (set %s on every rank or on none)", h.rank, EnvToken)
	case tok == "":
		return nil
	case len(h.proof) == 0:
		return fmt.Errorf("rank %d has no rendezvous token but rank 0 requires one (set %s on every rank)", h.rank, EnvToken)
	case !hmac.Equal(h.proof, helloProof(tok, serverNonce, h)):
		return fmt.Errorf("claim of rank %d does not prove the rendezvous token (another token, or a replayed hello)", h.rank)
	}
	return nil
}

// newNonce returns nonceBytes fresh random bytes.
func newNonce() []byte {
	b := make([]byte, nonceBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand since Go 1.24)
	return b
}
