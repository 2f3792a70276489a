package gpumark

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/buildinfo"
)

func TestMarkerRoundTrip(t *testing.T) {
	for _, m := range []Marker{
		{Needs: 1, State: Ran, Visible: 2, Build: "0123abcd"},
		{Needs: 2, State: Deferred, Visible: 1, Build: "0123abcd+dirty"},
		{Needs: 1, State: Unavailable, Visible: 0, Build: "unknown"},
	} {
		got, err := Parse(m.String())
		require.NoError(t, err, m.String())
		assert.Equal(t, m, got)
	}
}

func TestParseRefusesWhatIsNotAMarker(t *testing.T) {
	for _, v := range []string{"", "needs=1", "needs=x state=ran build=a", "needs=0 state=ran build=a",
		"needs=1 state=maybe build=a", "needs=1 state=ran", "garbage", "needs=1 state=ran build=a visible=z"} {
		_, err := Parse(v)
		assert.ErrorIs(t, err, ErrMalformed, v)
	}
}

// attrRecorder is a testing.TB that keeps the attributes it is given.
type attrRecorder struct {
	testing.TB
	attrs map[string]string
}

func (r *attrRecorder) Helper()             {}
func (r *attrRecorder) Attr(k, v string)    { r.attrs[k] = v }
func (r *attrRecorder) Name() string        { return "TestFake" }
func (r *attrRecorder) Logf(string, ...any) {}

func TestMarkCarriesThisBinarysStamp(t *testing.T) {
	r := &attrRecorder{TB: t, attrs: map[string]string{}}
	Mark(r, 2, 1, Deferred)
	m, err := Parse(r.attrs[Key])
	require.NoError(t, err)
	assert.Equal(t, Marker{Needs: 2, State: Deferred, Visible: 1, Build: buildinfo.Get().String()}, m)
	assert.Equal(t, "deferred: needs 2 devices, 1 visible", DeferReason(2, 1))
}
