// The tests in ./cluster/, run in one process (see test/helpers/folder-suite.ts): the other folders' suites on a
// ClickHouse cluster (ZooKeeper and two shards), a process of their own so that they share out over tap's jobs.
import { importTestFiles } from '../helpers/folder-suite.js'

await importTestFiles(new URL('./cluster/', import.meta.url))
