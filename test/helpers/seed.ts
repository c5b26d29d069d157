/** Data written into a data folder before the server starts: projects of other organisations, persons. */
import { systemClock } from '../../src/common/clock.js'
import type { CapturedEvent } from '../../src/ingestion/types.js'
import { createManagement } from '../../src/management/index.js'
import { PersonsStage } from '../../src/persons/index.js'
import { dataPaths, openDatabase, openManagementDb } from '../../src/storage/index.js'

/** A project in a new organisation, whose data must stay invisible to the bootstrap key. */
export function foreignProject(dataDir: string, organisation = 'Elsewhere', name = 'Hidden'): number {
  const db = openManagementDb(dataPaths(dataDir))
  try {
    const accounts = createManagement(db, systemClock).accounts
    return accounts.createProject(accounts.createOrganization(organisation).id, name).id
  } finally {
    db.close()
  }
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
