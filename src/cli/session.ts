import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../config.ts'
import { ControlStore } from '../db/control/store.ts'
import { TenantRegistry } from '../db/tenant/registry.ts'
import { UsageError } from './args.ts'
import type { Invocation } from './invocation.ts'
import { createOutput, type Output } from './output.ts'

/**
 * What one admin command runs with: the data folder it was pointed at, how to print, how to
 * name the next command in a hint, and the databases, opened on first use and closed after,
 * so a command that never needs them (or stops at a usage error) opens nothing.
 */
export class Session {
  readonly out: Output
  private controlStore?: ControlStore
  private registry?: TenantRegistry

  readonly dataDir: string

  constructor(
    readonly config: Config,
    readonly json: boolean,
    readonly invocation: Invocation,
    /** The command may make the data folder and control.db (owner create); others need them there. */
    private readonly creates: boolean,
  ) {
    this.dataDir = config.dataDir
    this.out = createOutput(json)
  }

  /** Whether the data folder holds pfin's data yet. */
  hasData(): boolean {
    return existsSync(join(this.dataDir, 'control.db'))
  }

  /** Why the data folder cannot be read: it holds no pfin data yet. */
  noData(): string {
    return `${this.dataDir} holds no pfin data: control.db is missing (check --data-dir or DATA_DIR; owner create makes it)`
  }

  /** A usage error unless the data folder holds pfin's data: a wrong --data-dir must not become a new, empty one. */
  requireData(): void {
    if (!this.hasData()) throw new UsageError(this.noData())
  }

  get control(): ControlStore {
    if (!this.controlStore) {
      if (!this.creates) this.requireData()
      this.controlStore = new ControlStore(this.dataDir)
    }
    return this.controlStore
  }

  get tenants(): TenantRegistry {
    this.registry ??= new TenantRegistry(this.dataDir, 4)
    return this.registry
  }

  close(): void {
    this.registry?.closeAll()
    this.controlStore?.close()
  }
}
