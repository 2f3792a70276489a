package dist

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(good, []byte("  file-token-0123456789\n"), 0o600))
	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte("abc\n"), 0o600))
	base := map[string]string{"RANK": "0", "WORLD_SIZE": "2"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		tok  Token
		bad  string // the variable an *EnvError names
	}{
		{"none", with(), "", ""},
		{"variable", with(EnvToken, "env-token-0123456789"), "env-token-0123456789", ""},
		{"file", with(EnvTokenFile, good), "file-token-0123456789", ""},
		{"both", with(EnvToken, "env-token-0123456789", EnvTokenFile, good), "", EnvToken},
		{"short variable", with(EnvToken, "abc"), "", EnvToken},
		{"blank variable", with(EnvToken, "   "), "", EnvToken},
		{"short file", with(EnvTokenFile, short), "", EnvTokenFile},
		{"missing file", with(EnvTokenFile, filepath.Join(dir, "nope")), "", EnvTokenFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ParseEnv(lookup(tc.vars))
			if tc.bad == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.tok, e.Token)
				assert.Equal(t, tc.tok, e.Rendezvous(time.Second, nil).Token)
				return
			}
			var ee *EnvError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, tc.bad, ee.Var)
			assert.NotContains(t, err.Error(), "env-token-0123456789", "an error never shows the token")
		})
	}
}

func TestTokensAreNeverPrinted(t *testing.T) {
	tok := NewToken()
	require.GreaterOrEqual(t, len(tok), MinTokenBytes)
	assert.NotEqual(t, tok, NewToken(), "every token is fresh")
	env := Env{Rank: 1, WorldSize: 2, Token: tok}
	cfg := env.Rendezvous(time.Second, nil)
	for _, s := range []string{fmt.Sprint(env), fmt.Sprintf("%+v", env), fmt.Sprintf("%#v", env), fmt.Sprintf("%v", cfg),
		fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%s %q %x", tok, tok, tok)} {
		assert.NotContains(t, s, string(tok))
	}
	assert.Contains(t, fmt.Sprintf("%+v", cfg), "[redacted]")
	assert.Equal(t, "", Token("").String())
}

func TestJoinRejectsWeakConfigurations(t *testing.T) {
	_, err := Join(context.Background(), RendezvousConfig{Addr: loopback(t), WorldSize: 2, Token: "short"})
	assert.ErrorContains(t, err, "at least 16")
	_, err = Join(context.Background(), RendezvousConfig{Addr: loopback(t), WorldSize: 2, RunID: string(make([]byte, MaxRunIDBytes+1))})
	assert.ErrorContains(t, err, "run id of 257 bytes")
	_, err = Launch(context.Background(), LaunchConfig{NProcs: 1, Program: "true", Token: "short"})
	assert.ErrorContains(t, err, "at least 16")
}

// fakeRankZero answers one rank the way a process that does not hold the
// token could: challenge, hello, a welcome with made-up proof bytes.
func fakeRankZero(t *testing.T, requireToken bool, proof []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		c := &conn{c: nc}
		if c.send(msgChallenge, challenge{token: requireToken, nonce: newNonce()}.encode()) != nil {
			return
		}
		if _, _, err := c.recv(maxHello); err != nil {
			return
		}
		_ = c.send(msgWelcome, append([]byte("forged-nccl-id"), proof...))
		_, _, _ = c.recv(maxMessage) // until the rank hangs up
	}()
	return ln.Addr().String()
}

// TestRankRefusesAnUnprovenPayload: a rank with a token accepts a payload
// only from a rank 0 that proves the same token.
func TestRankRefusesAnUnprovenPayload(t *testing.T) {
	for name, tc := range map[string]struct {
		requireToken bool
		proof        []byte
	}{
		"forged proof": {true, newNonce()},
		"no proof":     {true, nil},
		"no token":     {false, nil},
	} {
		t.Run(name, func(t *testing.T) {
			addr := fakeRankZero(t, tc.requireToken, tc.proof)
			_, err := Join(context.Background(), RendezvousConfig{Addr: addr, Rank: 1, WorldSize: 2, Token: testToken, Timeout: 10 * time.Second})
			require.ErrorIs(t, err, ErrRefused)
			assert.Contains(t, err.Error(), "does not prove the rendezvous token")
		})
	}
}

func TestProofsBindTheExchange(t *testing.T) {
	server := newNonce()
	h := hello{rank: 1, world: 2, runID: "job", nonce: newNonce()}
	p := helloProof(testToken, server, h)
	require.NoError(t, verifyHello(testToken, server, hello{rank: 1, world: 2, runID: "job", nonce: h.nonce, proof: p}))
	for name, other := range map[string]hello{
		"rank":   {rank: 2, world: 2, runID: "job", nonce: h.nonce, proof: p},
		"world":  {rank: 1, world: 3, runID: "job", nonce: h.nonce, proof: p},
		"run id": {rank: 1, world: 2, runID: "jog", nonce: h.nonce, proof: p},
		"nonce":  {rank: 1, world: 2, runID: "job", nonce: newNonce(), proof: p},
	} {
		assert.Error(t, verifyHello(testToken, server, other), name)
	}
	assert.Error(t, verifyHello(testToken, newNonce(), hello{rank: 1, world: 2, runID: "job", nonce: h.nonce, proof: p}), "another challenge")
	assert.Error(t, verifyHello("another-token-0123456789", server, hello{rank: 1, world: 2, runID: "job", nonce: h.nonce, proof: p}))
	sealed, err := sealWelcome(testToken, server, h, []byte("nccl-unique-id"))
	require.NoError(t, err)
	assert.NotContains(t, string(sealed), "nccl-unique-id", "the payload is encrypted")
	got, err := openWelcome(testToken, server, h, sealed)
	require.NoError(t, err)
	assert.Equal(t, "nccl-unique-id", string(got))
	for name, open := range map[string]func() ([]byte, error){
		"another token":     func() ([]byte, error) { return openWelcome("another-token-0123456789", server, h, sealed) },
		"another challenge": func() ([]byte, error) { return openWelcome(testToken, newNonce(), h, sealed) },
		"another rank": func() ([]byte, error) {
			return openWelcome(testToken, server, hello{rank: 2, world: 2, runID: "job", nonce: h.nonce}, sealed)
		},
		"altered": func() ([]byte, error) {
			return openWelcome(testToken, server, h, append([]byte{sealed[0] ^ 1}, sealed[1:]...))
		},
	} {
		_, err := open()
		assert.Error(t, err, name)
	}
	assert.NotEqual(t, welcomeKey(testToken, server, h), p, "the proof and the key are kept apart")
}
