// The sink's own insert ceiling for the rows the /batch/ scenarios stored (read back from the store and
// repeated with fresh uuids): SQLite — one transaction of prepared INSERTs (the service's statement) into a
// fresh events.db migrated with the service's migrations; ClickHouse — one HTTP INSERT of pre-serialised
// JSONEachRow into a table created by the service's own migrateClickHouse.
export default [
  {
    name: 'sink-ceiling',
    title: 'sink insert ceiling (same rows as /batch/)',
    groups: ['batch'],
    kind: 'ceiling',
    sinks: ['sqlite', 'clickhouse'],
    rows: { sqlite: 200_000, clickhouse: 100_000 },
    repeats: 3,
  },
]
