package policy

// CacheRebuilds returns how many times e reloaded its hold cache from the
// store.
func CacheRebuilds(e *Engine) int64 { return e.rebuilds.Load() }

// CacheCatchUps returns how many times e caught its hold cache up with
// changes in the store instead of reloading it.
func CacheCatchUps(e *Engine) int64 { return e.catchUps.Load() }
