// The type of settings-validator.generated.js (scripts/generate-settings-validator.mts).
import type { ValidateFunction } from 'ajv'

export declare const validateSettings: ValidateFunction
