#!/usr/bin/env node
/**
 * The process's entry: `payments-auth-proxy [command]`, `serve` by default. Only this file and
 * process/ touch `process`: they read the configuration from the environment (and `.env`), run
 * the command, and own signals (SIGTERM/SIGINT drain and exit, SIGHUP re-reads credentials).
 */
import { fatal, exitWith } from './process/exit.js'
import { runCommand } from './process/commands.js'
import { unsupportedNode } from './supported-node.js'

process.on('uncaughtException', fatal)
process.on('unhandledRejection', fatal)

// Refused in words before any command: the SQLite driver would crash an older Node mid-run.
const unsupported = unsupportedNode(process.versions.node)
if (unsupported !== null) exitWith(unsupported)
await runCommand(process.argv[2] ?? 'serve', process.argv.slice(3)).catch(fatal)
