import t from 'tap'
import { Admission, Ticket } from '../../../src/http/admission.js'
import { AppError } from '../../../src/common/errors.js'

const limits = { maxInflight: 1_000_000, maxInflightPerClient: 2, maxBodyBytes: 1024 }

function admitted(a: Admission, client: string): Ticket {
  const ticket = a.admit(client, 0)
  if (ticket instanceof AppError) throw new Error(`${client} refused: ${ticket.code}`)
  return ticket
}

t.test('a client back to nothing in flight gets its whole per-client allowance again, time after time', async (t) => {
  const a = new Admission(limits)
  for (let round = 0; round < 5; round++) {
    const held = [admitted(a, '10.0.0.1'), admitted(a, '10.0.0.1')]
    const refused = a.admit('10.0.0.1', 0)
    t.ok(refused instanceof AppError && refused.code === 'throttled', `round ${round}: the third is throttled`)
    for (const ticket of held) ticket.release()
    held[0].release() // idempotent: a second release gives nothing back twice
  }
  t.equal(a.inflight, 0)
  admitted(a, '10.0.0.1')
  admitted(a, '10.0.0.1')
  t.equal(a.inflight, 2)
})

t.test('idle clients are dropped in bulk, so many addresses seen once do not pile up', async (t) => {
  const a = new Admission(limits)
  const busy = [admitted(a, 'busy'), admitted(a, 'busy')]
  let most = 0
  for (let i = 0; i < 50_000; i++) {
    admitted(a, `client-${i}`).release()
    most = Math.max(most, a.trackedClients)
  }
  t.ok(most <= 20_000, `at most ${most} clients tracked at once`)
  t.ok(a.trackedClients < 20_000)
  // the busy client survived every sweep with its count: it is still at its limit
  const refused = a.admit('busy', 0)
  t.ok(refused instanceof AppError && refused.code === 'throttled')
  for (const ticket of busy) ticket.release()
  admitted(a, 'busy')
  t.equal(a.inflight, 1)
})
