// The tests in ./pool/, run in one process (see test/helpers/folder-suite.ts).
import { importTestFiles } from '../helpers/folder-suite.js'

await importTestFiles(new URL('./pool/', import.meta.url))
