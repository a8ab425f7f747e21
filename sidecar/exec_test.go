package sidecar

import (
	"reflect"
	"testing"
	"time"
)

// numbered is a Limits with field i set to base+i, so a field that Or or
// Within forgot shows up as a wrong value.
func numbered(base int64) Limits {
	var l Limits
	v := reflect.ValueOf(&l).Elem()
	for i := range v.NumField() {
		v.Field(i).SetInt(base + int64(i))
	}
	return l
}

func TestLimitsCombine(t *testing.T) {
	small, large := numbered(10), numbered(1000)
	tests := []struct {
		name string
		got  Limits
		want Limits
	}{
		{"Or fills every zero field", Limits{}.Or(large), large},
		{"Or keeps what is set", small.Or(large), small},
		{"Or treats negative as unset", Limits{Timeout: -time.Second, MaxProcs: -1}.Or(small),
			Limits{Timeout: small.Timeout, MaxProcs: small.MaxProcs}.Or(small)},
		{"Within lowers every field to the ceiling", large.Within(small), small},
		{"Within keeps what is below", small.Within(large), small},
		{"Within fills zeros from the ceiling", Limits{}.Within(small), small},
		{"Within mixes per field", Limits{Timeout: time.Hour, MaxProcs: 1}.Within(DefaultLimits),
			Limits{Timeout: DefaultLimits.Timeout, MaxProcs: 1}.Or(DefaultLimits)},
		{"a request's timeout is free without an operator's", Request{Timeout: time.Hour}.LimitsWithin(Limits{MaxProcs: 1}),
			Limits{Timeout: time.Hour, MaxProcs: 1}.Or(DefaultLimits)},
		{"an operator's timeout bounds a request's", Request{Timeout: time.Hour}.LimitsWithin(Limits{Timeout: time.Second}),
			Limits{Timeout: time.Second}.Or(DefaultLimits)},
		{"a request's shorter timeout wins", Request{Timeout: time.Millisecond}.LimitsWithin(Limits{Timeout: time.Second}),
			Limits{Timeout: time.Millisecond}.Or(DefaultLimits)},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
}
