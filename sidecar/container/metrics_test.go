package container

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestStartsCountedColdAndWarm(t *testing.T) {
	cold0, warm0 := testutil.ToFloat64(coldStarts), testutil.ToFloat64(warmStarts)
	b, _ := newTestBackend(t, nil)
	for range 3 {
		sh(t, b, "true")
	}
	if got := testutil.ToFloat64(coldStarts) - cold0; got != 1 {
		t.Errorf("cold starts +%v, want +1", got)
	}
	if got := testutil.ToFloat64(warmStarts) - warm0; got != 2 {
		t.Errorf("warm starts +%v, want +2", got)
	}
}
