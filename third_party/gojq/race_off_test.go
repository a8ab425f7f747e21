//go:build !race

package gojq_test

import "time"

// stopSlack is how long after its cancellation a query may take to stop:
// the 100 ms bound plus scheduling on a loaded machine.
const stopSlack = 500 * time.Millisecond
