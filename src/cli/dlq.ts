/** `skylark dlq list|replay`: what the event store refused, and putting it back in line. */
import { parseArgs } from 'node:util'
import type { Config } from '../config/index.js'
import { DeadLetters } from '../storage/dead-letters.js'
import { prepareDataDir } from '../storage/index.js'
import type { CliIo, Command } from './index.js'

export function dlqCommand(configFrom: (io: CliIo, dataDir: string | undefined) => Config): Command {
  return (args, io) => {
    const [sub, ...rest] = args
    const { values } = parseArgs({
      args: rest,
      options: { 'data-dir': { type: 'string' }, json: { type: 'boolean' }, id: { type: 'string' }, limit: { type: 'string' } },
    })
    const config = configFrom(io, values['data-dir'])
    const store = new DeadLetters(prepareDataDir(config.dataDir).deadLetters)
    try {
      if (sub === 'list') {
        const entries = store.list(Number(values.limit ?? 100))
        const out = { count: store.count(), results: entries }
        const text = [`${out.count} dead-lettered record(s)`]
        for (const e of entries) {
          text.push(`${e.id}\t${e.failed_at}\t${e.stage}\t${e.lane}\tattempts=${e.attempts}${e.replay_requested_at ? '\treplay pending' : ''}\t${e.error}`)
        }
        io.out((values.json ? JSON.stringify(out, null, 2) : text.join('\n')) + '\n')
        return 0
      }
      if (sub === 'replay') {
        const id = values.id === undefined ? undefined : Number(values.id)
        if (id !== undefined && !Number.isInteger(id)) throw new Error('--id must be a number')
        const marked = store.requestReplay(id)
        io.out(
          values.json
            ? JSON.stringify({ marked }) + '\n'
            : `${marked} record(s) marked for replay; the running service retries them within a second (or at its next start)\n`,
        )
        return 0
      }
      io.err('usage: skylark dlq list [--json] | skylark dlq replay [--id ID]\n')
      return 2
    } finally {
      store.close()
    }
  }
}
