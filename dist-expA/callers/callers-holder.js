/**
 * The callers in force, and their reload (SPEC §7): SIGHUP re-reads the file at once, a change of
 * the file within 2 s (debounced, as editors write in several steps). An invalid file is refused
 * with an error log naming each problem, and the old callers keep working.
 */
import { watch } from 'node:fs';
import { dirname, basename } from 'node:path';
import { ConfigError } from '../config/load-config.js';
import { readCallersFile } from './callers-file.js';
import { indexCallers } from './judge-caller.js';
export const RELOAD_DEBOUNCE_MS = 300;
/** Throws ConfigError (one problem per line, naming the file and field) when the file is invalid at start. */
export function createCallersHolder(file, log) {
    const first = readCallersFile(file);
    if (!first.ok)
        throw new ConfigError(first.problems);
    let index = indexCallers(first.callers);
    const reload = (trigger) => {
        const load = readCallersFile(file);
        if (!load.ok) {
            log.error({ trigger, problems: load.problems }, 'callers file refused; the previous callers stay in force');
            return false;
        }
        index = indexCallers(load.callers);
        log.info({ trigger, callers: load.callers.length }, 'callers file reloaded');
        return true;
    };
    return {
        current: () => index,
        reload,
        watch() {
            let timer = null;
            // The directory is watched, not the file: an editor or a ConfigMap update replaces the file.
            let watcher = null;
            try {
                watcher = watch(dirname(file), (_event, name) => {
                    if (name !== null && name !== basename(file) && !name.startsWith('..'))
                        return;
                    if (timer !== null)
                        clearTimeout(timer);
                    timer = setTimeout(() => { timer = null; reload('callers file changed'); }, RELOAD_DEBOUNCE_MS);
                });
            }
            catch {
                log.warn({ file: basename(file) }, 'callers file cannot be watched; reload with SIGHUP');
            }
            return () => {
                if (timer !== null)
                    clearTimeout(timer);
                watcher?.close();
            };
        },
    };
}
//# sourceMappingURL=callers-holder.js.map