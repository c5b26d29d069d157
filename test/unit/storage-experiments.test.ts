// The experiment tests in ./storage/, a process of their own: with the others (storage.test.ts), the folder is
// tap's last and took ≈50 s alone at the end of a run; as two files it shares the two jobs.
import { importTestFiles } from '../helpers/folder-suite.js'

await importTestFiles(new URL('./storage/', import.meta.url), (name) => name.startsWith('experiment-'))
