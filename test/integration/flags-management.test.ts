// The tests in ./flags-management/, run in one process (see test/helpers/folder-suite.ts).
import { importTestFiles } from '../helpers/folder-suite.js'

await importTestFiles(new URL('./flags-management/', import.meta.url))
