/**
 * `skylark` admin CLI. Works directly on the data folder (`--data-dir` or DATA_DIR), so it can create
 * keys and projects while the server runs: the server notices new projects through SQLite's data_version.
 */
import { existsSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { systemClock } from '../common/clock.js'
import { AppError } from '../common/errors.js'
import { ConfigError, loadConfig, type Config } from '../config/index.js'
import { runUntilSignalled } from '../main.js'
import { ALL_SCOPES, MembershipLevel, bootstrap, createManagement, type Management, type Project } from '../management/index.js'
import { openManagementDb, prepareDataDir, snapshotTo } from '../storage/index.js'
import { TargetNotEmpty, backupDataDir } from './backup.js'
import { dlqCommand } from './dlq.js'

export interface CliIo {
  out: (text: string) => void
  err: (text: string) => void
  env: Record<string, string | undefined>
}

export type Command = (args: string[], io: CliIo) => Promise<number> | number

const USAGE = `Usage: skylark <command> [options]

Commands:
  serve                                   run the service (same as npm start)
  bootstrap [--json]                      ensure a default org/project/user; print a new all-scopes personal key
  projects list [--json]
  projects create --name NAME [--organization ID] [--json]
  keys create --scopes a:read,b:write|* [--email EMAIL] [--label TEXT] [--project ID ...] [--json]
  keys list [--json]
  keys revoke ID_OR_KEY
  roles create --name NAME [--organization ID] [--access-level 21|37] [--json]
  backup --to DIR [--json]                copy the whole data folder while the service runs: a service started
                                          on DIR has every event acknowledged before the command started
  management backup --to FILE             copy management.db (projects, keys, flags, experiments…) while the
                                          service runs; another node started on the copy serves the same
  dlq list [--json]                       events the event store refused for good, with the reason
  dlq replay [--id ID]                    retry them (the running service picks them up)

Every command takes --data-dir DIR (default: DATA_DIR or ./data).
Scopes: ${ALL_SCOPES.join(' ')} *`

function configFrom(io: CliIo, dataDir: string | undefined): Config {
  return loadConfig(dataDir ? { ...io.env, DATA_DIR: dataDir } : io.env)
}

function withManagement<T>(config: Config, fn: (m: Management) => T): T {
  const paths = prepareDataDir(config.dataDir)
  const db = openManagementDb(paths)
  try {
    return fn(createManagement(db, systemClock))
  } finally {
    db.close()
  }
}

/** A project as the CLI shows it: its keys included, the secret one only here (never in the HTTP API). */
function projectSummary(p: Project) {
  return { id: p.id, name: p.name, organization_id: p.organization_id, api_token: p.api_token, secret_api_token: p.secret_api_token }
}

function print(io: CliIo, asJson: boolean | undefined, value: unknown, text: string): void {
  io.out(asJson ? JSON.stringify(value, null, 2) + '\n' : text + '\n')
}

const commands: Record<string, Command> = {
  serve: async (args, io) => {
    const { values } = parseArgs({ args, options: { 'data-dir': { type: 'string' } } })
    await runUntilSignalled(configFrom(io, values['data-dir']))
    return -1 // keep running; the process exits from its signal handler
  },

  bootstrap: (args, io) => {
    const { values } = parseArgs({ args, options: { 'data-dir': { type: 'string' }, json: { type: 'boolean' } } })
    const result = withManagement(configFrom(io, values['data-dir']), (m) => bootstrap(m.accounts, m.keys, { createKey: true }))
    const { created: _created, ...out } = result
    print(
      io,
      values.json,
      out,
      `project id: ${out.project_id}\nproject API key: ${out.project_api_key}\nproject secret API key: ${out.project_secret_api_key}\npersonal API key: ${out.personal_api_key}`,
    )
    return 0
  },

  projects: (args, io) => {
    const [sub, ...rest] = args
    const { values } = parseArgs({
      args: rest,
      options: { 'data-dir': { type: 'string' }, json: { type: 'boolean' }, name: { type: 'string' }, organization: { type: 'string' } },
    })
    return withManagement(configFrom(io, values['data-dir']), (m) => {
      if (sub === 'list') {
        const projects = m.accounts.projects().map(projectSummary)
        print(io, values.json, projects, projects.map((p) => `${p.id}\t${p.name}\t${p.api_token}\t${p.secret_api_token}`).join('\n'))
        return 0
      }
      if (sub !== 'create' || !values.name) throw new UsageError('projects create needs --name')
      const orgId = values.organization ?? m.accounts.projects()[0]?.organization_id ?? bootstrap(m.accounts, m.keys, { createKey: false }).organization_id
      if (!m.accounts.organizationById(orgId)) throw new UsageError(`no organization ${orgId}`)
      const project = m.accounts.createProject(orgId, values.name)
      print(io, values.json, projectSummary(project), `project ${project.id} created; API key ${project.api_token}; secret API key ${project.secret_api_token}`)
      return 0
    })
  },

  keys: (args, io) => {
    const [sub, ...rest] = args
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        'data-dir': { type: 'string' },
        json: { type: 'boolean' },
        scopes: { type: 'string' },
        email: { type: 'string' },
        label: { type: 'string' },
        project: { type: 'string', multiple: true },
      },
    })
    return withManagement(configFrom(io, values['data-dir']), (m) => {
      if (sub === 'list') {
        const keys = m.keys.list().map((k) => ({ id: k.id, label: k.label, mask: k.mask, scopes: k.scopes, revoked: k.revokedAt !== null }))
        print(io, values.json, keys, keys.map((k) => `${k.id}\t${k.mask}\t${k.scopes.join(',')}${k.revoked ? '\trevoked' : ''}`).join('\n'))
        return 0
      }
      if (sub === 'revoke') {
        if (!positionals[0]) throw new UsageError('keys revoke needs a key id or the key')
        const revoked = m.keys.revoke(positionals[0])
        print(io, values.json, { revoked }, revoked ? 'revoked' : 'no live key matched')
        return revoked ? 0 : 1
      }
      if (sub !== 'create' || !values.scopes) throw new UsageError('keys create needs --scopes')
      const boot = values.email ? null : bootstrap(m.accounts, m.keys, { createKey: false })
      const user = values.email ? m.accounts.userByEmail(values.email) : ownerOfProject(m, boot!.project_id)
      if (!user) throw new UsageError(`no user with e-mail ${values.email}`)
      const scopes = values.scopes.split(',').map((s) => s.trim()).filter(Boolean)
      const projects = values.project?.map(Number)
      const { key, record } = m.keys.create({ userId: user.id, label: values.label ?? 'cli', scopes, scopedTeams: projects ?? null })
      print(io, values.json, { id: record.id, personal_api_key: key, mask: record.mask, scopes: record.scopes }, key)
      return 0
    })
  },

  backup: async (args, io) => {
    const { values } = parseArgs({ args, options: { 'data-dir': { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean' } } })
    if (!values.to) throw new UsageError('backup needs --to DIR')
    const config = configFrom(io, values['data-dir'])
    let summary
    try {
      summary = await backupDataDir(config.dataDir, values.to, systemClock)
    } catch (error) {
      if (error instanceof TargetNotEmpty) throw new UsageError(error.message)
      // Its own refusals and the file system's (a full disk, a folder it may not write): the partial copy is gone.
      io.err(`backup failed: ${(error as Error).message}\n`)
      return 1
    }
    const files = Object.entries(summary.databases).map(([file, pages]) => `${file} (${pages} pages)`)
    const note = config.clickhouse.url ? '\nthe events themselves are in ClickHouse, which this does not copy' : ''
    print(
      io,
      values.json,
      { ...summary, events_in_clickhouse: Boolean(config.clickhouse.url) },
      `data folder copied to ${summary.dir}: ${files.join(', ')}, ${summary.spool.segments} spool segment(s) (${summary.spool.bytes} bytes)${note}`,
    )
    return 0
  },

  management: async (args, io) => {
    const [sub, ...rest] = args
    const { values } = parseArgs({ args: rest, options: { 'data-dir': { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean' } } })
    if (sub !== 'backup' || !values.to) throw new UsageError('management backup needs --to FILE')
    if (existsSync(values.to)) throw new UsageError(`${values.to} exists: a backup never overwrites a file`)
    const db = openManagementDb(prepareDataDir(configFrom(io, values['data-dir']).dataDir))
    try {
      // SQLite's online backup: a consistent copy while the server writes (a copy of the file could catch a
      // write half done, or miss what is still in its WAL).
      const totalPages = await snapshotTo(db, values.to)
      print(io, values.json, { file: values.to, pages: totalPages }, `management.db copied to ${values.to} (${totalPages} pages)`)
      return 0
    } finally {
      db.close()
    }
  },

  roles: (args, io) => {
    const [sub, ...rest] = args
    const { values } = parseArgs({
      args: rest,
      options: {
        'data-dir': { type: 'string' },
        json: { type: 'boolean' },
        name: { type: 'string' },
        organization: { type: 'string' },
        'access-level': { type: 'string' },
      },
    })
    if (sub !== 'create' || !values.name) throw new UsageError('roles create needs --name')
    return withManagement(configFrom(io, values['data-dir']), (m) => {
      const orgId = values.organization ?? bootstrap(m.accounts, m.keys, { createKey: false }).organization_id
      const level = values['access-level'] === undefined ? undefined : Number(values['access-level'])
      const role = m.roles.create(orgId, { name: values.name, feature_flags_access_level: level }, null)
      print(io, values.json, role, `role ${role.id} created`)
      return 0
    })
  },
}

commands.dlq = dlqCommand(configFrom)

function ownerOfProject(m: Management, projectId: number) {
  const project = m.accounts.projectById(projectId)
  if (!project) return null
  const row = m.db
    .prepare('SELECT user_id FROM organization_memberships WHERE organization_id = ? AND level >= ? ORDER BY level DESC LIMIT 1')
    .get(project.organization_id, MembershipLevel.admin) as { user_id: number } | undefined
  return row ? m.accounts.userById(row.user_id) : null
}

class UsageError extends Error {}

/** Returns the exit code, or -1 when the command keeps running (serve). */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    io.out(USAGE + '\n')
    return name ? 0 : 2
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined
  if (!command) {
    io.err(`unknown command: ${name}\n\n${USAGE}\n`)
    return 2
  }
  try {
    return await command(args, io)
  } catch (error) {
    if (error instanceof ConfigError) io.err(error.message + '\n')
    else if (error instanceof AppError) io.err(`${error.code}: ${error.detail}${error.attr ? ` (${error.attr})` : ''}\n`)
    else if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`${(error as Error).message}\n\n${USAGE}\n`)
      return 2
    } else throw error
    return 1
  }
}
