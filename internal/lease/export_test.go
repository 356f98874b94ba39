package lease

import "time"

// SetRetryPause sets Every's retry pause until the returned func is called.
func SetRetryPause(d time.Duration) (restore func()) {
	old := retryPause
	retryPause = d
	return func() { retryPause = old }
}
