package dist

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// localAddr returns an IPv4 address of one of this host's interfaces other
// than loopback ("" when there is none).
func localAddr(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap().Is4() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
				return ip.Unmap().String()
			}
		}
	}
	return ""
}

func TestListenPlan(t *testing.T) {
	ctx := context.Background()
	type planCase struct {
		addr    string
		bindAll bool
		hosts   []string
		why     string // set for every interface
		beyond  bool   // reachable from other hosts
	}
	cases := []planCase{
		{"127.0.0.1:29500", false, []string{"127.0.0.1"}, "", false},
		{"[::1]:29500", false, []string{"::1"}, "", false},
		{"localhost:29500", false, []string{"localhost"}, "", false},
		{"127.0.0.1:29500", true, []string{""}, EnvBindAll, true},
		{":29500", false, []string{""}, "names no host", true},
		{"0.0.0.0:29500", false, []string{""}, "unspecified", true},
		{"192.0.2.7:29500", false, []string{""}, "not an address of this host", true}, // TEST-NET-1
		{"no-such-host.invalid:29500", false, []string{""}, "does not resolve", true},
	}
	if ip := localAddr(t); ip != "" {
		cases = append(cases, planCase{net.JoinHostPort(ip, "29500"), false, []string{ip}, "", true})
	} else {
		t.Log("no IPv4 interface but loopback: the local-address case is not exercised")
	}
	for _, tc := range cases {
		p, err := planListen(ctx, tc.addr, tc.bindAll)
		require.NoError(t, err, tc.addr)
		assert.Equal(t, tc.hosts, p.hosts, tc.addr)
		assert.Equal(t, "29500", p.port, tc.addr)
		assert.Contains(t, p.why, tc.why, tc.addr)
		assert.Equal(t, tc.why != "", p.all(), tc.addr)
		assert.Equal(t, tc.beyond, p.beyondLoopback(), tc.addr)
	}
	_, err := planListen(ctx, "no-port", false)
	assert.Error(t, err)
}

// TestRankZeroBindsItsOwnInterface: given an address of one of its
// interfaces, rank 0 listens there and not on loopback; with BindAll it
// listens everywhere.
func TestRankZeroBindsItsOwnInterface(t *testing.T) {
	ip := localAddr(t)
	if ip == "" {
		t.Skip("this host has no IPv4 interface but loopback")
	}
	for _, bindAll := range []bool{false, true} {
		t.Run("bind all "+strconv.FormatBool(bindAll), func(t *testing.T) {
			port, err := FreePort(ip)
			require.NoError(t, err)
			addr := net.JoinHostPort(ip, strconv.Itoa(port))
			cfg := RendezvousConfig{Addr: addr, WorldSize: 2, Token: testToken, BindAll: bindAll, Timeout: 20 * time.Second, Payload: []byte("x")}
			sess, errs := joinAll(t, cfg, []int{0, 1}, func(r int) time.Duration {
				if r == 1 { // probe the loopback side of the port while rank 0 waits
					time.Sleep(200 * time.Millisecond)
					c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
					if err == nil {
						_ = c.Close()
					}
					assert.Equal(t, bindAll, err == nil, "reachable on loopback: %v", err)
				}
				return 0
			})
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])
			assert.Equal(t, "x", string(sess[1].Payload()))
		})
	}
}

// syncBuffer is a bytes.Buffer for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWarningWithoutAToken: rank 0 warns once per process when it listens
// beyond loopback without a token, and not at all on loopback or with a
// token.
func TestWarningWithoutAToken(t *testing.T) {
	var logs syncBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	insecureWarning = sync.Once{}
	t.Cleanup(func() { insecureWarning = sync.Once{} })

	rendezvous := func(tok Token, bindAll bool) {
		cfg := RendezvousConfig{Addr: loopback(t), WorldSize: 2, Token: tok, BindAll: bindAll, Timeout: 20 * time.Second, Payload: []byte("x")}
		_, errs := joinAll(t, cfg, []int{0, 1}, noDelay)
		require.NoError(t, errs[0])
		require.NoError(t, errs[1])
	}
	rendezvous("", false)
	rendezvous(testToken, true)
	assert.Empty(t, logs.String(), "loopback, or a token: no warning")
	rendezvous("", true)
	rendezvous("", true)
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "the rendezvous has no token"), out)
	assert.Contains(t, out, EnvToken)
	assert.Contains(t, out, "every interface")
}
