package sqlite

// SchemaVersion is the schema version this code writes: an index opened
// by it is migrated up to this version, and one of a later version is
// refused (index.ErrSchemaVersion).
var SchemaVersion = len(migrations)
