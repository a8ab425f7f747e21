//go:build !race

package shell

// raceSlowdown scales the corpus's time limit; see race_test.go.
const raceSlowdown = 1
