import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ownerInCredential } from './auth.ts'
import { ApiError } from './errors.ts'

/**
 * A node's side of a cluster (CONTRACT §31). The directory, owner → node and epoch, is one JSON
 * file written only by `pfin cluster` (atomically, by rename); each node reads its copy at start
 * and again whenever it changes (a `stat` every few milliseconds, no database). A node serves
 * only the owners the directory places on it: another node's owner is refused with 421, an owner
 * being moved with 503 and `Retry-After: 1`. When an owner becomes frozen, the node waits for
 * that owner's requests under way to finish and then writes an acknowledgement (the directory's
 * version) beside its data: after it, nothing of that owner changes here, so the tool may copy.
 */

export interface Placement {
  node: string
  epoch: number
  frozen?: boolean
}

export interface Directory {
  version: number
  owners: Record<string, Placement>
  /** Nodes given up by `pfin cluster failover`: nothing is placed on them. */
  lost?: string[]
}

export const ACK_FILE = 'cluster-ack.json'
/** A node's name (CLUSTER_NODE, and the cluster file's keys): lower-case letters, digits and `-`. */
export const NODE_NAME = /^[a-z][a-z0-9-]{0,30}$/
const POLL_MS = 10

export function readDirectory(path: string): Directory {
  if (!existsSync(path)) return { version: 0, owners: {} }
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as Directory
  if (typeof parsed?.version !== 'number' || typeof parsed.owners !== 'object' || parsed.owners === null || Array.isArray(parsed.owners)) {
    throw new Error(`${path} is not a pfin cluster directory`)
  }
  // Every placement whole, or none of the file: a node keeps the last good directory rather than
  // take one (edited or copied by hand) on which its acknowledgement and Litestream's list would fail.
  for (const [owner, placement] of Object.entries(parsed.owners)) {
    if (typeof placement?.node !== 'string' || typeof placement.epoch !== 'number' || (placement.frozen !== undefined && typeof placement.frozen !== 'boolean'))
      throw new Error(`${path} is not a pfin cluster directory: the placement of ${JSON.stringify(owner)} is not {"node", "epoch"[, "frozen"]}`)
  }
  if (parsed.lost !== undefined && !(Array.isArray(parsed.lost) && parsed.lost.every((node) => typeof node === 'string')))
    throw new Error(`${path} is not a pfin cluster directory: "lost" is not a list of node names`)
  return parsed
}

/** Writes the directory under a temporary name and renames it into place: a reader never sees half of one. */
export function writeDirectory(path: string, directory: Directory): void {
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(directory, null, 2)}\n`)
  renameSync(temporary, path)
}

export class ClusterNode {
  private directory: Directory = { version: 0, owners: {} }
  private seen = ''
  /** Requests under way, per owner. */
  private readonly busy = new Map<string, number>()
  /** Called with every request's end; frozen owners wait on it to drain. */
  private drained: (() => void)[] = []
  private timer: ReturnType<typeof setInterval> | undefined
  private listeners: ((directory: Directory) => void)[] = []

  constructor(
    readonly name: string,
    readonly path: string,
    private readonly dataDir: string,
    private readonly log: (message: string) => void,
  ) {
    this.reload()
    this.timer = setInterval(() => this.reload(), POLL_MS)
    this.timer.unref()
  }

  /** The owners placed on this node now (frozen ones included). */
  owners(): string[] {
    return Object.entries(this.directory.owners)
      .filter(([, placement]) => placement.node === this.name)
      .map(([owner]) => owner)
  }

  placedHere(ownerId: string): boolean {
    return this.directory.owners[ownerId]?.node === this.name
  }

  /** Placed here and not being moved: this node may write the owner's file now. */
  serves(ownerId: string): boolean {
    const placement = this.directory.owners[ownerId]
    return placement?.node === this.name && !placement.frozen
  }

  onChange(listener: (directory: Directory) => void): void {
    this.listeners.push(listener)
  }

  /**
   * Admits a request of `ownerId` (throws 421 or 503) and counts it as under way until the
   * returned function is called.
   */
  enter(ownerId: string): () => void {
    const placement = this.directory.owners[ownerId]
    if (!placement || placement.node !== this.name) {
      throw new ApiError('misdirected_request', 'This node does not serve this owner now; send the request through the cluster router')
    }
    if (placement.frozen) {
      throw new ApiError('owner_moving', 'This owner is moving to another node; retry in a second', { 'retry-after': '1' })
    }
    this.busy.set(ownerId, (this.busy.get(ownerId) ?? 0) + 1)
    let left = false
    return () => {
      if (left) return
      left = true
      const count = (this.busy.get(ownerId) ?? 1) - 1
      if (count === 0) this.busy.delete(ownerId)
      else this.busy.set(ownerId, count)
      const waiting = this.drained
      this.drained = []
      for (const wake of waiting) wake()
    }
  }

  /**
   * The gate of one request: a credential that names its owner is admitted (or refused) before
   * any database is read, so a node that lost its data still answers 421; an old key without
   * one is admitted by its owner once authenticated (`admit`). `leave` ends it, once.
   */
  gate(authorization: string | null): Gate {
    return new Gate(this, ownerInCredential(authorization))
  }

  private reload(): void {
    let stamp: string
    try {
      const stat = statSync(this.path)
      stamp = `${stat.mtimeMs}:${stat.size}:${stat.ino}`
    } catch {
      stamp = 'missing'
    }
    if (stamp === this.seen) return
    try {
      this.directory = readDirectory(this.path)
      this.seen = stamp
    } catch (error) {
      // Caught mid-write by a tool that does not rename: read again at the next poll.
      this.log(`cluster directory ${this.path} could not be read: ${String(error)}`)
      return
    }
    for (const listener of this.listeners) listener(this.directory)
    void this.acknowledge(this.directory)
  }

  /** Once no frozen owner of this node has a request under way, writes the version seen. */
  private async acknowledge(directory: Directory): Promise<void> {
    const frozen = Object.entries(directory.owners)
      .filter(([, p]) => p.node === this.name && p.frozen)
      .map(([owner]) => owner)
    while (frozen.some((owner) => this.busy.has(owner))) await new Promise<void>((wake) => this.drained.push(wake))
    if (this.directory !== directory) return
    const path = join(this.dataDir, ACK_FILE)
    const temporary = `${path}.tmp`
    writeFileSync(temporary, JSON.stringify({ node: this.name, version: directory.version }))
    renameSync(temporary, path)
  }

  close(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }
}

export class Gate {
  /** The owners this request touches, each entered once: its credential's, and a delegated subject's (§30). */
  private readonly entered = new Map<string, () => void>()

  constructor(
    private readonly node: ClusterNode,
    named: string | null,
  ) {
    if (named) this.admit(named)
  }

  /** An owner whose file the request reads or writes: refused unless placed on this node, and not moving. */
  admit(ownerId: string): void {
    if (!this.entered.has(ownerId)) this.entered.set(ownerId, this.node.enter(ownerId))
  }

  readonly leave = (): void => {
    for (const leave of this.entered.values()) leave()
    this.entered.clear()
  }
}
