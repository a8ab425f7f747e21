//go:build race

package shell

// raceSlowdown scales the corpus's time limit: the race detector makes the
// in-process shell several times slower (a 1.2-million-line pipeline took
// over 20 s under make test's -race on 2 loaded CPUs).
const raceSlowdown = 5
