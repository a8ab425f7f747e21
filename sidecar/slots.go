package sidecar

import (
	"errors"
	"fmt"
	"sync"
)

// ErrAtCapacity is wrapped by the refusal of an exec past a bound on the
// execs run at once (a host's --max-containers): a retry later may work.
var ErrAtCapacity = errors.New("at capacity")

// Slots bound how many execs run at once across the backends sharing them
// (every workspace's container backend on a host).
type Slots struct {
	free chan struct{}
	what string
}

// NewSlots returns n slots; what names them in a refusal.
func NewSlots(n int, what string) *Slots {
	s := &Slots{free: make(chan struct{}, n), what: what}
	for range n {
		s.free <- struct{}{}
	}
	return s
}

// Take takes a slot without waiting, or fails with an error wrapping
// ErrAtCapacity. release gives it back.
func (s *Slots) Take() (release func(), err error) {
	select {
	case <-s.free:
		var once sync.Once
		return func() { once.Do(func() { s.free <- struct{}{} }) }, nil
	default:
		return nil, fmt.Errorf("%w: all %d %s are in use; retry in a moment", ErrAtCapacity, cap(s.free), s.what)
	}
}
