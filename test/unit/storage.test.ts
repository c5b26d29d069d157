// The tests in ./storage/ but the experiment ones, run in one process (see test/helpers/folder-suite.ts).
import { importTestFiles } from '../helpers/folder-suite.js'

await importTestFiles(new URL('./storage/', import.meta.url), (name) => !name.startsWith('experiment-'))
