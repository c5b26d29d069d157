// The tests in ./config/, run in one process (see test/helpers/folder-suite.ts).
import { importTestFiles } from '../helpers/folder-suite.js'

await importTestFiles(new URL('./config/', import.meta.url))
