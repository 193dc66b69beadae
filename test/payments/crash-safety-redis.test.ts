/** SPEC §12 crash safety with Redis (the scenarios: crash-scenarios.ts). */
import t from 'tap'
import { crashScenarios } from './crash-scenarios.js'

crashScenarios(t, 'redis')
