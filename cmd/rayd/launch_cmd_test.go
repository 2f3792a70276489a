package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/dist"
)

// TestHelperRank is one rank of the `rayd launch` tests (re-executed with
// RAYD_TEST_HELPER=rank); it is not a test on its own. It joins the
// rendezvous, gathers every rank's number and prints a fingerprint of its
// token.
func TestHelperRank(t *testing.T) {
	if os.Getenv("RAYD_TEST_HELPER") != "rank" {
		return // only meaningful as a launched rank
	}
	os.Exit(helperRank())
}

func helperRank() int {
	env, err := dist.FromEnvironment()
	if err != nil {
		fmt.Println("env:", err)
		return 2
	}
	ctx := context.Background()
	s, err := dist.Join(ctx, env.Rendezvous(60*time.Second, []byte("id")))
	if err != nil {
		fmt.Println("join:", err)
		return 1
	}
	defer s.Close()
	parts, err := s.AllGather(ctx, []byte{byte('0' + env.Rank)})
	if err != nil {
		fmt.Println("gather:", err)
		return 1
	}
	sum := sha256.Sum256([]byte(env.Token))
	fmt.Printf("rank=%d ranks=%s token=%s\n", env.Rank, bytes.Join(parts, nil), hex.EncodeToString(sum[:4]))
	return 0
}

var rankLine = regexp.MustCompile(`rank=(\d) ranks=012 token=([0-9a-f]{8})\n`)

// launchHelpers runs `rayd launch -n 3` over TestHelperRank and returns
// each rank's token fingerprint.
func launchHelpers(t *testing.T) []string {
	t.Helper()
	t.Setenv("RAYD_TEST_HELPER", "rank")
	var out, errb bytes.Buffer
	code := cmdLaunch([]string{"-n", "3", os.Args[0], "-test.run=^TestHelperRank$"}, &out, &errb)
	require.Equal(t, 0, code, out.String()+errb.String())
	m := rankLine.FindAllStringSubmatch(out.String(), -1)
	require.Len(t, m, 3, out.String())
	var prints []string
	for _, l := range m {
		prints = append(prints, l[2])
	}
	return prints
}

func TestLaunchGivesItsRanksAFreshToken(t *testing.T) {
	t.Setenv(dist.EnvToken, "")
	t.Setenv(dist.EnvTokenFile, "")
	none := sha256.Sum256(nil)
	first := launchHelpers(t)
	assert.Equal(t, []string{first[0], first[0], first[0]}, first, "every rank holds the same token")
	assert.NotEqual(t, hex.EncodeToString(none[:4]), first[0], "the ranks hold a token")
	second := launchHelpers(t)
	assert.NotEqual(t, first[0], second[0], "every launch has its own token")
}

func TestLaunchPassesAnInheritedToken(t *testing.T) {
	const tok = "operator-chosen-token-0123456789"
	t.Setenv(dist.EnvToken, tok)
	sum := sha256.Sum256([]byte(tok))
	want := hex.EncodeToString(sum[:4])
	assert.Equal(t, []string{want, want, want}, launchHelpers(t))
}

func TestChildToken(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	assert.GreaterOrEqual(t, len(childToken(env(nil))), dist.MinTokenBytes)
	assert.Empty(t, childToken(env(map[string]string{dist.EnvToken: "x"})), "an inherited token is passed on as it is")
	assert.Empty(t, childToken(env(map[string]string{dist.EnvTokenFile: "/run/secret"})))
}
