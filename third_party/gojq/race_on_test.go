//go:build race

package gojq_test

import "time"

// stopSlack is how long after its cancellation a query may take to stop:
// the race detector makes the work between two checks several times slower.
const stopSlack = 2 * time.Second
