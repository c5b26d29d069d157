/** The machine a benchmark ran on is named precisely enough to tell one "AMD EPYC" from another. */
import t from 'tap'
import { join } from 'node:path'
import { ROOT } from '../../helpers/server.js'

const { cpuLabel } = (await import(join(ROOT, 'bench', 'lib', 'system.mjs'))) as {
  cpuLabel: (model: string, cpuinfo: string | null) => string
}

const cpuinfo = (family: number, model: number) =>
  `processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: ${family}\nmodel\t\t: ${model}\nmodel name\t: AMD EPYC\nstepping\t: 1\n`

t.test('an x86 CPU is named with its family and model numbers', async (t) => {
  t.equal(cpuLabel('AMD EPYC', cpuinfo(25, 17)), 'AMD EPYC (family 25, model 17)')
  t.equal(cpuLabel('AMD EPYC', cpuinfo(25, 1)), 'AMD EPYC (family 25, model 1)')
})

t.test('the "model name" line is not taken for the model number', async (t) => {
  t.equal(cpuLabel('AMD EPYC', 'cpu family\t: 26\nmodel name\t: AMD EPYC\n'), 'AMD EPYC')
})

t.test('without /proc/cpuinfo or its fields the model string stands alone', async (t) => {
  t.equal(cpuLabel('Apple M2', null), 'Apple M2')
  t.equal(cpuLabel('Neoverse-N1', 'processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n'), 'Neoverse-N1')
})
