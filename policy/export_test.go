package policy

// CacheRebuilds returns how many times e reloaded its hold cache from the
// store.
func CacheRebuilds(e *Engine) int64 { return e.rebuilds.Load() }
