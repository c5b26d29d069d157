/** Schema of dead_letters.db: events that could not be stored, kept with the error until replayed. */
import type { Migration } from '../database.js'

export const DEAD_LETTER_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
CREATE TABLE dead_letters (
  id INTEGER PRIMARY KEY,
  lane TEXT NOT NULL,
  stage TEXT NOT NULL,
  error TEXT NOT NULL,
  payload TEXT,
  failed_at TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 1,
  replay_requested_at TEXT
);
CREATE INDEX dead_letters_replay ON dead_letters(replay_requested_at) WHERE replay_requested_at IS NOT NULL;
`,
  },
]
