/** Data written into a data folder before the server starts: projects of other organisations, persons. */
import { systemClock } from '../../src/common/clock.js'
import type { CapturedEvent } from '../../src/ingestion/types.js'
import { createManagement } from '../../src/management/index.js'
import { PersonsStage } from '../../src/persons/index.js'
import { dataPaths, openDatabase, openManagementDb } from '../../src/storage/index.js'

function withAccounts<T>(dataDir: string, fn: (accounts: ReturnType<typeof createManagement>['accounts']) => T): T {
  const db = openManagementDb(dataPaths(dataDir))
  try {
    return fn(createManagement(db, systemClock).accounts)
  } finally {
    db.close()
  }
}

/** A project in a new organisation, whose data must stay invisible to the bootstrap key. */
export function foreignProject(dataDir: string, organisation = 'Elsewhere', name = 'Hidden'): number {
  return withAccounts(dataDir, (accounts) => accounts.createProject(accounts.createOrganization(organisation).id, name).id)
}

/** Another project of an existing organisation (the bootstrap key sees it when it is the key's). */
export function projectIn(dataDir: string, organisationId: string, name: string): number {
  return withAccounts(dataDir, (accounts) => accounts.createProject(organisationId, name).id)
}

/** Runs the events through the persons stage into persons.db, as the consumer would; returns what `read` reads then. */
export function seedPersons<T = void>(dataDir: string, events: CapturedEvent[], read?: (db: ReturnType<typeof openDatabase>) => T): T {
  const db = openDatabase(dataPaths(dataDir).persons)
  try {
    const stage = new PersonsStage(db, { geoip: null, clock: systemClock })
    db.transaction(() => stage.process(events))()
    return read ? read(db) : (undefined as T)
  } finally {
    db.close()
  }
}
