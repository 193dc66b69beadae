/**
 * Preloaded into every test process (package.json, tap's node-arg): on Node 20, where a worker
 * thread does not share the main thread's module hooks, this registers tsx in each worker thread,
 * so that a SQLite thread (src/sqlite/sqlite-thread.ts) can run its TypeScript program in tests.
 * Node 22 and 24 share the hooks with workers, and tsx registers itself there.
 */
import { isMainThread } from 'node:worker_threads'

if (!isMainThread && Number(process.versions.node.split('.')[0]) < 22) {
  const { register } = await import('tsx/esm/api')
  register()
}
