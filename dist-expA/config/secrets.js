/**
 * Reads the four credentials, each from its variable or from the file named by `<NAME>_FILE`
 * (Docker and Kubernetes secrets). Problems name the variable and the file, never the value.
 */
import { readFileSync } from 'node:fs';
import { SECRET_VARIABLES } from './schema.js';
// Header values cannot carry control characters; a key with a stray space is a copy-paste accident.
const SAFE_SECRET = /^[\x21-\x7e]+$/;
export function readSecrets(env) {
    const values = {};
    const files = [];
    const problems = [];
    const refused = new Set();
    const refuse = (name, problem) => {
        refused.add(name);
        problems.push(problem);
    };
    for (const name of SECRET_VARIABLES) {
        const direct = nonEmpty(env[name]);
        const file = nonEmpty(env[`${name}_FILE`]);
        if (direct !== undefined && file !== undefined) {
            refuse(name, `${name} and ${name}_FILE are both set: use one`);
            continue;
        }
        let value = direct;
        if (file !== undefined) {
            files.push(file);
            try {
                // Secret files conventionally end with a newline (echo, kubectl create secret --from-file).
                value = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
            }
            catch (err) {
                refuse(name, `${name}_FILE: cannot read ${file} (${err.code ?? 'error'})`);
                continue;
            }
            if (value === '') {
                refuse(name, `${name}_FILE: ${file} is empty`);
                continue;
            }
        }
        if (value === undefined)
            continue;
        if (!SAFE_SECRET.test(value)) {
            refuse(name, `${name}: must be printable ASCII without spaces or line breaks`);
            continue;
        }
        values[name] = value;
    }
    return { values, files, problems, refused };
}
function nonEmpty(value) {
    return typeof value === 'string' && value !== '' ? value : undefined;
}
//# sourceMappingURL=secrets.js.map