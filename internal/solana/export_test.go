package solana

import "time"

// SetTermsClock makes c's kept token terms age by now instead of the wall
// clock, so a test can pass TermsMaxAge without sleeping.
func SetTermsClock(c *Client, now func() time.Time) {
	c.terms.mu.Lock()
	defer c.terms.mu.Unlock()
	c.terms.now = now
}

// BackoffMax is the longest a failing node rests before it is probed.
const BackoffMax = backoffMax
