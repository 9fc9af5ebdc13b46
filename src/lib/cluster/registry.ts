// The cluster registry: one directory per cluster on the workstation.
//
//   <dataDir>/clusters/<name>/        0700
//     cluster.yaml                    0600, validated on every read (schema.ts), written atomically
//     keys/                           0700; files 0600 (writeKey)
//     logs/                           full output of Terraform/Ansible/Packer and remote steps
//     terraform/                      Terraform working dir and state
//     journal                         steps done, for --resume (journal.ts)
//     lock                            held while a command changes the cluster (lock.ts)
//
// <dataDir> is $CITC_DATA_DIR when set, else the directory the caller passes (oclif's config.dataDir).
//
// Usage:
//   const registry = clusterRegistry(this.config.dataDir)
//   const name = registry.resolveName(flags.cluster)   // flag (or CITC_CLUSTER via oclif), or the only cluster
//   const record = registry.get(name)                  // noSuchCluster (exit 5) / InvalidInputError (exit 3)
//   await withLock(registry.paths(name).dir, 'citc finish', () => ..., {wait, timeoutMs})
//
// Everything here is synchronous: the files are small, and it keeps callers simple.
import {chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync} from 'node:fs'
import {join} from 'node:path'

import writeFileAtomic from 'write-file-atomic'
import {stringify} from 'yaml'

import {CitcError, noSuchCluster, usageError} from '../errors.js'
import {checkClusterRecord, CLUSTER_NAME, type ClusterRecord, type ClusterRecordInput, parseClusterYaml} from './schema.js'

export interface ClusterPaths {
  dir: string
  clusterYaml: string
  keysDir: string
  logsDir: string
  terraformDir: string
  journal: string
  lock: string
}

export type ScanEntry = {name: string; record: ClusterRecord; error?: undefined} | {name: string; record?: undefined; error: CitcError}

/** $CITC_DATA_DIR if set (and not empty), else `fallback` (oclif's config.dataDir). */
export function dataDir(fallback?: string): string {
  const env = process.env.CITC_DATA_DIR
  if (env) return env
  if (fallback) return fallback
  throw new Error('no data directory: set CITC_DATA_DIR or pass oclif config.dataDir')
}

const YAML_HEADER = '# Written by citc: the state of one cluster. Edit with care; it is validated on every read.\n'

function mkdirPrivate(dir: string) {
  mkdirSync(dir, {recursive: true, mode: 0o700})
  chmodSync(dir, 0o700) // mkdir's mode is masked by the umask
}

function writePrivate(file: string, content: string | Buffer) {
  writeFileAtomic.sync(file, content, {mode: 0o600})
}

export class ClusterRegistry {
  /** The data directory (after the CITC_DATA_DIR override). */
  readonly root: string
  readonly clustersDir: string

  constructor(root: string) {
    this.root = root
    this.clustersDir = join(root, 'clusters')
  }

  /** Where a cluster's files are (whether or not it exists). Refuses names that are not cluster names. */
  paths(name: string): ClusterPaths {
    if (!CLUSTER_NAME.test(name)) throw noSuchCluster(name)
    const dir = join(this.clustersDir, name)
    return {
      dir,
      clusterYaml: join(dir, 'cluster.yaml'),
      keysDir: join(dir, 'keys'),
      logsDir: join(dir, 'logs'),
      terraformDir: join(dir, 'terraform'),
      journal: join(dir, 'journal'),
      lock: join(dir, 'lock'),
    }
  }

  /** Whether the cluster has a cluster.yaml (a complete entry). */
  has(name: string): boolean {
    return CLUSTER_NAME.test(name) && existsSync(this.paths(name).clusterYaml)
  }

  /** Names of the clusters with a cluster.yaml, sorted. Directories without one are left out. */
  names(): string[] {
    let entries: string[]
    try {
      entries = readdirSync(this.clustersDir)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw error
    }
    return entries.filter((n) => this.has(n)).sort()
  }

  /** Every cluster, validated. Throws on the first invalid cluster.yaml (see scan() to list around it). */
  list(): ClusterRecord[] {
    return this.names().map((n) => this.get(n))
  }

  /** Every cluster, each with its record or the error reading it (for `citc cluster list`). */
  scan(): ScanEntry[] {
    return this.names().map((name) => {
      try {
        return {name, record: this.get(name)}
      } catch (error) {
        if (error instanceof CitcError) return {name, error}
        throw error
      }
    })
  }

  /** The cluster's record. noSuchCluster (exit 5) if unknown; InvalidInputError (exit 3) if cluster.yaml is invalid. */
  get(name: string): ClusterRecord {
    const {clusterYaml} = this.paths(name)
    let text: string
    try {
      text = readFileSync(clusterYaml, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw noSuchCluster(name)
      throw error
    }
    const record = parseClusterYaml(text, clusterYaml)
    if (record.name !== name) {
      throw new CitcError('invalidInput', `${clusterYaml}: name is "${record.name}", but the cluster's directory is "${name}"`, {
        hint: 'the name in cluster.yaml must match its directory; citc never renames a cluster',
      })
    }
    return record
  }

  /**
   * The cluster to act on: `flag` (-c, or CITC_CLUSTER through oclif) if given and known; else the only
   * cluster citc knows. None: noCluster (exit 5) with a hint to create or add one; several: usage
   * error (exit 2) listing them.
   */
  resolveName(flag?: string): string {
    if (flag !== undefined && flag !== '') {
      if (!this.has(flag)) throw noSuchCluster(flag)
      return flag
    }
    const names = this.names()
    if (names.length === 1) return names[0]
    if (names.length === 0) {
      throw new CitcError('noCluster', 'citc knows no cluster yet', {
        hint: 'make one with `citc create`, or register an existing one with `citc cluster add`',
      })
    }
    throw usageError(
      `citc knows ${names.length} clusters (${names.join(', ')}): say which one`,
      `pass -c NAME (or set CITC_CLUSTER), e.g. -c ${names[0]}`,
    )
  }

  /** Refuse a name that is not a valid cluster name, or is taken (even by an incomplete entry). */
  assertNameFree(name: string): void {
    if (!CLUSTER_NAME.test(name)) {
      throw new CitcError('invalidInput', `"${name}" is not a valid cluster name: a lower-case letter, then up to 30 of a-z, 0-9 and "-"`)
    }
    const {dir, clusterYaml} = this.paths(name)
    if (existsSync(clusterYaml)) {
      throw usageError(`a cluster named "${name}" exists already`, 'pick another name, or see it with `citc cluster list`')
    }
    if (existsSync(dir)) {
      throw usageError(
        `${dir} exists but has no cluster.yaml (left over from an interrupted create?)`,
        `look inside; if it holds nothing you need (a create interrupted before its first step leaves no cloud resources), delete it: rm -r ${dir}`,
      )
    }
  }

  /**
   * Make the cluster's directory (0700, with keys/ logs/ terraform/), then run `prepare` (e.g. to
   * copy a key into keys/ and set record.mgmt.keyPath), then validate and write cluster.yaml (0600).
   * Refuses an existing name. On any failure the new directory is removed again.
   */
  create(record: ClusterRecordInput, prepare?: (paths: ClusterPaths) => void): ClusterRecord {
    const name = record.name
    this.assertNameFree(name)
    const paths = this.paths(name)
    mkdirPrivate(this.clustersDir)
    try {
      mkdirSync(paths.dir, {mode: 0o700}) // not recursive: a concurrent create of the same name fails here
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw usageError(`a cluster named "${name}" exists already`)
      throw error
    }
    try {
      chmodSync(paths.dir, 0o700)
      mkdirPrivate(paths.keysDir)
      mkdirPrivate(paths.logsDir)
      mkdirPrivate(paths.terraformDir)
      prepare?.(paths)
      const checked = checkClusterRecord(record, paths.clusterYaml)
      this.write(paths.clusterYaml, checked)
      return checked
    } catch (error) {
      rmSync(paths.dir, {recursive: true, force: true})
      throw error
    }
  }

  /**
   * Change a cluster's record: `mutate` edits a copy (or returns a new record); the result is
   * validated and written atomically. The name cannot change. Returns the new record.
   * Call it under the cluster's lock when other commands may write too.
   */
  update(name: string, mutate: (record: ClusterRecord) => ClusterRecord | void): ClusterRecord {
    const current = this.get(name)
    const draft = structuredClone(current)
    const next = mutate(draft) ?? draft
    const {clusterYaml} = this.paths(name)
    if (next.name !== name) throw new Error(`cluster ${name}: update may not rename it (to ${next.name})`)
    const checked = checkClusterRecord(next, clusterYaml)
    this.write(clusterYaml, checked)
    return checked
  }

  /** Delete the cluster's whole directory (state, keys, logs). Only after a destroy has succeeded. */
  remove(name: string): void {
    const {dir} = this.paths(name)
    if (!existsSync(dir)) throw noSuchCluster(name)
    rmSync(dir, {recursive: true, force: true})
  }

  /** Write a secret into the cluster's keys/ (atomically, mode 0600); returns its absolute path. */
  writeKey(name: string, fileName: string, content: string | Buffer): string {
    if (!/^[A-Za-z0-9._-]+$/.test(fileName) || fileName.startsWith('.')) throw new Error(`bad key file name "${fileName}"`)
    const {keysDir} = this.paths(name)
    if (!existsSync(keysDir) || !statSync(keysDir).isDirectory()) mkdirPrivate(keysDir)
    const file = join(keysDir, fileName)
    writePrivate(file, content)
    return file
  }

  private write(file: string, record: ClusterRecord) {
    writePrivate(file, YAML_HEADER + stringify(record, {lineWidth: 0}))
  }
}

/** The registry under `dataDir(fallback)`: $CITC_DATA_DIR, else oclif's config.dataDir. */
export function clusterRegistry(fallbackDataDir?: string): ClusterRegistry {
  return new ClusterRegistry(dataDir(fallbackDataDir))
}
