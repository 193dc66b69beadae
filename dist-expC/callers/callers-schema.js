/**
 * The shape of the callers file (SPEC §7) as a TypeBox schema: types, names, patterns and unknown
 * fields are checked here, once, and every problem is named by its field path in the SPEC's form
 * (`callers[1].allow[0].methods[0]: "FETCH" is not an HTTP method`). What a schema cannot say (ids
 * unique, a key or sources, CIDRs, overlapping sources, decimals) is checked by callers-file.ts on
 * the typed document.
 */
import { Type } from '@sinclair/typebox';
import { Value, ValueErrorType } from '@sinclair/typebox/value';
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
export const ENVIRONMENT_NAMES = ['sandbox', 'production'];
export const INTERFACE_NAMES = ['fiat', 'crypto'];
/** `message` is what a problem with this value says; `{value}` stands for the value, as JSON. */
const says = (message, schema) => Object.assign(schema, { message });
const oneOf = (names, what) => says(`{value} is not ${what}`, Type.Union(names.map((name) => Type.Literal(name))));
const list = (item) => says('must be a list', Type.Array(item));
const object = (properties) => says('must be an object', Type.Object(properties, { additionalProperties: false }));
const pathGlobs = list(says('must be a path glob starting with "/"', Type.String({ pattern: '^/' })));
const pointer = says('must be a JSON Pointer (RFC 6901)', Type.String({ pattern: '^(/([^~]|~[01])*)*$' }));
const decimals = says('must map currency codes to amounts', Type.Record(Type.String(), says('must be a plain decimal (a number or a string like "500.00")', Type.Union([Type.Number(), Type.String()]))));
const positiveInteger = says('must be a positive integer', Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }));
const AllowRuleSchema = object({
    environments: Type.Optional(list(oneOf(ENVIRONMENT_NAMES, 'an environment (sandbox, production)'))),
    interfaces: Type.Optional(list(oneOf(INTERFACE_NAMES, 'an interface (fiat, crypto)'))),
    methods: Type.Optional(list(oneOf(METHODS, 'an HTTP method'))),
    paths: Type.Optional(pathGlobs),
});
const AmountLimitSchema = object({
    paths: Type.Optional(pathGlobs),
    amount: pointer,
    currency: pointer,
    perRequest: Type.Optional(decimals),
    perDay: Type.Optional(decimals),
});
const CallerSchema = object({
    id: says('must match [a-z0-9][a-z0-9._-]{0,63}', Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' })),
    keySha256: Type.Optional(says('must be 64 hexadecimal digits', Type.String({ pattern: '^[0-9a-fA-F]{64}$' }))),
    sources: Type.Optional(list(says('must be an IP address or CIDR', Type.String()))),
    allow: list(AllowRuleSchema),
    rateLimit: Type.Optional(object({ requests: positiveInteger, perSeconds: positiveInteger })),
    requireExternalReference: Type.Optional(says('must be true or false', Type.Boolean())),
    amountLimits: Type.Optional(list(AmountLimitSchema)),
});
export const CallersFileSchema = says('must be an object with a list of callers', Type.Object({ callers: list(CallerSchema) }, { additionalProperties: false }));
export function checkCallersSchema(document) {
    if (Value.Check(CallersFileSchema, document))
        return { ok: true, document };
    const problems = [];
    const seen = new Set();
    for (const error of Value.Errors(CallersFileSchema, document)) {
        // One problem per field: a missing field is also "not a string", a union fails every member.
        if (seen.has(error.path))
            continue;
        seen.add(error.path);
        problems.push(`${fieldPath(error.path)}: ${messageOf(error)}`);
    }
    return { ok: false, problems };
}
function messageOf(error) {
    if (error.type === ValueErrorType.ObjectAdditionalProperties)
        return 'is not a known field';
    if (error.type === ValueErrorType.ObjectRequiredProperty)
        return 'is required';
    const message = error.schema.message;
    return typeof message === 'string' ? message.replace('{value}', JSON.stringify(error.value) ?? String(error.value)) : error.message;
}
/** `/callers/1/allow/0` (a JSON Pointer) as `callers[1].allow[0]`; the document itself as `callers`. */
export function fieldPath(pointer) {
    if (pointer === '')
        return 'callers';
    return pointer.slice(1).split('/').map((raw) => raw.replaceAll('~1', '/').replaceAll('~0', '~'))
        .reduce((out, segment) => /^\d+$/.test(segment) ? `${out}[${segment}]` : out === '' ? segment : `${out}.${segment}`, '');
}
//# sourceMappingURL=callers-schema.js.map