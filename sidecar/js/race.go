//go:build race

package js

// raceEnabled: the race detector maps terabytes of shadow memory, so a
// worker built with it cannot run under RLIMIT_DATA.
const raceEnabled = true
