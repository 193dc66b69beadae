/**
 * The synced-write time of the disk a store is on: 2 KiB appended to a new file in `dir` and
 * `fdatasync`ed, `writes` times in a row, each timed (what `dd bs=2k oflag=dsync` does, with
 * quantiles). A synced SQLite commit costs at least one of these, so every figure of the inbox is
 * printed beside it: the same build reads 0.13 ms on one day and 0.5 ms on a busy one.
 */
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'

export function syncedWriteMs (dir, { writes = 300, bytes = 2048 } = {}) {
  const path = join(dir, `synced-write-${process.pid}.probe`)
  const block = randomBytes(bytes)
  const times = []
  const fd = openSync(path, 'w')
  try {
    for (let i = 0; i < writes; i++) {
      const started = process.hrtime.bigint()
      writeSync(fd, block, 0, bytes, i * bytes)
      fdatasyncSync(fd)
      times.push(Number(process.hrtime.bigint() - started) / 1e6)
    }
  } finally {
    closeSync(fd)
    rmSync(path, { force: true })
  }
  times.sort((a, b) => a - b)
  const at = (q) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))] * 1000) / 1000
  return { p50: at(0.5), p99: at(0.99), writes }
}
