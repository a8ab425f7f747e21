package sqlstore

// SchemaV1 is the first schema, to build stores as older programs made them.
var SchemaV1 = migrations[0].sql
