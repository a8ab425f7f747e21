//go:build !race

package js

const raceEnabled = false
