package sqlite

// Config is what a configuration file sets of the store: under the
// daemon's index section, the keys path, durability and anchors_in_memory.
type Config struct {
	// Path of the database file; the daemon defaults it to
	// data_dir/index.db.
	Path string `mapstructure:"path"`
	// Durability is Full (fsync at every commit) or Normal.
	Durability Durability `mapstructure:"durability"`
	// AnchorsInMemory: see Options.AnchorsInMemory.
	AnchorsInMemory bool `mapstructure:"anchors_in_memory"`
}
